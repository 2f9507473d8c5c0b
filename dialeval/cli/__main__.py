"""``python -m dialeval.cli``: the ``dialeval`` command."""

import sys

from dialeval.cli import main

sys.exit(main())
