"""``python -m asmr.cli``: the ``asmr`` command without its console script."""
import sys

from . import main

sys.exit(main())
