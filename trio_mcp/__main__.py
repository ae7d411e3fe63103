"""``python -m trio_mcp`` runs the ``trio-mcp`` command line."""

import sys

from ._cli import main

sys.exit(main())
