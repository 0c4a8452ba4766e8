"""``python -m corral``: the ``corral`` command (see :mod:`corral.cli`)."""

import sys

from .cli import main

sys.exit(main())
