"""``python -m judgerisk.cli ...`` (and ``torchrun -m judgerisk.cli extract ...``)."""

import sys

from judgerisk.cli.app import main

sys.exit(main())
