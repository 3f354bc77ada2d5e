"""Where the time of a registered-memory launch goes (issue 18, the 16 MiB fixed cost).

A NumPy launch of ``touch`` moves x in, y in and y out through ``clpy/runtime/registered.py``:
per array a map and unmap of the kept ``USE_HOST_PTR`` buffer, a copy on the device, and a
``finish``. This times each piece alone and two whole sequences, at each size, median of
``--reps``:

- ``finish``: ``queue.finish()`` on an empty queue;
- ``map_w`` / ``map_r``: map for ``WRITE_INVALIDATE_REGION`` / ``READ`` and unmap, finished;
- ``copy_in`` / ``copy_out``: the device copy from / into the registered buffer, finished;
- ``upload`` / ``download``: clpy's ``Registered.upload`` / ``download`` of one array;
- ``seq_now``: x in, y in, y out as clpy does it (three finishes);
- ``seq_once``: the same commands with one finish at the end (non-blocking maps), the
  candidate for launches that wait anyway;
- ``bound``: 2 x bytes / best h2d + bytes / best d2h from ``copy_in``/``copy_out``.

Usage: ``python scripts/gpu_reg_profile.py --platform nvidia --mib 4,16,64,256``
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np


def _median(fn: Any, reps: int) -> float:
    fn()  # warm
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def profile(cl: Any, dev: Any, mib: int, reps: int) -> dict[str, Any]:
    from clpy.runtime.registered import Registered

    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    n = mib << 20
    x = np.ones(n, np.uint8)
    y = np.ones(n, np.uint8)
    dx = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, n)
    dy = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, n)
    reg = Registered(cl, q)
    reg.upload(dx, x)  # registers x and y
    reg.upload(dy, y)
    fx, fy = x.view(np.uint8), y.view(np.uint8)
    with reg.lock:
        px, py = reg._parts(fx, fx.ctypes.data), reg._parts(fy, fy.ctypes.data)
    assert px is not None and py is not None
    bx = reg._buffer(fx, px[0], px[1], px[2])
    by = reg._buffer(fy, py[0], py[1], py[2])
    m = min(px[4] - px[3], py[4] - py[3])  # the registered bytes (whole pages copied here)
    W = cl.map_flags.WRITE_INVALIDATE_REGION
    R = cl.map_flags.READ

    def map_(buf: Any, flags: Any, blocking: bool = True) -> None:
        a, _ = cl.enqueue_map_buffer(q, buf, flags, 0, (m,), np.uint8, is_blocking=blocking)
        a.base.release(q)

    def finish() -> None:
        q.finish()

    def map_w() -> None:
        map_(bx, W)
        q.finish()

    def map_r() -> None:
        map_(bx, R)
        q.finish()

    def copy_in() -> None:
        cl.enqueue_copy(q, dx, bx, byte_count=m)
        q.finish()

    def copy_out() -> None:
        cl.enqueue_copy(q, bx, dx, byte_count=m)
        q.finish()

    def seq_now() -> None:
        reg.upload(dx, x)
        reg.upload(dy, y)
        reg.download(y, dy)

    def seq_once() -> None:
        map_(bx, W, False)
        cl.enqueue_copy(q, dx, bx, byte_count=m)
        map_(by, W, False)
        cl.enqueue_copy(q, dy, by, byte_count=m)
        cl.enqueue_copy(q, by, dy, byte_count=m)
        map_(by, R, False)
        q.finish()

    r: dict[str, Any] = {"mib": mib, "device": dev.name}
    for name, fn in (
        ("finish", finish),
        ("map_w", map_w),
        ("map_r", map_r),
        ("copy_in", copy_in),
        ("copy_out", copy_out),
        ("upload", lambda: reg.upload(dx, x)),
        ("download", lambda: reg.download(y, dy)),
        ("seq_now", seq_now),
        ("seq_once", seq_once),
    ):
        r[name + "_us"] = round(_median(fn, reps) * 1e6, 1)
    bound = 2 * r["copy_in_us"] + r["copy_out_us"]
    r["bound_us"] = bound
    r["seq_now_of_bound"] = round(bound / r["seq_now_us"], 3)
    r["seq_once_of_bound"] = round(bound / r["seq_once_us"], 3)
    reg.clear()
    return r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--platform", default="")
    ap.add_argument("--mib", default="4,16,64,256")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    import pyopencl as cl

    rows = []
    for plat in cl.get_platforms():
        if a.platform.lower() not in plat.name.lower():
            continue
        for dev in plat.get_devices():
            for mib in (int(s) for s in a.mib.split(",")):
                row = profile(cl, dev, mib, a.reps)
                print(json.dumps(row), flush=True)
                rows.append(row)
    if a.out:
        a.out.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
