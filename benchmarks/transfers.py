"""Host<->device transfers of NumPy arguments, against the link and the host's memory (issue 18).

Measures, on one OpenCL device, in one run (median of ``--reps`` after warm-up), per size:

- the link: ``enqueue_copy`` host->device and device->host from pageable NumPy memory and from
  pinned ``ALLOC_HOST_PTR`` memory; the old per-launch path (a fresh ``Buffer(COPY_HOST_PTR)``);
- clpy launches whose NumPy arguments are copied in and out: ``touch`` reads ``x`` and writes
  ``y`` (2·size over the link), ``mix3`` reads three arrays and writes two (5·size), with NumPy
  arguments and with ``clpy.pinned_empty`` arrays; ``touch`` over 8 chunks, launch after
  launch or all enqueued at once (``wait=False``: the copy back of one chunk overlaps the
  staging of the next); the staging knobs (threads x chunk size);
- what bounds a NumPy-argument transfer: the host's memory copy rate with 1..16 threads
  (NumPy ``copyto`` pageable->pageable, pageable->pinned and pinned->pageable, the copies
  clpy's staging makes, and pinned->a new array, as ``DeviceArray.get()`` does), and the link
  both ways at once (pinned upload on one queue while a
  pinned download runs on another; a staged upload while a staged download runs);
- the split path of ``clpy/runtime/transfers.py`` (``DIRECT_SHARE``: part of each copy goes
  by the driver's own pageable path on a second queue while clpy stages the rest), for both
  launches, against the all-staged path and the unstaged one;
- DeviceArray traffic: ``to_device``, ``get``, one-element reads ``d[i]``.

    python -m benchmarks.transfers [--platform nvidia] [--mib 16,256] [--reps 20] [--out DIR]
        [--parts link,launch,sweep,host,duplex,split,resident]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

import clpy
from clpy import Global, float32, int32
from clpy.runtime import transfers

PARTS = ("link", "launch", "sweep", "host", "duplex", "split", "resident", "paths")


@clpy.kernel
def touch(x: Global[float32], y: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    if i < n:
        y[i] = x[i] + 1.0


@clpy.kernel
def mix3(
    a: Global[float32],
    b: Global[float32],
    c: Global[float32],
    y: Global[float32],
    z: Global[float32],
    n: int32,
):
    i = clpy.get_global_id(0)
    if i < n:
        y[i] = a[i] + b[i]
        z[i] = b[i] * c[i]


def _median(fn: Callable[[], Any], reps: int) -> float:
    fn()
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def run(
    platform: str, sizes_mib: list[int], reps: int, parts: set[str], out: Path | None = None
) -> dict[str, Any]:
    """Measure every size; with ``out``, the JSON is rewritten after each size (a run cut
    short by a time limit keeps what it measured)."""
    import pyopencl as cl

    dev = [d for p in cl.get_platforms() if platform in p.name.lower() for d in p.get_devices()][0]
    cdev = clpy.get_device(dev)
    res: dict[str, Any] = {
        "device": dev.name,
        "driver": dev.driver_version,
        "cpus": os.cpu_count(),
        "mem_base_addr_align_bytes": dev.mem_base_addr_align // 8,
        "parts": sorted(parts),
        "rows": [],
    }
    for mib in sizes_mib:
        res["rows"].append(_measure(cl, cdev, mib << 20, reps, parts))
        print(_bound_note(res["rows"][-1]), flush=True)
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            (out / _file_name(res["device"])).write_text(json.dumps(res, indent=1))
    return res


def _file_name(device: str) -> str:
    return "transfers_" + device.split()[1 if "NVIDIA" in device else 0].lower() + ".json"


def _gbps(t: float, nb: int) -> float:
    return nb / t / 1e9


def _measure(cl: Any, cdev: Any, nbytes: int, reps: int, parts: set[str]) -> dict[str, Any]:
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
        return _gbps(t, nb)

    if "link" in parts:
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

        r["h2d_fresh_copy_host_ptr"] = gbps(_median(fresh, few))
    nn = np.int32(n)
    y = np.zeros_like(host)

    def launch() -> None:
        touch[n](host, y, nn, device=cdev)

    arrays = [np.random.default_rng(k).random(n, dtype=np.float32) for k in range(3)]
    outs = [np.zeros_like(host) for _ in range(2)]

    def launch_mix() -> None:
        mix3[n](*arrays, *outs, nn, device=cdev)

    if "launch" in parts:
        r["clpy_numpy_launch"] = gbps(_median(launch, reps), 2 * nbytes)  # x in, y out
        assert np.array_equal(y, host + 1)
        r["clpy_numpy_mix"] = gbps(_median(launch_mix, reps), 5 * nbytes)  # 3 in, 2 out
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
        r["clpy_numpy_chunked_wait"] = gbps(_median(lambda: chunked(True), reps), 2 * 8 * m * 4)
        y[:] = 0
        r["clpy_numpy_chunked_async"] = gbps(_median(lambda: chunked(False), reps), 2 * 8 * m * 4)
        assert np.array_equal(y[: 8 * m], host[: 8 * m] + 1)
        xp = clpy.pinned_empty((n,), np.float32, cdev)
        yp = clpy.pinned_empty((n,), np.float32, cdev)
        xp[:] = host
        r["clpy_pinned_launch"] = gbps(
            _median(lambda: touch[n](xp, yp, nn, device=cdev), reps), 2 * nbytes
        )
        assert np.array_equal(yp, host + 1)
        del xp, yp
        if "link" in parts:
            link = 1 / (
                1 / max(r["h2d_pageable"], r["h2d_pinned"])
                + 1 / max(r["d2h_pageable"], r["d2h_pinned"])
            )
            r["link_in_plus_out"] = link * 2  # the same 2·nbytes at the best link rates
            r["clpy_vs_link"] = r["clpy_numpy_launch"] / r["link_in_plus_out"]
            r["pinned_vs_link"] = r["clpy_pinned_launch"] / r["link_in_plus_out"]
    if "sweep" in parts:  # the staging knobs (clpy/runtime/transfers.py): threads x chunk size
        sweep = {}
        for threads in (1, 4, 8, 16):
            for chunk_mib in (8, 16, 64):
                with _knobs(COPY_THREADS=threads, CHUNK=chunk_mib << 20, STAGE_CPU_DEVICES=True):
                    sweep[f"t{threads}_c{chunk_mib}"] = gbps(_median(launch, few), 2 * nbytes)
        r["staging_sweep"] = sweep
    if "host" in parts:
        r["host_copy"] = _host_copies(cl, q, host, pin_host, few)
    if "duplex" in parts:
        with _knobs(STAGE_CPU_DEVICES=True):
            r["duplex"] = _duplex(cl, cdev, host, pin_host, few)
    if "split" in parts:  # all staged, part by the driver on a second queue, none staged
        split: dict[str, float] = {}
        paths: dict[str, dict[str, Any]] = {
            "staged": dict(DIRECT_SHARE=0.0),
            "split0.25": dict(DIRECT_SHARE=0.25),
            "split0.4": dict(DIRECT_SHARE=0.4),
            "direct": dict(DIRECT_SHARE=0.0, STAGE_MIN=1 << 62),
        }
        for name, knobs in paths.items():
            with _knobs(STAGE_CPU_DEVICES=True, **knobs):
                y[:] = 0
                split[f"touch_{name}"] = gbps(_median(launch, few), 2 * nbytes)
                assert np.array_equal(y, host + 1)
                outs[1][:] = 0
                split[f"mix3_{name}"] = gbps(_median(launch_mix, few), 5 * nbytes)
                assert np.array_equal(outs[1], arrays[1] * arrays[2])
        r["split"] = split
    if "paths" in parts:
        r["paths"] = _paths(cl, cdev, host, reps)
        print(_paths_note(nbytes, r["paths"]), flush=True)
    if "resident" in parts:
        dx = clpy.to_device(host, cdev)
        dy = clpy.zeros_like(dx)
        t_res = _median(lambda: (touch[n](dx, dy, nn, device=cdev), q.finish()), reps)
        r["kernel_resident_ms"] = t_res * 1e3
        r["to_device_GBps"] = gbps(_median(lambda: clpy.to_device(host, cdev), reps))
        r["get_GBps"] = gbps(_median(dx.get, reps))
        r["element_read_us"] = _median(lambda: dy[n // 2], reps) * 1e6
        assert dy[n // 2] == host[n // 2] + 1
    return r


def _fresh_copier() -> None:
    old = transfers._COPIER
    transfers._COPIER = None
    if old is not None:
        old.shutdown(wait=True)


@contextlib.contextmanager
def _knobs(**values: Any) -> Iterator[None]:
    """clpy/runtime/transfers.py's settings changed for a measurement (fresh staging areas and
    copy threads on both sides)."""
    saved = {k: getattr(transfers, k) for k in values}
    for k, v in values.items():
        setattr(transfers, k, v)
    _fresh_copier()
    transfers.clear_pools()
    try:
        yield
    finally:
        for k, v in saved.items():
            setattr(transfers, k, v)
        _fresh_copier()
        transfers.clear_pools()


# The paths "paths" compares: clpy/runtime/transfers.py settings (the launcher's default is
# PIPELINE "pair", COPY_THREADS 8, CHUNK 64 MiB).
_PATHS: dict[str, dict[str, Any]] = {
    "direct": dict(STAGE_MIN=1 << 62),
    "pair_t8_c64": dict(PIPELINE="pair", COPY_THREADS=8, CHUNK=64 << 20),
    "pair_t16_c64": dict(PIPELINE="pair", COPY_THREADS=16, CHUNK=64 << 20),
    "pair_t16_c16": dict(PIPELINE="pair", COPY_THREADS=16, CHUNK=16 << 20),
    "ring_t8_s8_k16": dict(PIPELINE="ring", COPY_THREADS=8, RING_SLOT=8 << 20, RING_SLOTS=16),
    "ring_t16_s8_k16": dict(PIPELINE="ring", COPY_THREADS=16, RING_SLOT=8 << 20, RING_SLOTS=16),
    "ring_t16_s4_k32": dict(PIPELINE="ring", COPY_THREADS=16, RING_SLOT=4 << 20, RING_SLOTS=32),
    "ring_t16_s16_k16": dict(PIPELINE="ring", COPY_THREADS=16, RING_SLOT=16 << 20, RING_SLOTS=16),
    "ring_t12_s8_k24": dict(PIPELINE="ring", COPY_THREADS=12, RING_SLOT=8 << 20, RING_SLOTS=24),
    "ring_t16_s8_k16_noflush": dict(
        PIPELINE="ring", COPY_THREADS=16, RING_SLOT=8 << 20, RING_SLOTS=16, RING_FLUSH=False
    ),
}


def _paths(cl: Any, cdev: Any, host: np.ndarray, reps: int) -> dict[str, Any]:
    """Each way of moving a pageable NumPy array (``host``) to a device buffer and back, alone
    (``h2d``: until the data is on the device; ``d2h``: into an existing array, as a launch's
    copy back does), and the ``touch`` launch with NumPy arguments through it (x in, y in: the
    launcher cannot know the kernel writes all of y, y out). Also raw paths the launcher does
    not take: ``use_host_ptr`` (a ``USE_HOST_PTR`` buffer on the NumPy memory, copied on the
    device; for d2h, mapped afterwards so the host memory holds the data),
    ``uhp_cached_aligned`` / ``uhp_fresh_aligned`` (USE_HOST_PTR on page-aligned copies,
    kept and synced by map/unmap, or made per use) and ``whole_pinned`` (the whole array
    copied by 16 threads into one pinned buffer, then one DMA: no overlap). Two passes over
    the paths, the second in reverse order; medians of all samples."""
    q, ctx = cdev.queue, cdev.context
    mf = cl.mem_flags
    nbytes = host.nbytes
    n = host.size
    nn = np.int32(n)
    dbuf = cl.Buffer(ctx, mf.READ_WRITE, nbytes)
    back = np.empty_like(host)
    back[:] = 0
    y = np.zeros_like(host)
    few = max(3, reps // 2)
    samples: dict[str, dict[str, list[float]]] = {}

    def add(path: str, what: str, fn: Callable[[], Any]) -> None:
        fn()  # warm-up: staging areas, threads, buffers
        for _ in range(few):
            t0 = time.perf_counter()
            fn()
            samples.setdefault(path, {}).setdefault(what, []).append(time.perf_counter() - t0)

    def knob_path(name: str) -> None:
        with _knobs(STAGE_CPU_DEVICES=True, **_PATHS[name]):
            add(name, "h2d", lambda: (transfers.upload(cl, q, dbuf, host), q.finish()))
            back[:] = 0
            add(name, "d2h", lambda: transfers.download(cl, q, back, dbuf))
            assert np.array_equal(back, host), name
            y[:] = 0
            add(name, "launch", lambda: touch[n](host, y, nn, device=cdev))
            assert np.array_equal(y, host + 1), name

    def use_host_ptr() -> None:
        def h2d() -> None:
            b = cl.Buffer(ctx, mf.READ_ONLY | mf.USE_HOST_PTR, hostbuf=host)
            cl.enqueue_copy(q, dbuf, b)
            q.finish()

        def d2h() -> None:
            b = cl.Buffer(ctx, mf.READ_WRITE | mf.USE_HOST_PTR, hostbuf=back)
            cl.enqueue_copy(q, b, dbuf)
            m, _ = cl.enqueue_map_buffer(q, b, cl.map_flags.READ, 0, (nbytes,), np.uint8)
            del m  # unmapped when the array goes
            q.finish()

        def launch() -> None:
            xb = cl.Buffer(ctx, mf.READ_ONLY | mf.USE_HOST_PTR, hostbuf=host)
            yb = cl.Buffer(ctx, mf.READ_WRITE | mf.USE_HOST_PTR, hostbuf=y)
            touch[n](xb, yb, nn, device=cdev)
            m, _ = cl.enqueue_map_buffer(q, yb, cl.map_flags.READ, 0, (nbytes,), np.uint8)
            del m
            q.finish()

        add("use_host_ptr", "h2d", h2d)
        back[:] = 0
        add("use_host_ptr", "d2h", d2h)
        assert np.array_equal(back, host)
        y[:] = 0
        add("use_host_ptr", "launch", launch)
        assert np.array_equal(y, host + 1)

    def uhp_cached() -> None:
        """USE_HOST_PTR buffers made once on page-aligned copies of the arrays and kept (as a
        launcher would keep them per array); each use says the host side changed (a map for
        WRITE_INVALIDATE_REGION, unmapped at once) or reads it back (a map for READ): the
        spec's way to sync a USE_HOST_PTR buffer. If the driver pins the memory at creation,
        the unmap is one DMA at the link's rate."""
        ah, aback, ay = _aligned_copy(host), _aligned_copy(back), _aligned_copy(y)
        xb = cl.Buffer(ctx, mf.READ_ONLY | mf.USE_HOST_PTR, hostbuf=ah)
        bb = cl.Buffer(ctx, mf.READ_WRITE | mf.USE_HOST_PTR, hostbuf=aback)
        yb = cl.Buffer(ctx, mf.READ_WRITE | mf.USE_HOST_PTR, hostbuf=ay)
        wi, rd, wr = (
            cl.map_flags.WRITE_INVALIDATE_REGION,
            cl.map_flags.READ,
            cl.map_flags.WRITE,
        )

        def h2d() -> None:
            _map_unmap(cl, q, xb, wi, nbytes)
            cl.enqueue_copy(q, dbuf, xb)
            q.finish()

        def d2h() -> None:
            cl.enqueue_copy(q, bb, dbuf)
            _map_unmap(cl, q, bb, rd, nbytes)
            q.finish()

        def launch() -> None:
            _map_unmap(cl, q, xb, wi, nbytes)
            _map_unmap(cl, q, yb, rd | wr, nbytes)
            touch[n](xb, yb, nn, device=cdev)
            _map_unmap(cl, q, yb, rd, nbytes)
            q.finish()

        add("uhp_cached_aligned", "h2d", h2d)
        aback[:] = 0
        add("uhp_cached_aligned", "d2h", d2h)
        assert np.array_equal(aback, host)
        ay[:] = 0
        add("uhp_cached_aligned", "launch", launch)
        assert np.array_equal(ay, host + 1)

    def uhp_fresh_aligned() -> None:
        ah, ay = _aligned_copy(host), _aligned_copy(y)

        def h2d() -> None:
            b = cl.Buffer(ctx, mf.READ_ONLY | mf.USE_HOST_PTR, hostbuf=ah)
            cl.enqueue_copy(q, dbuf, b)
            q.finish()

        def launch() -> None:
            xb = cl.Buffer(ctx, mf.READ_ONLY | mf.USE_HOST_PTR, hostbuf=ah)
            yb = cl.Buffer(ctx, mf.READ_WRITE | mf.USE_HOST_PTR, hostbuf=ay)
            touch[n](xb, yb, nn, device=cdev)
            _map_unmap(cl, q, yb, cl.map_flags.READ, nbytes)
            q.finish()

        add("uhp_fresh_aligned", "h2d", h2d)
        ay[:] = 0
        add("uhp_fresh_aligned", "launch", launch)
        assert np.array_equal(ay, host + 1)

    def direct_queues(k: int) -> Callable[[], None]:
        """The driver's own pageable path, the array split in k parts, each copied (blocking)
        by its own thread on its own queue: whether the driver's staging copies run in
        parallel."""

        def run() -> None:
            qs = [cl.CommandQueue(ctx, q.device) for _ in range(k)]
            step = -(-nbytes // k) // 4096 * 4096 or nbytes
            src, dst = host.view(np.uint8), back.view(np.uint8)
            parts = [(o, min(step, nbytes - o)) for o in range(0, nbytes, step)]
            with ThreadPoolExecutor(len(parts)) as pool:

                def h2d() -> None:
                    futs = [
                        pool.submit(
                            lambda qq, o, m: cl.enqueue_copy(
                                qq, dbuf, src[o : o + m], dst_offset=o
                            ).wait(),
                            qs[i % k],
                            o,
                            m,
                        )
                        for i, (o, m) in enumerate(parts)
                    ]
                    for f in futs:
                        f.result()

                def d2h() -> None:
                    futs = [
                        pool.submit(
                            lambda qq, o, m: cl.enqueue_copy(
                                qq, dst[o : o + m], dbuf, src_offset=o
                            ).wait(),
                            qs[i % k],
                            o,
                            m,
                        )
                        for i, (o, m) in enumerate(parts)
                    ]
                    for f in futs:
                        f.result()

                add(f"direct_q{k}", "h2d", h2d)
                back[:] = 0
                add(f"direct_q{k}", "d2h", d2h)
                assert np.array_equal(back, host)

        return run

    def direct_chunked() -> None:
        """The driver's pageable path in 64 MiB pieces, all enqueued, then one wait."""
        step = 64 << 20
        src, dst = host.view(np.uint8), back.view(np.uint8)

        def h2d() -> None:
            for o in range(0, nbytes, step):
                cl.enqueue_copy(q, dbuf, src[o : o + step], dst_offset=o, is_blocking=False)
            q.finish()

        def d2h() -> None:
            for o in range(0, nbytes, step):
                cl.enqueue_copy(q, dst[o : o + step], dbuf, src_offset=o, is_blocking=False)
            q.finish()

        add("direct_c64", "h2d", h2d)
        back[:] = 0
        add("direct_c64", "d2h", d2h)
        assert np.array_equal(back, host)

    def whole_pinned() -> None:
        pin = transfers.pinned_array(cl, q, host.shape, host.dtype)
        with _knobs(COPY_THREADS=16):

            def h2d() -> None:
                transfers._copy(pin.view(np.uint8), host.view(np.uint8))
                cl.enqueue_copy(q, dbuf, pin)
                q.finish()

            def d2h() -> None:
                cl.enqueue_copy(q, pin, dbuf)
                transfers._copy(back.view(np.uint8), pin.view(np.uint8))

            add("whole_pinned", "h2d", h2d)
            back[:] = 0
            add("whole_pinned", "d2h", d2h)
            assert np.array_equal(back, host)

    order: list[Callable[[], None]] = [lambda nm=nm: knob_path(nm) for nm in _PATHS]  # type: ignore[misc]
    order += [use_host_ptr, uhp_cached, uhp_fresh_aligned, whole_pinned]
    order += [direct_chunked, direct_queues(2), direct_queues(4)]
    for fn in order + order[::-1]:
        fn()
    dx = clpy.to_device(host, cdev)
    dy = clpy.zeros_like(dx)
    kernel_s = _median(lambda: (touch[n](dx, dy, nn, device=cdev), q.finish()), reps)
    out: dict[str, Any] = {"kernel_resident_ms": kernel_s * 1e3}
    for path, d in samples.items():
        out[path] = {f"{w}_GBps": nbytes / statistics.median(ts) / 1e9 for w, ts in d.items()}
    # the launch: x in, y in, y out (3 transfers) and the kernel, one after the other
    best_h2d = max(v.get("h2d_GBps", 0.0) for v in out.values() if isinstance(v, dict))
    best_d2h = max(v.get("d2h_GBps", 0.0) for v in out.values() if isinstance(v, dict))
    bound_s = 2 * nbytes / best_h2d / 1e9 + nbytes / best_d2h / 1e9 + kernel_s
    out["bound"] = {
        "best_h2d_GBps": best_h2d,
        "best_d2h_GBps": best_d2h,
        "launch_bound_ms": bound_s * 1e3,
    }
    for v in out.values():
        if isinstance(v, dict) and "launch_GBps" in v:
            t = nbytes / v["launch_GBps"] / 1e9
            v["launch_vs_bound"] = bound_s / t
            if "h2d_GBps" in v:
                v["h2d_vs_best"] = v["h2d_GBps"] / best_h2d
            if "d2h_GBps" in v:
                v["d2h_vs_best"] = v["d2h_GBps"] / best_d2h
    return out


def _aligned_copy(a: np.ndarray) -> np.ndarray:
    """A copy of ``a`` whose data starts on a 4 KiB page (NumPy's large arrays start 16 bytes
    into one: malloc's header)."""
    raw = np.empty(a.nbytes + 4096, np.uint8)
    off = (-raw.ctypes.data) % 4096
    out = raw[off : off + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


def _map_unmap(cl: Any, q: Any, buf: Any, flags: Any, nbytes: int) -> None:
    """Map ``buf`` whole and unmap it at once (the spec's sync of a USE_HOST_PTR buffer)."""
    m, _ = cl.enqueue_map_buffer(q, buf, flags, 0, (nbytes,), np.uint8)
    m.base.release(q)


def _paths_note(nbytes: int, p: dict[str, Any]) -> str:
    b = p["bound"]
    lines = [
        f"{nbytes >> 20} MiB paths (GB/s of one array; launch: touch with NumPy x, y = x in, "
        f"y in, y out + kernel {p['kernel_resident_ms']:.2f} ms, as array bytes per second). "
        f"Bound: best h2d {b['best_h2d_GBps']:.1f}, best d2h {b['best_d2h_GBps']:.1f} GB/s "
        f"over these paths -> launch >= {b['launch_bound_ms']:.2f} ms"
    ]
    for k, v in p.items():
        if k in ("bound", "kernel_resident_ms") or not isinstance(v, dict):
            continue
        extra = (
            f" launch {v['launch_GBps']:.1f} ({v['launch_vs_bound']:.2f} of bound)"
            if "launch_GBps" in v
            else ""
        )
        nan = float("nan")
        lines.append(
            f"  {k:26s} h2d {v.get('h2d_GBps', nan):6.1f}  d2h {v.get('d2h_GBps', nan):6.1f}{extra}"
        )
    return "\n".join(lines)


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

            out[f"pageable_to_pageable_t{threads}"] = _gbps(
                _median(lambda: copy(dst, src), reps), src.size
            )
            out[f"pageable_to_pinned_t{threads}"] = _gbps(
                _median(lambda: copy(pin, src), reps), src.size
            )
            out[f"pinned_to_pageable_t{threads}"] = _gbps(
                _median(lambda: copy(dst, pin), reps), src.size
            )
            # into a new array, as DeviceArray.get() does: its pages are faulted in by the copy
            out[f"pinned_to_new_t{threads}"] = _gbps(
                _median(lambda: copy(np.empty_like(src), pin), reps), src.size
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

    out["pinned_h2d_and_d2h_at_once"] = _gbps(_median(both_pinned, reps), 2 * nbytes)
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

    out["staged_h2d_then_d2h"] = _gbps(_median(staged_sequential, reps), 2 * nbytes)
    out["staged_h2d_and_d2h_at_once"] = _gbps(_median(staged_at_once, reps), 2 * nbytes)
    assert np.array_equal(back, host)
    return out


def _print(res: dict[str, Any]) -> None:
    rows = res["rows"]
    nested = {k for r in rows for k, v in r.items() if isinstance(v, dict)}
    cols = [k for k in rows[0] if k != "MiB" and k not in nested]
    print(
        f"# transfers on {res['device']} (driver {res['driver']}, {res['cpus']} CPUs, base "
        f"address alignment {res['mem_base_addr_align_bytes']} bytes); GB/s unless noted"
    )
    print("| MiB | " + " | ".join(cols) + " |")
    print("|" + "---|" * (len(cols) + 1))
    for r in rows:
        print(f"| {r['MiB']} | " + " | ".join(f"{r.get(c, float('nan')):.2f}" for c in cols) + " |")
    for key in sorted(nested - {"paths"}):
        print(f"\n## {key} (GB/s)")
        names = list(rows[0].get(key, {}))
        print("| MiB | " + " | ".join(names) + " |")
        print("|" + "---|" * (len(names) + 1))
        for r in rows:
            d = r.get(key, {})
            vals = " | ".join(f"{d.get(k, float('nan')):.2f}" for k in names)
            print(f"| {r['MiB']} | {vals} |")


def _print_paths(rows: list[dict[str, Any]]) -> None:
    """One row per size and path: h2d, d2h, launch GB/s and the launch against the bound."""
    if not any("paths" in r for r in rows):
        return
    print(
        "\n## paths: one array each way alone, and the touch launch (x in, y in, y out + "
        "kernel) as array GB/s; bound = best h2d and d2h of all paths, one after the other"
    )
    print("| MiB | path | h2d | d2h | launch | launch / bound |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        p = r.get("paths", {})
        for name, v in p.items():
            if not isinstance(v, dict) or name == "bound":
                continue
            nan = float("nan")
            print(
                f"| {r['MiB']} | {name} | {v.get('h2d_GBps', nan):.2f} | "
                f"{v.get('d2h_GBps', nan):.2f} | {v.get('launch_GBps', nan):.2f} | "
                f"{v.get('launch_vs_bound', nan):.2f} |"
            )
        b = p.get("bound")
        if b:
            print(
                f"| {r['MiB']} | **bound** | {b['best_h2d_GBps']:.2f} | {b['best_d2h_GBps']:.2f}"
                f" | {b['launch_bound_ms']:.2f} ms | |"
            )


def _bound_note(r: dict[str, Any]) -> str:
    """What bounds a NumPy-argument launch at this size: the link or the host's copy."""
    hc = r.get("host_copy")
    if not hc or "h2d_pinned" not in r:
        return f"{r['MiB']} MiB: (run the link and host parts for the bound)"
    to_pin = max(v for k, v in hc.items() if k.startswith("pageable_to_pinned"))
    from_pin = max(v for k, v in hc.items() if k.startswith("pinned_to_pageable"))
    up = min(r["h2d_pinned"], to_pin)
    down = min(r["d2h_pinned"], from_pin)
    # seconds per byte moved, x in + y out one after the other, plus the kernel itself
    kernel_s = r.get("kernel_resident_ms", 0.0) / 1e3
    size = r["MiB"] * (1 << 20)
    bound = 2 * size / (size / up / 1e9 + size / down / 1e9 + kernel_s) / 1e9
    pinned = 2 * size / (size / r["h2d_pinned"] / 1e9 + size / r["d2h_pinned"] / 1e9 + kernel_s)
    got = r.get("clpy_numpy_launch", float("nan"))
    got_pinned = r.get("clpy_pinned_launch", float("nan"))
    return (
        f"{r['MiB']} MiB: staged upload <= min(link {r['h2d_pinned']:.1f}, host copy into "
        f"pinned {to_pin:.1f}) = {up:.1f} GB/s; staged download <= min(link "
        f"{r['d2h_pinned']:.1f}, host copy out of pinned {from_pin:.1f}) = {down:.1f} GB/s; "
        f"x in, kernel ({kernel_s * 1e3:.2f} ms), y out, one after the other, <= {bound:.1f} "
        f"GB/s; clpy NumPy launch {got:.1f} GB/s ({got / bound:.2f} of that bound). "
        f"Pinned arrays: <= {pinned / 1e9:.1f} GB/s, clpy {got_pinned:.1f} "
        f"({got_pinned / (pinned / 1e9):.2f})"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--platform", default=os.environ.get("CLPY_TEST_PLATFORM", "portable"))
    ap.add_argument("--mib", default="16,64,256")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--parts", default=",".join(PARTS), help="comma-separated: " + ",".join(PARTS))
    ap.add_argument("--out", default=os.environ.get("OUT", "benchmarks/results"))
    a = ap.parse_args()
    parts = set(a.parts.split(","))
    if parts - set(PARTS):
        ap.error(f"unknown parts {sorted(parts - set(PARTS))}; choose from {PARTS}")
    with warnings.catch_warnings():  # the repeated-upload hint is what this measures
        warnings.simplefilter("ignore", transfers.PerformanceHint)
        sizes = [int(s) for s in a.mib.split(",")]
        res = run(a.platform.lower(), sizes, a.reps, parts, Path(a.out))
    _print(res)
    _print_paths(res["rows"])


if __name__ == "__main__":
    main()
