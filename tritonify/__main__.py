"""`python -m tritonify`: the command line (same as the `tritonify` console script)."""
import sys

from tritonify.infra.safe_start import drop_working_folder

drop_working_folder()   # started from a workspace: none of its modules may stand in for the ones below

from tritonify.cli.main import main  # noqa: E402

sys.exit(main())
