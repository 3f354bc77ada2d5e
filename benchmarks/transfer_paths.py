"""The "paths" part of benchmarks/transfers.py: each way of moving a pageable NumPy array to
a device buffer and back (clpy's staging settings, USE_HOST_PTR buffers, the driver's own
path split over queues or chunks, one whole pinned copy), alone and in a launch, against
the bound the best of them sets."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

import clpy
from benchmarks.transfer_setup import median, staging_knobs, touch
from clpy.runtime import transfers

# The paths "paths" compares: clpy/runtime/transfers.py settings (the launcher's default is
# PIPELINE "pair", COPY_THREADS 8, CHUNK 64 MiB).
_PATHS: dict[str, dict[str, Any]] = {
    "direct": dict(STAGE_MIN=1 << 62, REGISTER_FROM=1 << 62),
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
    # the arrays' own memory registered once (clpy/runtime/registered.py): no staging copy
    "register": dict(PIPELINE="register"),
}


def measure_paths(cl: Any, cdev: Any, host: np.ndarray, reps: int) -> dict[str, Any]:
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

    def add_path(
        path: str,
        h2d: Callable[[], Any],
        d2h: Callable[[], Any] | None = None,
        launch: Callable[[], Any] | None = None,
        d2h_into: np.ndarray = back,
        launch_into: np.ndarray = y,
    ) -> None:
        """A path's h2d, then its d2h into ``d2h_into`` and its launch writing
        ``launch_into`` (each zeroed first, then checked), where it has them."""
        add(path, "h2d", h2d)
        if d2h is not None:
            d2h_into[:] = 0
            add(path, "d2h", d2h)
            assert np.array_equal(d2h_into, host), path
        if launch is not None:
            launch_into[:] = 0
            add(path, "launch", launch)
            assert np.array_equal(launch_into, host + 1), path

    def knob_path(name: str) -> None:
        with staging_knobs(STAGE_CPU_DEVICES=True, **_PATHS[name]):
            add_path(
                name,
                lambda: (transfers.upload(cl, q, dbuf, host), q.finish()),
                lambda: transfers.download(cl, q, back, dbuf),
                lambda: touch[n](host, y, nn, device=cdev),
            )

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

        add_path("use_host_ptr", h2d, d2h, launch)

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

        add_path("uhp_cached_aligned", h2d, d2h, launch, d2h_into=aback, launch_into=ay)

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

        add_path("uhp_fresh_aligned", h2d, launch=launch, launch_into=ay)

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

                add_path(f"direct_q{k}", h2d, d2h)

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

        add_path("direct_c64", h2d, d2h)

    def whole_pinned() -> None:
        pin = transfers.pinned_array(cl, q, host.shape, host.dtype)
        with staging_knobs(COPY_THREADS=16):

            def h2d() -> None:
                transfers._copy(pin.view(np.uint8), host.view(np.uint8))
                cl.enqueue_copy(q, dbuf, pin)
                q.finish()

            def d2h() -> None:
                cl.enqueue_copy(q, pin, dbuf)
                transfers._copy(back.view(np.uint8), pin.view(np.uint8))

            add_path("whole_pinned", h2d, d2h)

    order: list[Callable[[], None]] = [lambda nm=nm: knob_path(nm) for nm in _PATHS]  # type: ignore[misc]
    order += [use_host_ptr, uhp_cached, uhp_fresh_aligned, whole_pinned]
    order += [direct_chunked, direct_queues(2), direct_queues(4)]
    for fn in order + order[::-1]:
        fn()
    dx = clpy.to_device(host, cdev)
    dy = clpy.zeros_like(dx)
    kernel_s = median(lambda: (touch[n](dx, dy, nn, device=cdev), q.finish()), reps)
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
