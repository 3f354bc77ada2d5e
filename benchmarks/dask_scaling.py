"""Strong scaling of a clpy stencil over Dask workers, one GPU per worker (issue 16).

The same 2-D heat-equation run (an ``--n`` x ``--n`` float32 grid in ``--blocks`` row
blocks, ``--steps`` explicit steps, each one ``clpy.dask.map_blocks`` with a one-cell halo)
on a LocalCluster of 1, then 2 ... worker processes (``--gpus 1,2``), each worker on its own
device: ``--pin rank`` lets clpy choose (``device="opencl:gpu"``: round-robin by worker rank),
``--pin cuda`` starts each worker with ``CUDA_VISIBLE_DEVICES=<k>``. Every run computes
exactly the same thing; their results must be bit-identical (checked through a checksum, and
against NumPy for grids up to ``--check-max``).

Reported per worker count: the wall time of the steps from ``persist`` to the last chunk
(kernels already built: a warm-up run comes first; the client's graph building is reported
apart), ms per step, grid cells updated per second, and the speed-up over the first
count. ``--baseline`` adds the same steps in this process on one device with the grid kept on
the device (``clpy.DeviceArray`` ping-pong, no host traffic): the floor that Dask's per-step
host copies, PCIe transfers and halo exchange are measured against.

    python benchmarks/dask_scaling.py --gpus 1,2 --n 16384 --blocks 8 --steps 20
    CLPY_GPU_PLATFORM=portable python benchmarks/dask_scaling.py --device opencl:portable \\
        --gpus 1,2 --n 256 --blocks 4 --steps 3        # a dry run on PoCL

Prints a table and writes JSON to ``--json`` (default ``$OUT/dask_scaling.json`` when ``$OUT``
is set).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import clpy  # noqa: E402
import clpy.dask  # noqa: E402
from clpy import Global, float32, int32  # noqa: E402


@clpy.kernel
def hot_square(u: Global[float32], shape: clpy.int2, off: clpy.int2, n: int32):
    j = clpy.get_global_id(0)
    i = clpy.get_global_id(1)
    gi = off.x + i
    gj = off.y + j
    inside = n // 3 <= gi < 2 * n // 3 and n // 3 <= gj < 2 * n // 3
    u[i * shape.y + j] = 1.0 if inside else 0.0


@clpy.kernel
def heat_step(u: Global[float32], v: Global[float32], shape: clpy.int2, alpha: float32):
    j = clpy.get_global_id(0)
    i = clpy.get_global_id(1)
    w = shape.y
    if 0 < i < shape.x - 1 and 0 < j < w - 1:
        c = i * w + j
        lap = u[c - w] + u[c + w] + u[c - 1] + u[c + 1] - 4.0 * u[c]
        v[c] = u[c] + alpha * lap


def rows_fastest(shape: tuple[int, ...]) -> tuple[int, int]:
    return (shape[1], shape[0])


def grid(n: int, blocks: int, device: str) -> Any:
    import dask.array as da

    like = da.empty((n, n), chunks=(-(-n // blocks), n), dtype=np.float32)
    return clpy.dask.map_blocks(
        hot_square,
        shape=clpy.dask.BLOCK_SHAPE,
        off=clpy.dask.BLOCK_OFFSET,
        n=n,
        like=like,
        global_size=rows_fastest,
        device=device,
    )


def steps(u: Any, count: int, alpha: float, device: str) -> Any:
    for _ in range(count):
        u = clpy.dask.map_blocks(
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
    return u


def start_cluster(workers: int, pin: str) -> Any:
    from distributed import LocalCluster, Nanny, Scheduler, SpecCluster

    if pin == "rank":
        return LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        )
    specs = {
        k: {
            "cls": Nanny,
            "options": {"nthreads": 1, "env": {"CUDA_VISIBLE_DEVICES": str(k)}},
        }
        for k in range(workers)
    }
    return SpecCluster(
        workers=specs, scheduler={"cls": Scheduler, "options": {"dashboard_address": None}}
    )


def run_workers(args: argparse.Namespace, workers: int) -> dict[str, Any]:
    from distributed import Client, wait

    with start_cluster(workers, args.pin) as cluster, Client(cluster) as client:
        client.wait_for_workers(workers)
        devices = {
            w: client.submit(_device_ident, args.device, workers=[w], pure=False).result()
            for w in client.scheduler_info()["workers"]
        }
        # Warm-up: every worker builds both kernels and the reduction (a small grid with a
        # chunk per worker and more).
        small = steps(grid(8 * workers, 2 * workers, args.device), 1, args.alpha, args.device)
        float(clpy.dask.reduce(small, "+", device=args.device).compute())
        u0 = client.persist(grid(args.n, args.blocks, args.device))
        wait(u0)
        t = time.perf_counter()
        graph = steps(u0, args.steps, args.alpha, args.device)  # client side: map_blocks calls
        graph_s = time.perf_counter() - t
        t = time.perf_counter()
        u = client.persist(graph)
        wait(u)
        seconds = time.perf_counter() - t
        total = float(clpy.dask.reduce(u, "+", device=args.device).compute())
        result = u.compute() if args.n <= args.check_max else None
    cells = args.n * args.n * args.steps
    return {
        "workers": workers,
        "devices": sorted(devices.values()),
        "seconds": seconds,
        "graph_build_seconds": graph_s,
        "ms_per_step": 1e3 * seconds / args.steps,
        "cells_per_s": cells / seconds,
        "checksum": total,
        "_result": result,
    }


def _device_ident(selector: str) -> str:
    """The worker's device, with its PCI bus where the driver says (NVIDIA), so that two
    identical GPUs are told apart."""
    dev = clpy.dask.worker_device(selector)
    try:  # cl_nv_device_attribute_query; other drivers raise
        bus = dev.cl_device.pci_bus_id_nv if dev.cl_device is not None else None
    except Exception:  # noqa: BLE001
        bus = None
    cuda = os.environ.get("CUDA_VISIBLE_DEVICES")
    return (
        dev.name
        + (f" (PCI bus {bus})" if bus is not None else "")
        + (f" [CUDA_VISIBLE_DEVICES={cuda}]" if cuda else "")
    )


def run_baseline(args: argparse.Namespace) -> dict[str, Any]:
    """The same steps on one device in this process, the grid kept on the device (a zero
    frame around it stands for boundary=0.0)."""
    dev = clpy.dask.worker_device(args.device)
    n = args.n
    host = np.zeros((n + 2, n + 2), np.float32)
    host[1 + n // 3 : 1 + 2 * n // 3, 1 + n // 3 : 1 + 2 * n // 3] = 1
    u = clpy.to_device(host, device=dev)
    v = clpy.to_device(host, device=dev)
    shape = (n + 2, n + 2)
    size = rows_fastest(shape)
    heat_step[size, None](u, v, shape, args.alpha, device=dev)  # build, and one step
    v.get()
    u, v = clpy.to_device(host, device=dev), clpy.to_device(host, device=dev)
    t = time.perf_counter()
    for _ in range(args.steps):
        heat_step[size, None](u, v, shape, args.alpha, device=dev, wait=False)
        u, v = v, u
    out = u.get()  # waits for the queue
    seconds = time.perf_counter() - t
    inner = out[1:-1, 1:-1]
    return {
        "device": dev.name,
        "seconds": seconds,
        "ms_per_step": 1e3 * seconds / args.steps,
        "cells_per_s": n * n * args.steps / seconds,
        "checksum": float(inner.astype(np.float64).sum()),
        "_result": inner if n <= args.check_max else None,
    }


def numpy_heat(n: int, count: int, alpha: float) -> np.ndarray:
    u = np.zeros((n, n), np.float32)
    u[n // 3 : 2 * n // 3, n // 3 : 2 * n // 3] = 1
    a = np.float32(alpha)
    for _ in range(count):
        p = np.pad(u, 1)
        u = u + a * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - np.float32(4) * u)
    return u


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpus", default="1,2", help="worker counts, one device each")
    ap.add_argument("--n", type=int, default=16384, help="grid edge (n x n float32)")
    ap.add_argument("--blocks", type=int, default=8, help="row blocks (chunks)")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--alpha", type=float, default=0.2)
    ap.add_argument("--device", default="opencl:gpu", help="selector each worker resolves")
    ap.add_argument("--pin", choices=("rank", "cuda"), default="rank")
    ap.add_argument("--baseline", action=argparse.BooleanOptionalAction, default=True)
    ap.add_argument("--check-max", type=int, default=4096, help="compare with NumPy up to n")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)

    counts = [int(c) for c in args.gpus.split(",") if c.strip()]
    runs = [run_workers(args, c) for c in counts]
    base = run_baseline(args) if args.baseline else None
    want = numpy_heat(args.n, args.steps, args.alpha) if args.n <= args.check_max else None

    ok = True
    for r in [*runs, *([base] if base else [])]:
        res = r.pop("_result")
        r["checksum_matches_first"] = r["checksum"] == runs[0]["checksum"]
        ok &= r["checksum_matches_first"] or r is base  # the baseline sums in float64
        if want is not None and res is not None:
            r["max_abs_err_vs_numpy"] = float(np.max(np.abs(res - want)))
            ok &= r["max_abs_err_vs_numpy"] <= 1e-5
    first = runs[0]["seconds"] * runs[0]["workers"]
    for r in runs:
        r["speedup_vs_first"] = runs[0]["seconds"] / r["seconds"]
        r["efficiency"] = first / (r["seconds"] * r["workers"])
    grid_bytes = args.n * args.n * 4
    report = {
        "benchmark": "dask_scaling",
        "n": args.n,
        "grid_bytes": grid_bytes,
        "blocks": args.blocks,
        "steps": args.steps,
        "device_selector": args.device,
        "pin": args.pin,
        "runs": runs,
        "device_resident_baseline": base,
        "ok": bool(ok),
        "host": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "versions": _versions(),
    }
    print(
        f"grid {args.n}x{args.n} float32 ({grid_bytes / 2**30:.2f} GiB), {args.blocks} row "
        f"blocks, {args.steps} steps, device={args.device!r}, pin={args.pin}"
    )
    print(f"{'workers':>7} {'seconds':>9} {'ms/step':>9} {'Gcell/s':>8} {'speedup':>8}  devices")
    for r in runs:
        print(
            f"{r['workers']:>7} {r['seconds']:>9.3f} {r['ms_per_step']:>9.2f} "
            f"{r['cells_per_s'] / 1e9:>8.3f} {r['speedup_vs_first']:>8.2f}  {r['devices']}"
        )
    if base:
        print(
            f"{'device-resident, 1 device':>26}: {base['seconds']:.3f} s, "
            f"{base['ms_per_step']:.2f} ms/step, {base['cells_per_s'] / 1e9:.3f} Gcell/s "
            f"({base['device']})"
        )
    print("results identical across worker counts" if ok else "MISMATCH between runs")
    path = args.json or (
        os.path.join(os.environ["OUT"], "dask_scaling.json") if os.environ.get("OUT") else None
    )
    if path:
        Path(path).write_text(json.dumps(report, indent=2))
        print("wrote", path)
    return 0 if ok else 1


def _versions() -> dict[str, str]:
    import dask
    import distributed

    return {
        "dask": dask.__version__,
        "distributed": distributed.__version__,
        "numpy": np.__version__,
        "clpy": clpy.__version__,
    }


if __name__ == "__main__":
    sys.exit(main())
