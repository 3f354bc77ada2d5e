"""The real-program suite on the simulator alone, in CPU time: for each program the least
process CPU time of ``--repeat`` whole runs (bench size, data in ``clpy.DeviceArray``s), checks
off and on, after one warm-up run of each.

Wall-clock ratios against PoCL (``python -m benchmarks.programs --mode sim``) move by 2x on a
shared 2-core machine; the least CPU time of the simulator's own process moves much less, so
this is the figure to compare two versions of the simulator with, run alternately:

    .venv/bin/python -m benchmarks.sim_programs_cpu --programs lud,nw --repeat 5 --json a.json
    PYTHONPATH=/path/to/other/tree .venv/bin/python -m benchmarks.sim_programs_cpu ...
    .venv/bin/python -m benchmarks.sim_programs_cpu --compare a.json b.json

(``/path/to/other/tree`` holding ``clpy_sim`` as a folder or link, e.g. ``git archive <rev> sim``
unpacked with ``ln -s sim clpy_sim``.) CPU time adds up every thread, so threads that only
wait cost nothing and work spread over threads counts in full.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import clpy  # noqa: E402
from benchmarks.programs import PROGRAMS, load  # noqa: E402


def measure(name: str, size: str, repeat: int, checks: bool, threads: int | None = None) -> float:
    """Least CPU seconds of ``repeat`` whole runs of program ``name`` on the simulator
    (``threads``: the simulator's thread count, default as configured)."""
    m = load(name)
    inp = m.make_inputs(size, 0)
    best = math.inf
    opts: dict[str, Any] = {} if threads is None else {"threads": threads}
    with clpy.sim.config(checks=checks, **opts):
        m.run_clpy(inp, "sim", resident=True)  # warm-up: plans, caches, allocator
        for _ in range(repeat):
            t = time.process_time()
            m.run_clpy(inp, "sim", resident=True)
            best = min(best, time.process_time() - t)
    return best


def compare(a: dict[str, Any], b: dict[str, Any]) -> str:
    """A markdown table of two runs' CPU times and b's speed-up over a (a / b)."""
    lines = [
        "| program | A off | B off | A/B | A on | B on | A/B |",
        "|---|---|---|---|---|---|---|",
    ]
    logs: dict[str, list[float]] = {"off": [], "on": []}
    for name in a["programs"]:
        if name not in b["programs"]:
            continue
        ra, rb = a["programs"][name], b["programs"][name]
        cells = [name]
        for k in ("off", "on"):
            x = ra[k] / rb[k]
            logs[k].append(math.log(x))
            cells += [f"{ra[k] * 1e3:.0f} ms", f"{rb[k] * 1e3:.0f} ms", f"{x:.2f}x"]
        lines.append("| " + " | ".join(cells) + " |")
    g = {k: math.exp(sum(v) / len(v)) if v else math.nan for k, v in logs.items()}
    lines.append(f"| **geomean** | | | **{g['off']:.2f}x** | | | **{g['on']:.2f}x** |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--programs", default=",".join(PROGRAMS))
    ap.add_argument("--size", default="bench")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--checks", choices=["off", "on", "both"], default="both")
    ap.add_argument(
        "--threads", type=int, default=None, help="simulator threads (default: as configured)"
    )
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"))
    args = ap.parse_args(argv)
    if args.compare:
        a, b = (json.loads(p.read_text()) for p in args.compare)
        print(compare(a, b))
        return 0
    import clpy_sim

    out: dict[str, Any] = {
        "simulator": str(Path(clpy_sim.__file__).parent),
        "size": args.size,
        "repeat": args.repeat,
        "threads": args.threads,
        "loadavg_start": list(os.getloadavg()),
        "programs": {},
    }
    modes = {"off": [False], "on": [True], "both": [False, True]}[args.checks]
    for name in args.programs.split(","):
        r = {
            ("on" if c else "off"): measure(name, args.size, args.repeat, c, args.threads)
            for c in modes
        }
        out["programs"][name] = r
        print(
            f"{name:12s} " + "  ".join(f"checks {k} {v * 1e3:8.1f} ms" for k, v in r.items()),
            flush=True,
        )
    out["loadavg_end"] = list(os.getloadavg())
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
