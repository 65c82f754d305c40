"""``python -m haystack_irmetrics.cli``: the same as the ``irmetrics`` console script."""

import sys

from .app import main

sys.exit(main())
