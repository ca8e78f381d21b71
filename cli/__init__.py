"""The command line, `tritonify.cli`: `main.py` (the dispatcher behind the `tritonify` console
script and `python -m tritonify`) and `commands/<name>.py`, one sub-command per module."""
