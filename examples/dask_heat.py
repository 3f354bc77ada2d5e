"""The 2-D heat equation over a chunked grid: clpy kernels on Dask workers, one device each.

    python examples/dask_heat.py                       # simulator, 2 worker processes
    python examples/dask_heat.py --device opencl:pocl  # PoCL on the CPU
    python examples/dask_heat.py --device opencl:gpu --workers 2 --n 4096 --steps 50
                                                       # one GPU per worker (round-robin)
    python examples/dask_heat.py --scheduler tcp://host:8786   # an existing cluster

Each explicit step ``u += alpha * laplacian(u)`` (zero outside the grid) is one
``clpy.dask.map_blocks`` with ``depth=1``: every chunk is launched with a one-cell halo from
its neighbours and the halo is trimmed from the result. The initial hot square is made on the
workers by a generator kernel (``like=``, ``BLOCK_OFFSET``). The result is checked against
NumPy, and the total heat is a ``clpy.dask.reduce``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import clpy
import clpy.dask
from clpy import Global, float32, int32


@clpy.kernel
def hot_square(u: Global[float32], shape: clpy.int2, off: clpy.int2, n: int32):
    """u = 1 inside the middle third of the n x n grid, else 0 (one work-item per cell;
    dimension 0 runs along a row, so neighbouring work-items touch neighbouring cells)."""
    j = clpy.get_global_id(0)
    i = clpy.get_global_id(1)
    gi = off.x + i
    gj = off.y + j
    inside = n // 3 <= gi < 2 * n // 3 and n // 3 <= gj < 2 * n // 3
    u[i * shape.y + j] = 1.0 if inside else 0.0


@clpy.kernel
def heat_step(u: Global[float32], v: Global[float32], shape: clpy.int2, alpha: float32):
    """One explicit step on a chunk with its halo; the halo cells themselves are not
    updated (they are trimmed)."""
    j = clpy.get_global_id(0)
    i = clpy.get_global_id(1)
    w = shape.y
    if 0 < i < shape.x - 1 and 0 < j < w - 1:
        c = i * w + j
        lap = u[c - w] + u[c + w] + u[c - 1] + u[c + 1] - 4.0 * u[c]
        v[c] = u[c] + alpha * lap


def rows_fastest(shape: tuple[int, ...]) -> tuple[int, int]:
    """The launch size for a chunk: dimension 0 along the row (the contiguous axis)."""
    return (shape[1], shape[0])


def initial(n: int, chunk: int, device: str | None) -> object:
    import dask.array as da

    like = da.empty((n, n), chunks=chunk, dtype=np.float32)
    return clpy.dask.map_blocks(
        hot_square,
        shape=clpy.dask.BLOCK_SHAPE,
        off=clpy.dask.BLOCK_OFFSET,
        n=n,
        like=like,
        global_size=rows_fastest,
        device=device,
    )


def step(u: object, alpha: float, device: str | None) -> object:
    return clpy.dask.map_blocks(
        heat_step,
        u,
        shape=clpy.dask.BLOCK_SHAPE,
        alpha=alpha,
        out="v",
        depth=1,
        boundary=0.0,
        global_size=rows_fastest,
        device=device,
    )


def numpy_heat(n: int, steps: int, alpha: float) -> np.ndarray:
    u = np.zeros((n, n), np.float32)
    u[n // 3 : 2 * n // 3, n // 3 : 2 * n // 3] = 1
    a = np.float32(alpha)
    for _ in range(steps):
        p = np.pad(u, 1)
        lap = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - np.float32(4) * u
        u = u + a * lap
    return u


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=64, help="grid size (n x n)")
    ap.add_argument("--chunk", type=int, default=32, help="chunk edge")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--alpha", type=float, default=0.2)
    ap.add_argument("--device", default="sim", help="selector each worker resolves")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--scheduler", default=None, help="address of an existing scheduler")
    args = ap.parse_args()

    from distributed import Client, LocalCluster

    if args.scheduler:
        cluster, client = None, Client(args.scheduler)
    else:
        cluster = LocalCluster(
            n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(cluster)
    try:
        print("workers:", clpy.dask.worker_devices(client, args.device))
        t0 = time.perf_counter()
        u = initial(args.n, args.chunk, args.device)
        for _ in range(args.steps):
            u = step(u, args.alpha, args.device)
        result = u.compute()
        heat = float(clpy.dask.reduce(u, "+", device=args.device).compute())
        dt = time.perf_counter() - t0
        want = numpy_heat(args.n, args.steps, args.alpha)
        err = float(np.max(np.abs(result - want)))
        print(f"{args.steps} steps of {args.n}x{args.n} in chunks of {args.chunk}: {dt:.2f} s")
        print(f"total heat {heat:.4f} (NumPy {float(want.sum()):.4f})")
        print(f"max |clpy - NumPy| {err:.2e}")
        if err > 1e-5:
            raise SystemExit("mismatch with NumPy")
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


if __name__ == "__main__":
    main()
