"""Language-server glue: every feature calls the functions the CLI calls."""
