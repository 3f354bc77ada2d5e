"""``python -m clpy.fuzz``: the differential kernel fuzzer (clpy/fuzz/cli.py)."""

from __future__ import annotations

import sys

from clpy.fuzz.cli import main

if __name__ == "__main__":
    sys.exit(main())
