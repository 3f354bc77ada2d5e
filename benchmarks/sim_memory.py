"""Peak memory of one simulator launch against its buffers (issue 14: peak RSS within 4x the
kernel's buffers plus the batch budget), each engine with checks off and on, one process per
case (``ru_maxrss`` only grows).

    python benchmarks/sim_memory.py            # every case, 2^24 elements
    python benchmarks/sim_memory.py scan on native

Growth = peak RSS after the launch minus peak RSS before it (the input filled, the output
allocated but untouched, the kernel compiled on a small launch): it counts the output's pages
the kernel writes, the runtime's copies of NumPy arguments, and the engine's own arrays.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
N = 1 << 24


def one(which: str, checks: bool, engine: str) -> str:
    sys.path.insert(0, os.path.dirname(HERE))
    import clpy
    from benchmarks.sim_bench import block_reduce, block_scan

    x = np.random.default_rng(0).random(N, dtype=np.float32)
    out = np.zeros(N if which == "scan" else N // 256, np.float32)
    k = block_scan if which == "scan" else block_reduce
    with clpy.sim.config(checks=checks, engine=engine):
        small = np.zeros(1024 if which == "scan" else 4, np.float32)
        k[(1024,), (256,)](x[:1024].copy(), small, device="sim")
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        k[(N,), (256,)](x, out, device="sim")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    bufs = (x.nbytes + out.nbytes) / 1024
    return (
        f"{which:6s} checks {'on ' if checks else 'off'} {engine:6s}: buffers {bufs / 1024:.0f} "
        f"MiB, peak RSS growth {(peak - base) / 1024:.0f} MiB = {(peak - base) / bufs:.2f}x"
    )


def main() -> int:
    if len(sys.argv) == 4:
        print(one(sys.argv[1], sys.argv[2] == "on", sys.argv[3]))
        return 0
    for which in ("scan", "reduce"):
        for checks in ("off", "on"):
            for engine in ("native", "numpy"):
                r = subprocess.run(
                    [sys.executable, __file__, which, checks, engine],
                    capture_output=True,
                    text=True,
                    check=False,
                )
                print(r.stdout.strip() or r.stderr.strip().splitlines()[-1])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
