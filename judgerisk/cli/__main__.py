"""``python -m judgerisk.cli ...`` (and ``torchrun -m judgerisk.cli extract ...``)."""

import sys

from judgerisk.cli._app import main

sys.exit(main())
