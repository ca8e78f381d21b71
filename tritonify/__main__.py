"""`python -m tritonify`: the command line (same as the `tritonify` console script)."""
import sys

from tritonify.cli.main import main

sys.exit(main())
