"""Where a NumPy-argument launch's time goes beyond its transfers (issue 18, 16 MiB).

Times ``touch[n](x, y, n)`` (x in, y in, y out through clpy's default staging) at each size,
median of ``--reps``, next to the registered map-and-unmap of the same bytes alone (the
transfer on NVIDIA: scripts/gpu_reg_profile.py), then prints a cProfile of ``--reps`` launches
at the first size (functions by own time), so the fixed cost per launch has names.

Usage: ``python scripts/gpu_launch_profile.py --platform nvidia --mib 4,16,64``
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import time

import numpy as np

import clpy
from benchmarks.transfer_setup import touch


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--platform", default="")
    ap.add_argument("--mib", default="4,16,64")
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    dev = next(d for d in clpy.devices() if a.platform.lower() in d.name.lower())
    print("device:", dev)
    first = None
    for mib in (int(s) for s in a.mib.split(",")):
        n = (mib << 20) // 4
        x = np.ones(n, np.float32)
        y = np.zeros(n, np.float32)
        nn = np.int32(n)
        touch[n](x, y, nn, device=dev)  # build, register
        ts = []
        for _ in range(a.reps):
            t0 = time.perf_counter()
            touch[n](x, y, nn, device=dev)
            ts.append(time.perf_counter() - t0)
        med = statistics.median(ts)
        print(f"{mib} MiB: launch median {med * 1e6:.0f} us, min {min(ts) * 1e6:.0f} us")
        if first is None:
            first = (x, y, nn, n)
    assert first is not None
    x, y, nn, n = first
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(a.reps):
        touch[n](x, y, nn, device=dev)
    pr.disable()
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(25)
    print(s.getvalue())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
