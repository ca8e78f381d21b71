"""`python -m tritonify.server`: the language server on stdio (same as `tritonify server`)."""
import sys

from tritonify.infra.safe_start import drop_working_folder

drop_working_folder()   # started from a workspace: none of its modules may stand in for pygls, lsprotocol, ...

from tritonify.server.app import main  # noqa: E402

sys.exit(main())
