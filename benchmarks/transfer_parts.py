"""One size of benchmarks/transfers.py, part by part (``--parts``): the link, clpy launches
with NumPy and pinned arguments, the staging sweep, the host's copy rate, the link both ways
at once, the split path, device-resident arrays; the "paths" part is
benchmarks/transfer_paths.py."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

import clpy
from benchmarks.transfer_paths import measure_paths
from benchmarks.transfer_report import paths_note
from benchmarks.transfer_setup import gb_per_s, median, mix3, staging_knobs, touch
from clpy.runtime import transfers


def measure_size(cl: Any, cdev: Any, nbytes: int, reps: int, parts: set[str]) -> dict[str, Any]:
    ctx, q = cdev.context, cdev.queue
    mf = cl.mem_flags
    n = nbytes // 4
    host = np.random.default_rng(0).random(n, dtype=np.float32)
    back = np.empty_like(host)
    dbuf = cl.Buffer(ctx, mf.READ_WRITE, nbytes)
    pin_host = transfers.pinned_array(cl, q, (n,), np.float32)
    pin_host[:] = host
    r: dict[str, Any] = {"MiB": nbytes >> 20}
    few = max(3, reps // 3)

    def gbps(t: float, nb: int = nbytes) -> float:
        return gb_per_s(t, nb)

    if "link" in parts:
        r["h2d_pageable"] = gbps(median(lambda: cl.enqueue_copy(q, dbuf, host).wait(), reps))
        r["d2h_pageable"] = gbps(median(lambda: cl.enqueue_copy(q, back, dbuf).wait(), reps))
        r["h2d_pinned"] = gbps(median(lambda: cl.enqueue_copy(q, dbuf, pin_host).wait(), reps))
        r["d2h_pinned"] = gbps(median(lambda: cl.enqueue_copy(q, pin_host, dbuf).wait(), reps))

        def use_host_ptr() -> None:
            b = cl.Buffer(ctx, mf.READ_ONLY | mf.USE_HOST_PTR, hostbuf=host)
            cl.enqueue_copy(q, dbuf, b).wait()
            del b

        r["h2d_use_host_ptr"] = gbps(median(use_host_ptr, reps))

        def fresh() -> None:
            b = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=host)
            q.finish()
            del b

        r["h2d_fresh_copy_host_ptr"] = gbps(median(fresh, few))
    nn = np.int32(n)
    y = np.zeros_like(host)

    def launch() -> None:
        touch[n](host, y, nn, device=cdev)

    arrays = [np.random.default_rng(k).random(n, dtype=np.float32) for k in range(3)]
    outs = [np.zeros_like(host) for _ in range(2)]

    def launch_mix() -> None:
        mix3[n](*arrays, *outs, nn, device=cdev)

    if "launch" in parts:
        # Bytes moved: clpy uploads every NumPy array argument, written ones too (a kernel
        # need not write every element, and the caller's other elements must survive), so
        # touch moves x in, y in, y out; mix3 its 5 arrays in and 2 out.
        r["clpy_numpy_launch"] = gbps(median(launch, reps), 3 * nbytes)
        assert np.array_equal(y, host + 1)
        r["clpy_numpy_mix"] = gbps(median(launch_mix, reps), 7 * nbytes)
        assert np.array_equal(outs[0], arrays[0] + arrays[1])
        assert np.array_equal(outs[1], arrays[1] * arrays[2])
        # the same x -> y in 8 chunks: one launch after the other, or all enqueued (wait=False:
        # chunk k's copy back runs on the queue while chunk k+1 is staged on the host)
        m = n // 8
        chunks = [(host[k * m : (k + 1) * m], y[k * m : (k + 1) * m]) for k in range(8)]
        mm = np.int32(m)

        def chunked(wait: bool) -> None:
            hs = [touch[m](xc, yc, mm, device=cdev, wait=wait) for xc, yc in chunks]
            for h in hs:
                if h is not None:
                    h.wait()

        y[:] = 0
        r["clpy_numpy_chunked_wait"] = gbps(median(lambda: chunked(True), reps), 3 * 8 * m * 4)
        y[:] = 0
        r["clpy_numpy_chunked_async"] = gbps(median(lambda: chunked(False), reps), 3 * 8 * m * 4)
        assert np.array_equal(y[: 8 * m], host[: 8 * m] + 1)
        xp = clpy.pinned_empty((n,), np.float32, cdev)
        yp = clpy.pinned_empty((n,), np.float32, cdev)
        xp[:] = host
        r["clpy_pinned_launch"] = gbps(
            median(lambda: touch[n](xp, yp, nn, device=cdev), reps), 3 * nbytes
        )
        assert np.array_equal(yp, host + 1)
        del xp, yp
        if "link" in parts:
            # the same 3·nbytes (two arrays in, one out) at the best link rates
            r["link_in_plus_out"] = 3 / (
                2 / max(r["h2d_pageable"], r["h2d_pinned"])
                + 1 / max(r["d2h_pageable"], r["d2h_pinned"])
            )
            r["clpy_vs_link"] = r["clpy_numpy_launch"] / r["link_in_plus_out"]
            r["pinned_vs_link"] = r["clpy_pinned_launch"] / r["link_in_plus_out"]
    if "sweep" in parts:  # the staging knobs (clpy/runtime/transfers.py): threads x chunk size
        sweep = {}
        for threads in (1, 4, 8, 16):
            for chunk_mib in (8, 16, 64):
                with staging_knobs(
                    COPY_THREADS=threads, CHUNK=chunk_mib << 20, STAGE_CPU_DEVICES=True
                ):
                    sweep[f"t{threads}_c{chunk_mib}"] = gbps(median(launch, few), 2 * nbytes)
        r["staging_sweep"] = sweep
    if "host" in parts:
        r["host_copy"] = _host_copies(cl, q, host, pin_host, few)
    if "duplex" in parts:
        with staging_knobs(STAGE_CPU_DEVICES=True):
            r["duplex"] = _duplex(cl, cdev, host, pin_host, few)
    if "split" in parts:  # all staged, part by the driver on a second queue, none staged
        split: dict[str, float] = {}
        paths: dict[str, dict[str, Any]] = {
            "staged": dict(DIRECT_SHARE=0.0),
            "split0.25": dict(DIRECT_SHARE=0.25),
            "split0.4": dict(DIRECT_SHARE=0.4),
            "direct": dict(DIRECT_SHARE=0.0, STAGE_MIN=1 << 62, REGISTER_FROM=1 << 62),
        }
        for name, knobs in paths.items():
            with staging_knobs(STAGE_CPU_DEVICES=True, **knobs):
                y[:] = 0
                split[f"touch_{name}"] = gbps(median(launch, few), 2 * nbytes)
                assert np.array_equal(y, host + 1)
                outs[1][:] = 0
                split[f"mix3_{name}"] = gbps(median(launch_mix, few), 5 * nbytes)
                assert np.array_equal(outs[1], arrays[1] * arrays[2])
        r["split"] = split
    if "paths" in parts:
        r["paths"] = measure_paths(cl, cdev, host, reps)
        print(paths_note(nbytes, r["paths"]), flush=True)
    if "resident" in parts:
        dx = clpy.to_device(host, cdev)
        dy = clpy.zeros_like(dx)
        t_res = median(lambda: (touch[n](dx, dy, nn, device=cdev), q.finish()), reps)
        r["kernel_resident_ms"] = t_res * 1e3
        r["to_device_GBps"] = gbps(median(lambda: clpy.to_device(host, cdev), reps))
        r["get_GBps"] = gbps(median(dx.get, reps))
        r["element_read_us"] = median(lambda: dy[n // 2], reps) * 1e6
        assert dy[n // 2] == host[n // 2] + 1
    return r


def _host_copies(cl: Any, q: Any, host: np.ndarray, pinned: np.ndarray, reps: int) -> Any:
    """GB/s of ``np.copyto`` split over k threads (what clpy's staging does, clpy/runtime/
    transfers.py ``_copy``), for the three copies a NumPy-argument transfer can make."""
    src = host.view(np.uint8)
    dst = np.empty_like(src)
    dst[:] = 0  # touched: page faults are not what is measured
    pin = pinned.view(np.uint8)
    out: dict[str, float] = {}
    for threads in (1, 2, 4, 8, 16):
        with ThreadPoolExecutor(threads) as pool:

            def copy(d: np.ndarray, s: np.ndarray, pool: Any = pool, k: int = threads) -> None:
                step = -(-s.size // k)
                futs = [
                    pool.submit(np.copyto, d[i : i + step], s[i : i + step])
                    for i in range(0, s.size, step)
                ]
                for f in futs:
                    f.result()

            out[f"pageable_to_pageable_t{threads}"] = gb_per_s(
                median(lambda: copy(dst, src), reps), src.size
            )
            out[f"pageable_to_pinned_t{threads}"] = gb_per_s(
                median(lambda: copy(pin, src), reps), src.size
            )
            out[f"pinned_to_pageable_t{threads}"] = gb_per_s(
                median(lambda: copy(dst, pin), reps), src.size
            )
            # into a new array, as DeviceArray.get() does: its pages are faulted in by the copy
            out[f"pinned_to_new_t{threads}"] = gb_per_s(
                median(lambda: copy(np.empty_like(src), pin), reps), src.size
            )
    return out


def _duplex(cl: Any, cdev: Any, host: np.ndarray, pinned: np.ndarray, reps: int) -> Any:
    """The link both ways at once: a pinned upload on the device's queue while a pinned
    download runs on a second queue; and clpy's staged upload while a staged download runs
    (two staging areas, two threads), against the two one after the other."""
    q = cdev.queue
    ctx = cdev.context
    q2 = cl.CommandQueue(ctx, q.device)
    nbytes = host.nbytes
    mf = cl.mem_flags
    a = cl.Buffer(ctx, mf.READ_WRITE, nbytes)
    b = cl.Buffer(ctx, mf.READ_WRITE, nbytes)
    cl.enqueue_copy(q, b, host).wait()
    pin2 = transfers.pinned_array(cl, q, host.shape, host.dtype)
    out: dict[str, float] = {}

    def both_pinned() -> None:
        e1 = cl.enqueue_copy(q, a, pinned, is_blocking=False)
        e2 = cl.enqueue_copy(q2, pin2, b, is_blocking=False)
        e1.wait()
        e2.wait()

    out["pinned_h2d_and_d2h_at_once"] = gb_per_s(median(both_pinned, reps), 2 * nbytes)
    back = np.empty_like(host)
    st1, st2 = transfers.staging_for(cl, q), transfers.staging_for(cl, q2)
    if st1 is None or st2 is None:
        return out

    def staged_sequential() -> None:
        st1.upload(a, host)
        q.finish()
        st2.download(back, b)

    def staged_at_once() -> None:
        t = threading.Thread(target=st2.download, args=(back, b))
        t.start()
        st1.upload(a, host)
        q.finish()
        t.join()

    out["staged_h2d_then_d2h"] = gb_per_s(median(staged_sequential, reps), 2 * nbytes)
    out["staged_h2d_and_d2h_at_once"] = gb_per_s(median(staged_at_once, reps), 2 * nbytes)
    assert np.array_equal(back, host)
    return out
