"""`python -m tritonify.server`: the language server on stdio (same as `tritonify server`)."""
import sys

from tritonify.server.app import main

sys.exit(main())
