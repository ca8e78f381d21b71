"""Knowledge pages (Markdown) that diagnostics, hovers and `tritonify rule` show."""
