"""Sub-commands of `tritonify`, one module each (found by `tritonify.cli.main`)."""
