"""``python -m tracker.cli``: the ``tracker`` command."""

import sys

from tracker.cli import main

sys.exit(main())
