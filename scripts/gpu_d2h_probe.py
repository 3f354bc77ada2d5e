"""Why a registered download alone measured 9-15 GB/s at 16 MiB in benchmarks.transfers
(paths, session 10) while the same copy and map alone measured 47 (gpu_reg_rounded.py
download_alone): clpy's ``transfers.download`` of one array into another, sample by sample,
with the registrations made and the table's size.

Usage: ``python scripts/gpu_d2h_probe.py --platform nvidia --mib 16``
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import clpy
from clpy.runtime import registered, transfers


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--platform", default="nvidia")
    ap.add_argument("--mib", type=int, default=16)
    a = ap.parse_args()
    import pyopencl as cl

    dev = next(d for d in clpy.devices() if a.platform.lower() in d.name.lower())
    q = dev.queue
    made: list[int] = []
    real = registered.Registered._buffer

    def counted(self, flat, lo, hi, *rest):  # type: ignore[no-untyped-def]
        n = len(self._bufs)
        buf = real(self, flat, lo, hi, *rest)
        if len(self._bufs) != n or (lo, hi - lo) not in self._bufs:
            made.append(hi - lo)
        return buf

    registered.Registered._buffer = counted  # type: ignore[method-assign]
    n = a.mib << 20
    host = np.arange(n // 4, dtype=np.float32)
    back = np.empty_like(host)
    back[:] = 0
    dbuf = cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, n)
    print("host at page offset", host.ctypes.data % 4096, "back at", back.ctypes.data % 4096)
    for what, fn in (
        ("h2d", lambda: (transfers.upload(cl, q, dbuf, host), q.finish())),
        ("d2h", lambda: transfers.download(cl, q, back, dbuf)),
    ):
        for i in range(8):
            made.clear()
            t0 = time.perf_counter()
            fn()
            dt = time.perf_counter() - t0
            st = transfers.staging_for(cl, q)
            print(
                f"{what} {i}: {dt * 1e6:8.0f} us {n / dt / 1e9:6.1f} GB/s registrations made "
                f"{made} table {len(getattr(st, '_bufs', {}))} {type(st).__name__}"
            )
    assert np.array_equal(back, host)
    # one-off transfers: DeviceArray.get() into a new array, to_device of a new array, by
    # how a first transfer goes: registered at once or through pinned staging (a direct
    # copy, measured in session 10 too: 3.0 GB/s get and 6.6-7.7 to_device at 16-64 MiB)
    d = clpy.to_device(host, device=dev)
    for how, knobs in (
        ("register", dict(FIRST_STAGE_MIN=1 << 62)),
        ("staged", dict(FIRST_STAGE_MIN=0)),
    ):
        saved = {k: getattr(registered, k) for k in knobs}
        for k, v in knobs.items():
            setattr(registered, k, v)
        for i in range(4):
            t0 = time.perf_counter()
            got = d.get()
            dt = time.perf_counter() - t0
            src = host * 1  # a new array, its pages touched
            t1 = time.perf_counter()
            d2 = clpy.to_device(src, device=dev)
            dt2 = time.perf_counter() - t1
            print(
                f"{how} get {i}: {dt * 1e6:6.0f} us {n / dt / 1e9:5.1f} GB/s; to_device "
                f"{dt2 * 1e6:6.0f} us {n / dt2 / 1e9:5.1f} GB/s"
            )
            assert np.array_equal(got, host)
            del got, d2, src
        for k, v in saved.items():
            setattr(registered, k, v)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
