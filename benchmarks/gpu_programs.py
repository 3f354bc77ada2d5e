"""The real-program suite on a GPU (issue 18's ``benchmarks/gpu_programs.py``): the same as
``python -m benchmarks.programs --mode gpu``; other arguments are passed on.

    python benchmarks/gpu_programs.py --platform nvidia [--programs hotspot,nw] [--repeat 5]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.programs.__main__ import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["--mode", "gpu", *sys.argv[1:]]))
