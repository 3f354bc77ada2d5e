"""Per-launch overhead of a cached trivial kernel: clpy vs raw pyopencl, same process, PoCL.

Both sides launch the same one-line kernel (``x[i] += 1`` over a pyopencl buffer, 64
work-items, int32 scalar) and wait for it. Reported: median wall time per launch over many
launches, after warm-up, and the ratio clpy / pyopencl (goal ≤ 1.5). A second pair launches
with a NumPy array (clpy copies it in and back; the raw side does the same copies by hand).
clpy re-sends only kernel arguments that changed since the previous launch, so two more pairs
are reported: against the floor (raw arguments set once, enqueue + wait only), and with a
scalar that changes on every launch. On PoCL these two exaggerate host-side time: its worker
threads stop spinning when the next launch comes a few microseconds later, so each µs of
Python between launches costs more than a µs of wall time.

    .venv/bin/python benchmarks/launch_overhead.py [--launches N] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import clpy  # noqa: E402
from clpy import Global, float32, int32  # noqa: E402


@clpy.kernel
def bump(x: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    if i < n:
        x[i] += 1.0


def _paired(raw: Callable[[], Any], ours: Callable[[], Any], launches: int,
            rounds: int) -> tuple[float, float, float]:
    """Alternate batches of raw and clpy launches so both see the same machine load.
    Returns (median µs/launch raw, median µs/launch clpy, median of per-round ratios)."""
    for _ in range(max(20, launches // 10)):
        raw()
        ours()
    t_raw: list[float] = []
    t_ours: list[float] = []
    for _ in range(rounds):
        for fn, out in ((raw, t_raw), (ours, t_ours)):
            t0 = time.perf_counter()
            for _ in range(launches):
                fn()
            out.append((time.perf_counter() - t0) / launches * 1e6)
    ratios = [b / a for a, b in zip(t_raw, t_ours)]
    return statistics.median(t_raw), statistics.median(t_ours), statistics.median(ratios)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--launches", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=41)
    ap.add_argument("--device", default="opencl:pocl")
    ap.add_argument("--json", default=str(Path(__file__).parent / "results" /
                                           "launch_overhead.json"))
    opts = ap.parse_args()
    import pyopencl as cl

    from clpy.runtime.api import get_device

    dev = get_device(opts.device)
    ctx, queue = dev.context, dev.queue
    n = 64
    host = np.zeros(n, np.float32)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
    nn = np.int32(n)

    # The raw side builds exactly the source clpy emitted, with the same options.
    launch = bump[(n,), None]
    launch(buf, n, device=dev)
    plan = next(iter(bump.launches.plans.values()))
    prg = cl.Program(ctx, plan.source).build(options=plan.options)
    knl = prg.bump

    def raw_buffer() -> None:
        knl(queue, (n,), None, buf, nn).wait()

    # The floor: arguments set once, then only enqueue + wait (what clpy does when the
    # arguments are the same objects as last launch).
    knl2 = cl.Kernel(prg, "bump")
    knl2.set_args(buf, nn)

    def raw_enqueue_only() -> None:
        cl.enqueue_nd_range_kernel(queue, knl2, (n,), None).wait()

    flip = [np.int32(n), np.int32(n - 1)]
    count = [0]

    def raw_changing() -> None:
        count[0] += 1
        knl(queue, (n,), None, buf, flip[count[0] & 1]).wait()

    def clpy_changing() -> None:
        count[0] += 1
        bump[(n,), None](buf, n - (count[0] & 1), device=dev)

    def clpy_buffer() -> None:
        bump[(n,), None](buf, n, device=dev)

    arr = np.zeros(n, np.float32)
    mf = cl.mem_flags

    def raw_numpy() -> None:
        b = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=arr)
        knl(queue, (n,), None, b, nn).wait()
        cl.enqueue_copy(queue, arr, b)

    def clpy_numpy() -> None:
        bump[(n,), None](arr, n, device=dev)

    raw_b, clpy_b, ratio = _paired(raw_buffer, clpy_buffer, opts.launches, opts.rounds)
    raw_n, clpy_n, ratio_np = _paired(raw_numpy, clpy_numpy, opts.launches, opts.rounds)
    raw_f, clpy_f, ratio_floor = _paired(raw_enqueue_only, clpy_buffer, opts.launches,
                                         opts.rounds)
    raw_c, clpy_c, ratio_chg = _paired(raw_changing, clpy_changing, opts.launches, opts.rounds)
    results = {"raw_buffer": raw_b, "clpy_buffer": clpy_b, "raw_numpy": raw_n,
               "clpy_numpy": clpy_n, "raw_enqueue_only": raw_f, "clpy_buffer_vs_floor": clpy_f,
               "raw_changing_scalar": raw_c, "clpy_changing_scalar": clpy_c}
    report = {
        "benchmark": "launch_overhead",
        "device": str(dev),
        "launches_per_batch": opts.launches,
        "rounds": opts.rounds,
        "median_us_per_launch": {k: round(v, 2) for k, v in results.items()},
        "ratio_buffer": round(ratio, 3),
        "ratio_numpy": round(ratio_np, 3),
        "ratio_vs_enqueue_only_floor": round(ratio_floor, 3),
        "ratio_changing_scalar": round(ratio_chg, 3),
        "overhead_us_buffer": round(clpy_b - raw_b, 2),
        "goal": "ratio_buffer <= 1.5",
        "python": platform.python_version(),
        "pyopencl": cl.VERSION_TEXT,
        "cpu_count": os.cpu_count(),
    }
    for k, v in results.items():
        print(f"{k:>14}: {v:8.2f} us/launch")
    print(f"clpy / pyopencl (buffer arg): {ratio:.3f}x  (+{clpy_b - raw_b:.2f} us)")
    print(f"clpy / pyopencl (NumPy arg, copy in+out): {ratio_np:.3f}x")
    print(f"clpy / enqueue-only floor (args set once): {ratio_floor:.3f}x "
          f"(+{clpy_f - raw_f:.2f} us)")
    print(f"clpy / pyopencl (scalar changes every launch): {ratio_chg:.3f}x")
    Path(opts.json).parent.mkdir(parents=True, exist_ok=True)
    Path(opts.json).write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {opts.json}")


if __name__ == "__main__":
    main()
