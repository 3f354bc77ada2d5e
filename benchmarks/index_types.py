"""The cost of signed work-item indices (issue 12): ``int`` (clpy's default) vs ``size_t``.

clpy types ``get_global_id`` and friends as ``int`` and emits ``(int)get_global_id(0)``
(clpy/builtins/workitem.py); before, they were OpenCL's ``size_t``, as a C port keeps them with
``clpy.get_global_id(0, clpy.size_t)``. Each kernel is built twice by one factory, with
``int`` indices and ``int`` sizes, and with ``size_t`` indices and ``ulong`` sizes (the
arithmetic OpenCL C programs do with ``size_t``), arguments resident on the device
(``clpy.to_device``), timed as the best of ``--repeat`` synchronous launches after a warm-up:

- ``triad``: ``z[i] = a * x[i] + y[i]`` over ``n`` floats (bandwidth-bound);
- ``stencil``: a 9-point box filter on a ``w x w`` float image, every load through
  ``(r + dr - 1) * w + c + dc - 1`` (index arithmetic per load);
- ``gather``: 32 dependent hashed loads per work-item, ``j = (j * 1103 + 12345 + k) & mask``
  (integer multiply-add chains on the index).

Printed: times per variant, GB/s for triad, and the ratio int / size_t (below 1: int faster).

    .venv/bin/python benchmarks/index_types.py --device opencl            # full sizes
    .venv/bin/python benchmarks/index_types.py --device opencl --quick    # a CPU-sized run
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
from clpy import Global, float32  # noqa: E402


def make(IT: Any, NT: Any) -> dict[str, Any]:
    """The three kernels with index type ``IT`` and size type ``NT`` (a kernel factory: the
    annotations name the factory's arguments)."""

    @clpy.kernel
    def triad(x: Global[float32], y: Global[float32], z: Global[float32], a: float32, n: NT):
        i = clpy.get_global_id(0, IT)
        if i < n:
            z[i] = a * x[i] + y[i]

    @clpy.kernel
    def stencil(src: Global[float32], dst: Global[float32], w: NT):
        c = clpy.get_global_id(0, IT)
        r = clpy.get_global_id(1, IT)
        if r >= 1 and r < w - 1 and c >= 1 and c < w - 1:
            acc = float32(0)
            for dr in range(3):
                for dc in range(3):
                    acc += src[(r + dr - 1) * w + c + dc - 1]
            dst[r * w + c] = acc * (1.0 / 9.0)

    @clpy.kernel
    def gather(x: Global[float32], out: Global[float32], mask: NT):
        i = clpy.get_global_id(0, IT)
        j = i & mask
        acc = float32(0)
        for k in range(32):
            j = (j * 1103 + 12345 + k) & mask
            acc += x[j]
        out[i] = acc

    return {"triad": triad, "stencil": stencil, "gather": gather}


VARIANTS = {"int": make(clpy.int32, clpy.int32), "size_t": make(clpy.size_t, clpy.ulong)}


def bench(dev: Any, n: int, w: int, repeat: int) -> list[tuple[str, float, float, str]]:
    rng = np.random.default_rng(3)
    x = clpy.to_device(rng.standard_normal(n).astype(np.float32), dev)
    y = clpy.to_device(rng.standard_normal(n).astype(np.float32), dev)
    img = clpy.to_device(rng.standard_normal(w * w).astype(np.float32), dev)
    rows = []
    results: dict[str, dict[str, np.ndarray]] = {}
    for name in ("triad", "stencil", "gather"):
        times = {}
        for var, ks in VARIANTS.items():
            k = ks[name]
            if name == "triad":
                out = clpy.zeros(n, np.float32, dev)

                def run(k: Any = k, out: Any = out) -> None:
                    k[(n,), (256,)](x, y, out, 2.0, n, device=dev)

            elif name == "stencil":
                out = clpy.zeros(w * w, np.float32, dev)

                def run(k: Any = k, out: Any = out) -> None:
                    k[(w, w), (16, 16)](img, out, w, device=dev)

            else:
                out = clpy.zeros(n, np.float32, dev)

                def run(k: Any = k, out: Any = out) -> None:
                    k[(n,), (256,)](x, out, n - 1, device=dev)

            times[var] = best_time(run, repeat)
            results.setdefault(name, {})[var] = out.get()
        same = all(
            np.array_equal(results[name]["int"], r) for r in results[name].values()
        )
        extra = f"{3 * 4 * n / times['int'] / 1e9:.0f} GB/s" if name == "triad" else ""
        rows.append((name, times["int"], times["size_t"], extra + ("" if same else " DIFFER")))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="opencl")
    ap.add_argument("--n", type=int, default=1 << 26, help="elements (power of two)")
    ap.add_argument("--w", type=int, default=8192, help="image width (multiple of 16)")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--quick", action="store_true", help="n 2^20, w 1024, 3 runs")
    a = ap.parse_args()
    if a.quick:
        a.n, a.w, a.repeat = 1 << 20, 1024, 3
    dev = clpy.get_device(a.device)
    print(f"index types on {dev}: int (default) vs size_t, n={a.n}, image {a.w}x{a.w}")
    print("| kernel | int (ms) | size_t (ms) | int / size_t | note |")
    print("| --- | --- | --- | --- | --- |")
    for name, t_int, t_size, note in bench(dev, a.n, a.w, a.repeat):
        print(f"| {name} | {t_int * 1e3:.3f} | {t_size * 1e3:.3f} | {t_int / t_size:.2f}x "
              f"| {note} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
