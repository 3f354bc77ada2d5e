"""``python -m benchmarks.programs --mode sim|gpu``: the real-program suite.

    python -m benchmarks.programs --mode sim                      # bench size, PoCL vs sim
    python -m benchmarks.programs --mode sim --threads all --programs hotspot,nw
    python -m benchmarks.programs --mode gpu --platform nvidia    # gpu size, clpy vs originals
    python -m benchmarks.programs --list

Results: benchmarks/results/real_programs_<host>.{json,md} (sim) and
gpu_programs_<device>.{json,md} (gpu), or ``--out DIR``. Exit status 1 if any program's result
differed from NumPy or failed to run.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from benchmarks.programs import PROGRAMS, load


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.programs",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--mode", choices=("sim", "gpu"), default="sim")
    ap.add_argument(
        "--programs", "--only", default="all", help="comma-separated names (default: all)"
    )
    ap.add_argument("--size", default=None, help="small, bench (sim default) or gpu (gpu default)")
    ap.add_argument(
        "--repeat",
        type=int,
        default=None,
        help="timed runs per measurement, median (default: 5 sim, 3 gpu)",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="opencl:portable", help="sim mode: the PoCL device")
    ap.add_argument(
        "--threads",
        default=None,
        help="sim mode: simulator threads (an int or 'all'), if clpy.sim.config has it",
    )
    ap.add_argument(
        "--engine",
        choices=("default", "compare"),
        default="default",
        help="sim mode: 'compare' times the NumPy engine and the native engine, checks off "
        "(outputs compared byte for byte), instead of the default engine with checks off and on",
    )
    ap.add_argument("--platform", default="nvidia", help="gpu mode: OpenCL platform substring")
    ap.add_argument(
        "--numpy-reps",
        type=int,
        default=1,
        help="gpu mode: timed runs of the NumPy-argument whole program (default 1, no warm-up)",
    )
    ap.add_argument(
        "--numpy-cap",
        type=float,
        default=20.0,
        help="gpu mode: stop repeating NumPy-argument runs after this many seconds",
    )
    ap.add_argument("--bw-mib", type=int, default=256, help="gpu mode: bandwidth test size")
    ap.add_argument("--out", type=Path, default=None, help="results folder")
    ap.add_argument("--tag", default=None, help="results file name part (default: host/device)")
    ap.add_argument("--list", action="store_true", help="list the programs and exit")
    a = ap.parse_args(argv)
    os.environ.setdefault("CLPY_PROGRESS", "0")  # no simulator progress bars in timings
    if a.list:
        for name in PROGRAMS:
            m = load(name)
            print(f"{name:12s} {m.KIND}\n{'':12s} {m.ORIGIN}")
        return 0
    names = PROGRAMS if a.programs == "all" else [p.strip() for p in a.programs.split(",")]
    for n in names:
        load(n)  # unknown names fail before anything runs
    if a.mode == "sim":
        from benchmarks.programs import sim_mode

        return sim_mode.run(
            names,
            a.size or "bench",
            a.repeat or 5,
            a.device,
            a.threads,
            a.seed,
            a.out,
            a.tag,
            engine=a.engine,
        )
    from benchmarks.programs import gpu_mode

    return gpu_mode.run(
        names,
        a.size or "gpu",
        a.repeat or 3,
        a.platform,
        a.seed,
        a.out,
        a.tag,
        a.numpy_cap,
        a.bw_mib << 20,
        a.numpy_reps,
    )


if __name__ == "__main__":
    sys.exit(main())
