"""``python -m harness``: the ``memory-router`` command without its console script (the installer's
fallback hook command when no ``memory-router`` is on PATH)."""

import sys

from harness.cli import main

sys.exit(main())
