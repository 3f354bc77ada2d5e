"""``python -m clpy``: the ``clpy`` command line."""

import sys

from clpy.cli import main

if __name__ == "__main__":
    sys.exit(main())
