"""Host<->device transfers of NumPy arguments, against the link (issue 18).

Measures, on one OpenCL device, in one run: the link (``enqueue_copy`` host->device and
device->host, from pageable NumPy memory and from pinned ``ALLOC_HOST_PTR`` memory), the old
per-launch path (a fresh ``Buffer(COPY_HOST_PTR)``), and clpy launches whose NumPy arguments
are copied in and out: a kernel that reads ``x`` and writes ``y`` (n float32 each), so each
launch moves 2·n·4 bytes over the link. Median of ``--reps`` after warm-up.

    python -m benchmarks.transfers [--platform nvidia] [--mib 64,256] [--reps 20] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import clpy
from clpy import Global, float32, int32
from clpy.runtime import transfers


@clpy.kernel
def touch(x: Global[float32], y: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    if i < n:
        y[i] = x[i] + 1.0


def _median(fn: Callable[[], None], reps: int) -> float:
    fn()
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def run(platform: str, sizes_mib: list[int], reps: int) -> dict[str, Any]:
    import pyopencl as cl

    dev = [d for p in cl.get_platforms() if platform in p.name.lower() for d in p.get_devices()][0]
    cdev = clpy.get_device(dev)
    rows = [_measure(cl, cdev, mib << 20, reps) for mib in sizes_mib]
    return {"device": dev.name, "driver": dev.driver_version, "rows": rows}


def _measure(cl: Any, cdev: Any, nbytes: int, reps: int) -> dict[str, Any]:
    ctx, q = cdev.context, cdev.queue
    mf = cl.mem_flags
    n = nbytes // 4
    host = np.random.default_rng(0).random(n, dtype=np.float32)
    back = np.empty_like(host)
    dbuf = cl.Buffer(ctx, mf.READ_WRITE, nbytes)
    pinned = cl.Buffer(ctx, mf.READ_WRITE | mf.ALLOC_HOST_PTR, nbytes)
    pin_host, _ = cl.enqueue_map_buffer(
        q, pinned, cl.map_flags.READ | cl.map_flags.WRITE, 0, (n,), np.float32
    )
    pin_host[:] = host
    r: dict[str, Any] = {"MiB": nbytes >> 20}

    def gbps(t: float, nb: int = nbytes) -> float:
        return nb / t / 1e9

    r["h2d_pageable"] = gbps(_median(lambda: cl.enqueue_copy(q, dbuf, host).wait(), reps))
    r["d2h_pageable"] = gbps(_median(lambda: cl.enqueue_copy(q, back, dbuf).wait(), reps))
    r["h2d_pinned"] = gbps(_median(lambda: cl.enqueue_copy(q, dbuf, pin_host).wait(), reps))
    r["d2h_pinned"] = gbps(_median(lambda: cl.enqueue_copy(q, pin_host, dbuf).wait(), reps))

    def use_host_ptr() -> None:
        b = cl.Buffer(ctx, mf.READ_ONLY | mf.USE_HOST_PTR, hostbuf=host)
        cl.enqueue_copy(q, dbuf, b).wait()
        del b

    r["h2d_use_host_ptr"] = gbps(_median(use_host_ptr, reps))

    def fresh() -> None:
        b = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=host)
        q.finish()
        del b

    r["h2d_fresh_copy_host_ptr"] = gbps(_median(fresh, reps))
    y = np.zeros_like(host)
    nn = np.int32(n)

    def launch() -> None:
        touch[n](host, y, nn, device=cdev)

    t = _median(launch, reps)
    assert np.array_equal(y, host + 1)
    r["clpy_numpy_launch"] = gbps(t, 2 * nbytes)  # x in, y out
    xp = clpy.pinned_empty((n,), np.float32, cdev)
    yp = clpy.pinned_empty((n,), np.float32, cdev)
    xp[:] = host

    def launch_pinned() -> None:
        touch[n](xp, yp, nn, device=cdev)

    r["clpy_pinned_launch"] = gbps(_median(launch_pinned, reps), 2 * nbytes)
    assert np.array_equal(yp, host + 1)
    link = 1 / (
        1 / max(r["h2d_pageable"], r["h2d_pinned"]) + 1 / max(r["d2h_pageable"], r["d2h_pinned"])
    )
    r["link_in_plus_out"] = link * 2  # the same 2·nbytes at the best link rates
    r["clpy_vs_link"] = r["clpy_numpy_launch"] / r["link_in_plus_out"]
    r["pinned_vs_link"] = r["clpy_pinned_launch"] / r["link_in_plus_out"]
    # the staging knobs (clpy/runtime/transfers.py): host-copy threads x chunk size
    sweep = {}
    saved = (transfers.COPY_THREADS, transfers.CHUNK)
    for threads in (1, 4, 8, 16):
        for chunk_mib in (8, 16, 64):
            transfers.COPY_THREADS, transfers.CHUNK = threads, chunk_mib << 20
            transfers._COPIER = None
            transfers.clear_pools()
            sweep[f"t{threads}_c{chunk_mib}"] = gbps(_median(launch, max(3, reps // 3)), 2 * nbytes)
    transfers.COPY_THREADS, transfers.CHUNK = saved
    transfers._COPIER = None
    transfers.clear_pools()
    r["staging_sweep"] = sweep
    dx = clpy.to_device(host, cdev)
    dy = clpy.zeros_like(dx)
    t_res = _median(lambda: (touch[n](dx, dy, nn, device=cdev), q.finish()), reps)
    r["kernel_resident_ms"] = t_res * 1e3
    r["to_device_GBps"] = gbps(_median(lambda: clpy.to_device(host, cdev), reps))
    r["get_GBps"] = gbps(_median(dx.get, reps))
    cl.enqueue_copy(q, host, pinned)
    return r


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--platform", default=os.environ.get("CLPY_TEST_PLATFORM", "portable"))
    ap.add_argument("--mib", default="16,64,256")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--out", default=os.environ.get("OUT", "benchmarks/results"))
    a = ap.parse_args()
    res = run(a.platform.lower(), [int(s) for s in a.mib.split(",")], a.reps)
    cols = [k for k in res["rows"][0] if k not in ("MiB", "staging_sweep")]
    print(f"# transfers on {res['device']} (driver {res['driver']}); GB/s unless noted")
    print("| MiB | " + " | ".join(cols) + " |")
    print("|" + "---|" * (len(cols) + 1))
    for r in res["rows"]:
        print(f"| {r['MiB']} | " + " | ".join(f"{r[c]:.2f}" for c in cols) + " |")
    for r in res["rows"]:
        best = max(r["staging_sweep"].items(), key=lambda kv: kv[1])
        print(f"{r['MiB']} MiB staging sweep (GB/s in+out): {r['staging_sweep']}; best {best}")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    name = "transfers_" + res["device"].split()[1 if "NVIDIA" in res["device"] else 0].lower()
    (out / f"{name}.json").write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
