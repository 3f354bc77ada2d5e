"""Simulator fixed costs: per launch, per IR node, per barrier, and private-array compute.

Four micro-benchmarks, each launched through the user path (``k[g, l](..., device="sim")``),
checks off and on, the least CPU time per launch over ``--repeat`` timed rounds (of 20, 5, 1
and 100 launches; CPU time of the process, so threads add up, and other processes on the machine
count less than in wall time):

- ``launch10``: one work-group of 64 running a 10-statement straight-line kernel (what a
  launch costs when there is almost no work: plan lookup, argument checks, frame set-up);
- ``barrier_loop``: one work-group of 256, a 16-trip loop with a local store, a barrier and a
  local load per trip (the per-trip cost of the barrier-in-a-loop pattern of stencils and DP);
- ``sgemm_private``: a register-tiled SGEMM (each work-item accumulates ``c[8]`` in a private
  array over K = 64), 128x128 output, work-group 16x4 (compute-bound private-array loops);
- ``many_launches``: 100 launches of 4 work-groups of 64 (``y = a*x + y``): time per launch.

    .venv/bin/python -m benchmarks.sim_overhead [--repeat 7] [--threads N] [--json PATH]
    .venv/bin/python -m benchmarks.sim_overhead --profile launch10   # cProfile, top 25
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import platform
import pstats
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
def ten_statements(x: Global[float32], y: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    a = x[i]
    b = a * 2.0
    c = b + 1.0
    d = c * c
    e = d - a
    f = e / 3.0
    g = f + b
    h = g * 0.5
    y[i] = h + float(n)


@clpy.kernel
def barrier_loop(x: Global[float32], y: Global[float32]):
    lid = clpy.get_local_id(0)
    tmp = clpy.local_array(float32, 256)
    v = x[clpy.get_global_id(0)]
    for k in range(16):
        tmp[lid] = v
        clpy.barrier()
        v = v + tmp[(lid + k + 1) % 256]
        clpy.barrier()
    y[clpy.get_global_id(0)] = v


TM = 8  # rows of C per work-item (private accumulators)


@clpy.kernel
def sgemm_private(
    a: Global[float32], b: Global[float32], c: Global[float32], n: int32, k_dim: int32
):
    col = clpy.get_global_id(0)
    row0 = clpy.get_global_id(1) * TM
    acc = clpy.private_array(float32, TM)
    for k in range(k_dim):
        bv = b[k * n + col]
        for r in range(TM):
            acc[r] += a[(row0 + r) * k_dim + k] * bv
    for r in range(TM):
        c[(row0 + r) * n + col] = acc[r]


@clpy.kernel
def axpy(x: Global[float32], y: Global[float32], a: float32):
    i = clpy.get_global_id(0)
    y[i] = a * x[i] + y[i]


def _cases() -> dict[str, tuple[Callable[[], None], Callable[[], bool], int]]:
    """name -> (one timed round, check of the last result, launches per round)."""
    rng = np.random.default_rng(0)
    x64 = rng.random(64, dtype=np.float32)
    y64 = np.zeros(64, np.float32)

    def launch10() -> None:
        for _ in range(20):
            ten_statements[(64,), (64,)](x64, y64, 3, device="sim")

    def ok10() -> bool:
        b = x64 * 2 + 1
        return bool(np.allclose(y64, ((b * b - x64) / 3 + x64 * 2) * 0.5 + 3, rtol=1e-5))

    x256 = rng.random(256, dtype=np.float32)
    y256 = np.zeros(256, np.float32)

    def bloop() -> None:
        for _ in range(5):
            barrier_loop[(256,), (256,)](x256, y256, device="sim")

    def okb() -> bool:
        v = x256.astype(np.float64)
        for k in range(16):
            v = v + np.roll(v, -(k + 1))
        return bool(np.allclose(y256, v, rtol=1e-4))

    n, kd = 128, 64
    a = rng.random((n, kd), dtype=np.float32)
    b = rng.random((kd, n), dtype=np.float32)
    c = np.zeros((n, n), np.float32)

    def gemm() -> None:
        sgemm_private[(n, n // TM), (16, 4)](a, b, c, n, kd, device="sim")

    def okg() -> bool:
        return bool(np.allclose(c, a @ b, rtol=1e-4))

    xs = rng.random(256, dtype=np.float32)
    ys = np.zeros(256, np.float32)

    def many() -> None:
        for _ in range(100):
            axpy[(256,), (64,)](xs, ys, 0.5, device="sim")

    def okm() -> bool:
        return bool(np.all(np.isfinite(ys)))

    return {
        "launch10": (launch10, ok10, 20),
        "barrier_loop": (bloop, okb, 5),
        "sgemm_private": (gemm, okg, 1),
        "many_launches": (many, okm, 100),
    }


def _time(fn: Callable[[], None], repeat: int) -> float:
    """The least CPU time of this process over ``repeat`` rounds (``time.process_time``:
    on a machine shared with other work, wall time mostly measures the others)."""
    fn()
    fn()  # warm-up: plans, specializations, allocator
    ts = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        ts.append(time.process_time() - t0)
    return min(ts)


def run(repeat: int, names: list[str] | None = None) -> dict[str, Any]:
    rows = []
    for name, (fn, ok, per) in _cases().items():
        if names and name not in names:
            continue
        row: dict[str, Any] = {"case": name}
        for checks in (False, True):
            with clpy.sim.config(checks=checks):
                t = _time(fn, repeat) / per
            row["checks_on_us" if checks else "checks_off_us"] = t * 1e6
        row["correct"] = ok()
        rows.append(row)
        print(
            f"{name:14s} checks off {row['checks_off_us']:9.1f} us   "
            f"on {row['checks_on_us']:9.1f} us   correct={row['correct']}",
            flush=True,
        )
    return {
        "rows": rows,
        "threads": clpy.sim.current().thread_count(),
        "cpus": os.cpu_count(),
        "machine": platform.processor() or platform.machine(),
        "repeat": repeat,
    }


def profile(name: str, checks: bool, rounds: int) -> None:
    fn = _cases()[name][0]
    with clpy.sim.config(checks=checks):
        fn()
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(rounds):
            fn()
        pr.disable()
    pstats.Stats(pr).sort_stats("tottime").print_stats(25)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--case", action="append", help="run only these cases")
    ap.add_argument("--json", default=None, help="write the rows here")
    ap.add_argument("--profile", default=None, help="cProfile one case instead")
    ap.add_argument("--checks", action="store_true", help="with --profile: checks on")
    a = ap.parse_args()
    if a.threads is not None:
        clpy.sim.config(threads=a.threads)
    if a.profile:
        profile(a.profile, a.checks, a.repeat * 10)
        return
    result = run(a.repeat, a.case)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
