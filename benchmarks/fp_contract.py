"""The cost of clpy's float default (no contraction) against ``fp_contract=True`` (issue 12).

clpy emits ``#pragma OPENCL FP_CONTRACT OFF`` so ``a*b + c`` is two roundings, as in Python,
on every device and the simulator alike; ``fp_contract=True`` fuses such patterns into explicit
``fma`` calls in the IR (clpy/ir/contract.py). Two FMA-heavy kernels run both ways on one
device, arguments resident on it (``clpy.to_device``), timed as the best of ``--repeat``
synchronous launches after a warm-up:

- ``nbody``: all-pairs gravitational accelerations, bodies staged through local memory in tiles
  of 256 (``n`` bodies, ~20 flops per interaction, 13 of them in multiply-add pairs);
- ``matmul``: ``C = A @ B`` for ``n x n`` float matrices with 16x16 local-memory tiles
  (one multiply-add per inner step).

Printed: times, GFLOP/s, the ratio default / fp_contract, and how far the two results are
apart (the fused one is more accurate, not the same bits).

    .venv/bin/python benchmarks/fp_contract.py --device opencl            # full sizes
    .venv/bin/python benchmarks/fp_contract.py --device opencl --quick    # a CPU-sized run
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import clpy  # noqa: E402
from benchmarks.timing import best_time  # noqa: E402
from clpy import Global, float4, float32, int32  # noqa: E402

TILE = 256
MT = 16
SOFTENING = 1e-3


@clpy.kernel
def nbody(pos: Global[float4], acc: Global[float4], n: int32):
    """Accelerations on every body from all ``n`` (``pos.w`` is the mass)."""
    i = clpy.get_global_id(0)
    lid = clpy.get_local_id(0)
    tile = clpy.local_array(float4, TILE)
    p = pos[i]
    ax = float32(0)
    ay = float32(0)
    az = float32(0)
    for start in range(0, n, TILE):
        tile[lid] = pos[start + lid]
        clpy.barrier()
        for j in range(TILE):
            q = tile[j]
            dx = q.x - p.x
            dy = q.y - p.y
            dz = q.z - p.z
            d2 = dx * dx + dy * dy + dz * dz + SOFTENING
            inv = clpy.rsqrt(d2)
            s = q.w * inv * inv * inv
            ax += dx * s
            ay += dy * s
            az += dz * s
        clpy.barrier()
    acc[i] = float4(ax, ay, az, 0.0)


@clpy.kernel
def matmul(a: Global[float32], b: Global[float32], c: Global[float32], n: int32):
    """``c = a @ b`` (row-major ``n x n``), 16x16 tiles in local memory."""
    tx = clpy.get_local_id(0)
    ty = clpy.get_local_id(1)
    col = clpy.get_global_id(0)
    row = clpy.get_global_id(1)
    ta = clpy.local_array(float32, (MT, MT))
    tb = clpy.local_array(float32, (MT, MT))
    acc = float32(0)
    for t0 in range(0, n, MT):
        ta[ty][tx] = a[row * n + t0 + tx]
        tb[ty][tx] = b[(t0 + ty) * n + col]
        clpy.barrier()
        for k in range(MT):
            acc += ta[ty][k] * tb[k][tx]
        clpy.barrier()
    c[row * n + col] = acc


def bench_nbody(dev: Any, n: int, repeat: int) -> tuple[float, float, float, float]:
    rng = np.random.default_rng(1)
    pos = rng.standard_normal((n, 4)).astype(np.float32)
    pos[:, 3] = rng.uniform(0.5, 1.5, n)
    d_pos = clpy.to_device(pos, dev)
    outs = []
    times = []
    for contract in (False, True):
        d_acc = clpy.zeros((n, 4), np.float32, dev)

        def run(d_acc: Any = d_acc, contract: bool = contract) -> None:
            nbody[(n,), (TILE,)](d_pos, d_acc, n, device=dev, fp_contract=contract)

        times.append(best_time(run, repeat))
        outs.append(d_acc.get())
    flops = 20.0 * n * n
    return times[0], times[1], flops, _rel_diff(outs[0], outs[1])


def bench_matmul(dev: Any, n: int, repeat: int) -> tuple[float, float, float, float]:
    rng = np.random.default_rng(2)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    d_a, d_b = clpy.to_device(a, dev), clpy.to_device(b, dev)
    outs = []
    times = []
    for contract in (False, True):
        d_c = clpy.zeros((n, n), np.float32, dev)

        def run(d_c: Any = d_c, contract: bool = contract) -> None:
            matmul[(n, n), (MT, MT)](d_a, d_b, d_c, n, device=dev, fp_contract=contract)

        times.append(best_time(run, repeat))
        outs.append(d_c.get())
    want = a.astype(np.float64) @ b.astype(np.float64)
    errs = [float(np.abs(o - want).max() / np.abs(want).max()) for o in outs]
    print(f"  matmul max error vs float64, relative to max |C|: default {errs[0]:.2e}, "
          f"fp_contract {errs[1]:.2e}")
    return times[0], times[1], 2.0 * n**3, _rel_diff(outs[0], outs[1])


def _rel_diff(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.abs(x - y).max() / max(float(np.abs(x).max()), 1e-30))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="opencl")
    ap.add_argument("--nbody", type=int, default=1 << 15, help="bodies (multiple of 256)")
    ap.add_argument("--matmul", type=int, default=2048, help="matrix size (multiple of 16)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="nbody 4096, matmul 512, 3 runs")
    a = ap.parse_args()
    if a.quick:
        a.nbody, a.matmul, a.repeat = 4096, 512, 3
    dev = clpy.get_device(a.device)
    print(f"fp_contract cost on {dev}")
    rows = [
        (f"nbody n={a.nbody}", *bench_nbody(dev, a.nbody, a.repeat)),
        (f"matmul n={a.matmul}", *bench_matmul(dev, a.matmul, a.repeat)),
    ]
    print("| kernel | default (ms) | fp_contract (ms) | default GFLOP/s | fp_contract GFLOP/s "
          "| default / fp_contract time | max rel. difference |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, t0, t1, flops, diff in rows:
        print(f"| {name} | {t0 * 1e3:.2f} | {t1 * 1e3:.2f} | {flops / t0 / 1e9:.1f} | "
              f"{flops / t1 / 1e9:.1f} | {t0 / t1:.2f}x | {diff:.1e} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
