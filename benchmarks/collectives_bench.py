"""Collectives and atomics: simulator vs PoCL (lowered code), same process, N = 2^20.

Kernels: a 256-bin histogram with local atomics (then global atomics to merge), and a kernel
doing ``work_group_reduce_add`` + ``work_group_scan_inclusive_add`` per work-group of 256.
Each is timed end to end per launch (best of ``--repeat``, after one warm-up that also builds
the program): PoCL = buffer copies + enqueue + wait with raw pyopencl on the clpy-emitted
source; sim = ``sim.launch`` on NumPy arrays, with checks off and with every checker on.
Reported: seconds and the ratios ``pocl_s / sim_s`` (the issue's goal: sim ≥ 0.5x PoCL with
checks off, as in the simulator issue; ≥ 0.1x with checks on). Results checked
equal before timing. Writes benchmarks/results/collectives_bench.json.

    .venv/bin/python benchmarks/collectives_bench.py [--n N] [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import clpy  # noqa: E402
import clpy_sim as sim  # noqa: E402
from benchmarks.timing import best_time  # noqa: E402
from clpy import Global, float32, int32, uint32  # noqa: E402
from tests.test_collectives_util import cl_target, run_cl  # noqa: E402


@clpy.kernel
def hist256(x: Global[uint32], h: Global[int32]):
    lh = clpy.local_array(int32, 256)
    lid = clpy.get_local_id(0)
    for b in range(lid, 256, clpy.get_local_size(0)):
        lh[b] = 0
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    clpy.atomic_inc(lh, x[clpy.get_global_id(0)] & 255)
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    for b in range(lid, 256, clpy.get_local_size(0)):
        clpy.atomic_add(h, b, lh[b])


@clpy.kernel
def reduce_scan(x: Global[float32], red: Global[float32], scan: Global[float32]):
    i = clpy.get_global_id(0)
    v = x[i]
    s = clpy.work_group_reduce_add(v)
    if clpy.get_local_id(0) == 0:
        red[clpy.get_group_id(0)] = s
    scan[i] = clpy.work_group_scan_inclusive_add(v)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", default=str(Path(__file__).parent / "results" /
                                          "collectives_bench.json"))
    a = ap.parse_args()
    import pyopencl as cl

    dev = next(d for p in cl.get_platforms() for d in p.get_devices()
               if "portable" in p.name.lower())
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    tgt = cl_target(dev)
    n, ls = a.n, 256
    rng = np.random.default_rng(0)
    x_u = rng.integers(0, 1 << 30, n).astype(np.uint32)
    x_f = rng.standard_normal(n).astype(np.float32)
    rows: list[dict[str, Any]] = []

    def case(name: str, spec: Any, args: list[Any]) -> None:
        def pocl() -> list[Any]:
            return run_cl(ctx, q, spec, tgt, (n,), (ls,), *args)

        def simulate() -> list[Any]:
            local = [np.array(v, copy=True) for v in args]
            sim.launch(spec.function, (n,), (ls,), local)
            return local

        for g, w in zip(simulate(), pocl()):
            if name.startswith("hist"):
                assert np.array_equal(g, w), name
            else:
                assert np.array_equal(g, w), name  # same chunked order: bit-identical
        t_pocl = best_time(pocl, a.repeat)
        with sim.config(checks=False):
            t_sim = best_time(simulate, a.repeat)
        t_checked = best_time(simulate, a.repeat)        # every checker on (the default)
        rows.append({"kernel": name, "n": n, "local_size": ls, "pocl_s": t_pocl,
                     "sim_s": t_sim, "sim_checked_s": t_checked,
                     "sim_vs_pocl": t_pocl / t_sim, "sim_checked_vs_pocl": t_pocl / t_checked})
        print(f"{name:28s} pocl {t_pocl * 1e3:8.2f} ms   sim {t_sim * 1e3:8.2f} ms "
              f"({t_pocl / t_sim:4.2f}x PoCL)   sim+checks {t_checked * 1e3:8.2f} ms "
              f"({t_pocl / t_checked:4.2f}x)", flush=True)

    case("histogram256_local_atomics", hist256.specialize(), [x_u, np.zeros(256, np.int32)])
    case("work_group_reduce+scan_add", reduce_scan.specialize(),
         [x_f, np.zeros(n // ls, np.float32), np.zeros(n, np.float32)])
    out = {"device": dev.name, "python": platform.python_version(), "cpus": os.cpu_count(),
           "goal": "sim_vs_pocl >= 0.5 (checks off); checked >= 0.1", "results": rows}
    Path(a.json).write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {a.json}")


if __name__ == "__main__":
    main()
