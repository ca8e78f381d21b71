import sys

from tritonify.main import main

sys.exit(main())
