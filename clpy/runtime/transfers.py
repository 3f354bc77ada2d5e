"""Host-to-device copies of NumPy arguments: pooled device buffers, written with
``clEnqueueWriteBuffer``, and a hint when one array keeps making the trip.

A fresh ``Buffer(COPY_HOST_PTR)`` per launch costs an allocation and, on NVIDIA's driver, an
unpipelined copy (measured 1–1.8 GB/s on an H100, where ``enqueue_copy`` into an existing
buffer reached ~8 GB/s: benchmarks/transfers.py). The pool keeps freed buffers per command
queue, keyed by size; a buffer goes back as soon as its launch is enqueued, which is safe
because the queue is in order: the next write into it runs after the kernel (and copy-back)
that used it. Out-of-order queues get fresh buffers.
"""

from __future__ import annotations

import os
import threading
import warnings
import weakref
from typing import Any

import numpy as np

from clpy.runtime.registered import REGISTER_MIN, Registered

# Bytes of idle device memory the pools of one device may hold together, over all its queues
# (the rest is released).
POOL_LIMIT = 1 << 30

# After this many launches in a row that upload one unchanged NumPy array, say once that a
# device array would keep it there.
HINT_AFTER = 16


class PerformanceHint(UserWarning):
    """A launch pattern that keeps copying the same data: keep it on the device
    (``clpy.to_device``). ``warnings.filterwarnings("ignore", category=...)`` silences it."""


class BufferPool:
    """Idle device buffers of one in-order queue, by size in bytes."""

    def __init__(self, cl: Any, ctx: Any, device: Any = None) -> None:
        self._cl = cl
        self._ctx = ctx
        self._free: dict[int, list[Any]] = {}
        self._bytes = 0
        self._lock = threading.Lock()
        # the pools of the same device (this one included), for POOL_LIMIT
        self._siblings = _DEVICE_POOLS.setdefault(device, weakref.WeakSet())
        self._siblings.add(self)

    def take(self, nbytes: int) -> Any:
        with self._lock:
            bufs = self._free.get(nbytes)
            if bufs:
                self._bytes -= nbytes
                return bufs.pop()
        return self._cl.Buffer(self._ctx, self._cl.mem_flags.READ_WRITE, nbytes)

    def give(self, buf: Any, nbytes: int) -> None:
        sib = self._siblings
        # an estimate (other pools read without their locks); one pool: its own count
        idle = self._bytes if len(sib) == 1 else sum([p._bytes for p in list(sib)])
        with self._lock:
            if idle + nbytes > POOL_LIMIT:
                return  # dropped: pyopencl releases it when the last reference goes
            self._free.setdefault(nbytes, []).append(buf)
            self._bytes += nbytes

    def clear(self) -> None:
        with self._lock:
            self._free.clear()
            self._bytes = 0


# queue handle -> (the queue, kept alive with its pool; its pool). pyopencl queues cannot be
# weakly referenced; clpy.clear_caches() empties this.
_POOLS: dict[int, tuple[Any, BufferPool]] = {}
# The pools of each device (by device handle): POOL_LIMIT counts their idle bytes together.
_DEVICE_POOLS: dict[Any, weakref.WeakSet[BufferPool]] = {}
_pools_lock = threading.Lock()


def pool_for(cl: Any, queue: Any) -> BufferPool | None:
    """The pool of an in-order ``queue`` (None for an out-of-order one)."""
    if queue.properties & cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE:
        return None
    key = int(queue.int_ptr)
    with _pools_lock:
        entry = _POOLS.get(key)
        if entry is None or entry[0] != queue:
            pool = BufferPool(cl, queue.context, int(queue.device.int_ptr))
            entry = _POOLS[key] = (queue, pool)
    return entry[1]


# Incremented by clear_pools: what a caller keeps of staging_for's answer is stale then.
GENERATION = [0]


def clear_pools() -> None:
    with _pools_lock:
        GENERATION[0] += 1
        for _, pool in _POOLS.values():
            pool.clear()
        _POOLS.clear()
        for _, st in _STAGING.values():
            if isinstance(st, Registered):
                st.clear()  # the arrays its buffers keep alive go too
        _STAGING.clear()


class RepeatWatch:
    """Per launch plan: counts launches in a row that upload the same unchanged array into one
    parameter (same object, address and a sample of its bytes); warns once per process."""

    warned = False

    def __init__(self) -> None:
        self._seen: dict[int, tuple[tuple[int, int, int, bytes], int]] = {}

    def saw(self, j: int, a: np.ndarray, name: str, kernel: str) -> None:
        if RepeatWatch.warned or a.nbytes < (1 << 16):
            return
        flat = a.reshape(-1).view(np.uint8)
        sample = bytes(flat[:: max(1, flat.size // 64)][:64])
        key = (id(a), a.ctypes.data, a.nbytes, sample)
        last = self._seen.get(j)
        count = last[1] + 1 if last is not None and last[0] == key else 1
        self._seen[j] = (key, count)
        if count >= HINT_AFTER:
            RepeatWatch.warned = True
            warnings.warn(
                f"{kernel}(): the NumPy array for parameter {name!r} ({a.nbytes} bytes) was "
                f"copied to the device in {count} launches in a row; keep it there with "
                "d = clpy.to_device(a) and pass d (d.get() copies it back)",
                PerformanceHint,
                stacklevel=5,  # saw < LaunchCopies.upload < CLPlan.run < Launcher < the caller
            )


# ---------------------------------------------------------------------------- pinned staging

# Arrays at least this big travel through pinned (page-locked) host memory: the driver DMAs
# from it at the link's rate (54 GB/s on an H100 host, against 6–12 GB/s from pageable NumPy
# memory: benchmarks/transfers.py). Chunks are double-buffered so that copying one chunk into
# pinned memory overlaps the DMA of the previous one; the host copies use a few threads
# (NumPy releases the GIL while it copies).
STAGE_MIN = 4 << 20
# Registered memory (the pipeline "register") from 1 MiB: a 1 MiB launch of
# scripts/gpu_reg_rounded.py took 148 µs registered against 596 µs copied directly (H100)
REGISTER_FROM = REGISTER_MIN
# Best of a sweep on an H100 host (benchmarks/transfers.py: 1/4/8/16 threads x 8/16/64 MiB
# chunks, 64 and 512 MiB arrays): 8 threads, 64 MiB chunks. Two chunks of pinned memory are
# kept per queue.
CHUNK = 64 << 20
COPY_THREADS = min(8, os.cpu_count() or 1)


# A share of each staged copy's bytes may go by the driver's own path from pageable memory, on
# a second queue of the context, while clpy's threads stage the rest: the two host copies run
# at once (the driver copies into its own pinned buffers). 0 turns it off. Whether it pays is
# a property of the host's memory bandwidth: benchmarks/transfers.py measures both ("split").
DIRECT_SHARE = 0.0
_PAGE = 1 << 12


class Staging:
    """Two pinned host chunks of one queue, mapped once, and the events of their last use."""

    def __init__(self, cl: Any, queue: Any) -> None:
        self._cl = cl
        self.queue = queue
        mf = cl.mem_flags
        self._bufs = [
            cl.Buffer(queue.context, mf.READ_WRITE | mf.ALLOC_HOST_PTR, CHUNK) for _ in range(2)
        ]
        self.slots = [
            cl.enqueue_map_buffer(
                queue, b, cl.map_flags.READ | cl.map_flags.WRITE, 0, (CHUNK,), np.uint8
            )[0]
            for b in self._bufs
        ]
        self.busy: list[Any] = [None, None]
        self.lock = threading.Lock()
        self._side: Any = None  # the second queue of the split path

    def _staged_bytes(self, nbytes: int) -> int:
        """How many leading bytes of a copy go through staging (the rest: the split path)."""
        share = DIRECT_SHARE
        if share <= 0 or nbytes < 2 * CHUNK:
            return nbytes
        return int(nbytes * (1 - min(share, 1.0))) // _PAGE * _PAGE

    def _direct(self, dst: Any, src: Any, **kw: Any) -> Any:
        """An ``enqueue_copy`` of the split path on the second queue, after everything
        enqueued on the main queue so far (a pooled buffer's last kernel, a launch whose
        output this reads)."""
        cl = self._cl
        if self._side is None:
            self._side = cl.CommandQueue(self.queue.context, self.queue.device)
        marker = cl.enqueue_marker(self.queue)
        return cl.enqueue_copy(self._side, dst, src, wait_for=[marker], is_blocking=False, **kw)

    def upload(self, dst: Any, host: np.ndarray, offset: int = 0) -> None:
        """``host`` into device buffer ``dst`` from byte ``offset``; returns once the last
        DMA is enqueued (the host array may change afterwards: every byte is in pinned memory
        or, on the split path, on the device by then)."""
        cl = self._cl
        src = host.reshape(-1).view(np.uint8)
        cut = self._staged_bytes(src.size)
        with self.lock:
            side = None
            if cut < src.size:
                side = self._direct(dst, src[cut:], dst_offset=offset + cut)
            for k, off in enumerate(range(0, cut, CHUNK)):
                s = k & 1
                n = min(CHUNK, cut - off)
                if self.busy[s] is not None:
                    self.busy[s].wait()
                _copy(self.slots[s][:n], src[off : off + n])
                self.busy[s] = cl.enqueue_copy(
                    self.queue, dst, self.slots[s][:n], dst_offset=offset + off, is_blocking=False
                )
            if side is not None:
                side.wait()  # the main queue's next command (the kernel) reads these bytes

    def download(self, host: np.ndarray, src: Any, offset: int = 0) -> None:
        """Device buffer ``src`` from byte ``offset`` into ``host`` (blocking): the DMA of
        chunk k+1 runs while chunk k is copied out of pinned memory."""
        cl = self._cl
        dst = host.reshape(-1).view(np.uint8)
        cut = self._staged_bytes(dst.size)
        offs = list(range(0, cut, CHUNK))
        with self.lock:
            for s in (0, 1):
                if self.busy[s] is not None:
                    self.busy[s].wait()
            side = None
            if cut < dst.size:
                side = self._direct(dst[cut:], src, src_offset=offset + cut)

            def fetch(slot: int, off: int) -> Any:
                """Enqueue the DMA of the chunk at byte ``off`` into pinned slot ``slot``."""
                n = min(CHUNK, cut - off)
                slot_bytes = self.slots[slot][:n]
                return cl.enqueue_copy(
                    self.queue, slot_bytes, src, src_offset=offset + off, is_blocking=False
                )

            evts: list[Any] = [fetch(k, off) for k, off in enumerate(offs[:2])]
            for k, off in enumerate(offs):
                s = k & 1
                n = min(CHUNK, cut - off)
                evts[k].wait()
                _copy(dst[off : off + n], self.slots[s][:n])
                if k + 2 < len(offs):
                    evts.append(fetch(s, offs[k + 2]))
            self.busy = [None, None]
            if side is not None:
                side.wait()


# ---------------------------------------------------------------------------- the ring


# The ring pipeline: RING_SLOTS pinned slots of RING_SLOT bytes; each piece of an array is
# copied into a slot by one worker thread while the DMAs of earlier pieces run, and its DMA is
# enqueued (and the queue flushed) as soon as its copy is done, so the link and the host copy
# overlap piece by piece instead of chunk pair by chunk pair. PIPELINE picks "pair" (Staging
# above: two CHUNK slots, each chunk copied by all threads) or "ring" (benchmarks/transfers.py
# measures both, "paths").
# "register" registers the arrays themselves instead of staging them (clpy/runtime/
# registered.py): the default on NVIDIA, where it moved 49 GB/s each way at 256 MiB and 30-35
# at 16 MiB against the pair's 19-23 and 7-11 (H100, session 7, benchmarks/transfers.py
# "paths"). Elsewhere the default is "pair" (not measured on other GPUs); CLPY_STAGING=pair,
# ring or register picks one for every device (the ring won at 256 MiB on the H100, 31.7
# against 25.6 GB/s to the device, and lost at 16 MiB; transfers_h100_s6.json).
PIPELINES = ("pair", "ring", "register")


def _pipeline_from_env() -> str:
    """CLPY_STAGING's pipeline, or "" for each device's default."""
    v = os.environ.get("CLPY_STAGING", "").strip().lower()
    if v == "" or v in PIPELINES:
        return v
    warnings.warn(
        f"CLPY_STAGING={v!r}: expected one of {', '.join(PIPELINES)}; using 'pair'",
        RuntimeWarning,
        2,
    )
    return "pair"


PIPELINE = _pipeline_from_env()
RING_SLOT = 8 << 20
RING_SLOTS = 16
RING_FLUSH = True


def _fill(evt: Any, dst: np.ndarray, src: np.ndarray) -> None:
    """A worker's part of an upload: wait for the slot's last DMA, then copy into it."""
    if evt is not None:
        evt.wait()
    np.copyto(dst, src)


def _drain(evt: Any, dst: np.ndarray, src: np.ndarray) -> None:
    """A worker's part of a download: wait for the piece's DMA, then copy it out."""
    evt.wait()
    np.copyto(dst, src)


class Ring:
    """RING_SLOTS pinned slots of one queue (one ``ALLOC_HOST_PTR`` buffer mapped once) and
    the event of each slot's last DMA; the same contract as ``Staging``."""

    def __init__(self, cl: Any, queue: Any) -> None:
        self._cl = cl
        self.queue = queue
        self.slot = RING_SLOT
        k = max(2, RING_SLOTS)
        mf = cl.mem_flags
        self._buf = cl.Buffer(queue.context, mf.READ_WRITE | mf.ALLOC_HOST_PTR, self.slot * k)
        whole = cl.enqueue_map_buffer(
            queue, self._buf, cl.map_flags.READ | cl.map_flags.WRITE, 0, (self.slot * k,), np.uint8
        )[0]
        self.slots = [whole[i * self.slot : (i + 1) * self.slot] for i in range(k)]
        self.events: list[Any] = [None] * k
        self.lock = threading.Lock()

    def _pieces(self, n: int) -> list[tuple[int, int]]:
        """Pieces of a copy of ``n`` bytes: a slot each, smaller for arrays of a few slots
        (at least two pieces per copy thread, of at least 1 MiB), so that every thread works."""
        step = -(-n // (2 * max(1, COPY_THREADS)))
        step = min(self.slot, max(1 << 20, -(-step // _PAGE) * _PAGE))
        return [(o, min(step, n - o)) for o in range(0, n, step)]

    def upload(self, dst: Any, host: np.ndarray, offset: int = 0) -> None:
        """``host`` into ``dst`` from byte ``offset``; returns once every piece is in pinned
        memory and its DMA enqueued (the host array may change afterwards)."""
        cl, queue, flush = self._cl, self.queue, RING_FLUSH
        src = host.reshape(-1).view(np.uint8)
        pieces = self._pieces(src.size)
        k = len(self.slots)
        pool = _copier()
        with self.lock:
            futs: list[Any] = []
            nxt = 0
            for j, (o, m) in enumerate(pieces):
                # keep up to k pieces copying ahead; piece i goes into slot i % k once the DMA
                # of piece i - k (already enqueued) has read it
                while nxt < len(pieces) and nxt < j + k:
                    s = nxt % k
                    po, pm = pieces[nxt]
                    futs.append(
                        pool.submit(_fill, self.events[s], self.slots[s][:pm], src[po : po + pm])
                    )
                    nxt += 1
                futs[j].result()
                s = j % k
                self.events[s] = cl.enqueue_copy(
                    queue, dst, self.slots[s][:m], dst_offset=offset + o, is_blocking=False
                )
                if flush:
                    queue.flush()

    def download(self, host: np.ndarray, src: Any, offset: int = 0) -> None:
        """Device buffer ``src`` from byte ``offset`` into ``host`` (blocking): DMAs run up
        to half the ring ahead of the worker threads copying pieces out."""
        cl, queue = self._cl, self.queue
        dst = host.reshape(-1).view(np.uint8)
        pieces = self._pieces(dst.size)
        k = len(self.slots)
        lag = max(1, k // 2)
        pool = _copier()
        with self.lock:
            evs: list[Any] = [None] * len(pieces)
            futs: list[Any] = [None] * len(pieces)

            def enqueue(i: int) -> None:
                o, m = pieces[i]
                evs[i] = cl.enqueue_copy(
                    queue, self.slots[i % k][:m], src, src_offset=offset + o, is_blocking=False
                )

            for i in range(min(k, len(pieces))):
                enqueue(i)
            queue.flush()
            for j, (o, m) in enumerate(pieces):
                futs[j] = pool.submit(_drain, evs[j], dst[o : o + m], self.slots[j % k][:m])
                r = j - lag  # piece r's slot is free once it is copied out: refill it
                if r >= 0 and r + k < len(pieces):
                    futs[r].result()
                    enqueue(r + k)
                    queue.flush()
            for f in futs:
                f.result()
            self.events = [None] * k


_COPIER: Any = None


def _copier() -> Any:
    global _COPIER
    if _COPIER is None:
        from concurrent.futures import ThreadPoolExecutor

        _COPIER = ThreadPoolExecutor(COPY_THREADS, thread_name_prefix="clpy-copy")
    return _COPIER


def _copy(dst: np.ndarray, src: np.ndarray) -> None:
    """``dst[:] = src`` for byte arrays, split over a few threads when large."""
    n = dst.size
    if n < (4 << 20) or COPY_THREADS <= 1:
        np.copyto(dst, src)
        return
    pool = _copier()
    step = -(-n // COPY_THREADS)
    futs = [pool.submit(np.copyto, dst[i : i + step], src[i : i + step]) for i in range(0, n, step)]
    for f in futs:
        f.result()


_STAGING: dict[int, tuple[Any, Staging | Ring | Registered | None]] = {}


# Staging pays where device memory sits across a link. A CPU device (PoCL) works in host
# memory, where the staging copy only doubles the work: a launch with NumPy arguments measured
# 0.9-1.2 GB/s direct against 0.6-0.7 staged on PoCL (2 loaded cores, 160 MiB; benchmarks/
# transfers.py "split" rows). True stages on CPU devices too (tests of the staging code).
STAGE_CPU_DEVICES = False


def default_pipeline(device: Any) -> str:
    """The staging pipeline for ``device`` when CLPY_STAGING is not set: registered host
    memory on NVIDIA (measured), the pinned pair elsewhere."""
    return "register" if "NVIDIA" in device.platform.name.upper() else "pair"


def staging_for(cl: Any, queue: Any) -> Staging | Ring | Registered | None:
    """The pinned staging area of an in-order ``queue`` (None where pinned memory could not
    be had, or on a CPU device: then copies go straight from NumPy memory), or its registered
    host buffers with ``PIPELINE == "register"``."""
    key = int(queue.int_ptr)
    with _pools_lock:
        entry = _STAGING.get(key)
        if entry is None or entry[0] != queue:
            st: Staging | Ring | Registered | None = None
            if STAGE_CPU_DEVICES or not queue.device.type & cl.device_type.CPU:
                try:
                    pipe = PIPELINE or default_pipeline(queue.device)
                    if pipe == "register":
                        st = Registered(cl, queue, large=lambda: Ring(cl, queue))
                    else:
                        st = Ring(cl, queue) if pipe == "ring" else Staging(cl, queue)
                except cl.Error:
                    st = None
            entry = _STAGING[key] = (queue, st)
    return entry[1]


def upload(cl: Any, queue: Any, buf: Any, host: np.ndarray, offset: int = 0) -> None:
    """``host`` into ``buf`` from byte ``offset`` (blocking as to ``host``: it may change on
    return); through the pinned staging area when it is large and the queue is in order."""
    if host.nbytes == 0:
        return
    st = staging_of(cl, queue, host)
    if st is not None:
        st.upload(buf, host, offset)
    else:
        cl.enqueue_copy(queue, buf, host, dst_offset=offset, is_blocking=True)


def download(cl: Any, queue: Any, host: np.ndarray, buf: Any, offset: int = 0) -> None:
    """``buf`` from byte ``offset`` into ``host``, blocking."""
    if host.nbytes == 0:
        return
    st = staging_of(cl, queue, host)
    if st is not None:
        st.download(host, buf, offset)
    else:
        cl.enqueue_copy(queue, host, buf, src_offset=offset, is_blocking=True)


def staging_of(cl: Any, queue: Any, host: np.ndarray) -> Staging | Ring | Registered | None:
    """The staging area for copying ``host`` on ``queue``, or None to copy directly (small,
    already page-locked, or an out-of-order queue)."""
    if host.nbytes < min(STAGE_MIN, REGISTER_FROM) or type(host) is not np.ndarray:
        return None  # (a DeviceArray view: no)
    if not _in_order(cl, queue):
        return None
    return staged(host, staging_for(cl, queue))


def staging_of_queue(cl: Any, queue: Any) -> Staging | Ring | Registered | None:
    """``staging_for`` an in-order ``queue``; None for an out-of-order one."""
    return staging_for(cl, queue) if _in_order(cl, queue) else None


def staged(host: np.ndarray, st: Staging | Ring | Registered | None) -> Any:
    """``st`` (an in-order queue's ``staging_for``) where it takes ``host``, else None."""
    if host.nbytes < (REGISTER_FROM if isinstance(st, Registered) else STAGE_MIN):
        return None  # (also a DeviceArray view: no)
    if type(host) is not np.ndarray or is_pinned(host):
        return None
    return st


def _in_order(cl: Any, queue: Any) -> bool:
    return not queue.properties & cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE


class ArrayMover:
    """How ``clpy.DeviceArray`` moves a ``pyopencl.array.Array``'s data to and from the host
    (``get``/``set``/``to_device``): the same pinned staging as launches."""

    def read(self, arr: Any, out: np.ndarray | None = None) -> np.ndarray:
        import pyopencl as cl  # deferred: `import clpy` does not load pyopencl

        if out is None:
            out = np.empty(arr.shape, arr.dtype)
        if arr.nbytes:
            download(cl, arr.queue, out, arr.base_data, arr.offset)
        return out

    def write(self, arr: Any, host: np.ndarray) -> None:
        import pyopencl as cl

        if arr.nbytes:
            upload(cl, arr.queue, arr.base_data, np.ascontiguousarray(host), arr.offset)


MOVER = ArrayMover()


# ------------------------------------------------------------------------ pinned host arrays

# Host arrays in page-locked memory (clpy.pinned_empty): start address -> the array.
_PINNED: weakref.WeakValueDictionary[int, np.ndarray] = weakref.WeakValueDictionary()


def pinned_array(cl: Any, queue: Any, shape: Any, dtype: Any) -> np.ndarray:
    """A NumPy array in page-locked host memory of ``queue``'s context (an ``ALLOC_HOST_PTR``
    buffer mapped for good). Launches and device arrays copy it with one DMA at the link's
    rate, without the staging copy."""
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    nbytes = max(n * dt.itemsize, 1)
    mf = cl.mem_flags
    buf = cl.Buffer(queue.context, mf.READ_WRITE | mf.ALLOC_HOST_PTR, nbytes)
    raw, _ = cl.enqueue_map_buffer(
        queue, buf, cl.map_flags.READ | cl.map_flags.WRITE, 0, (nbytes,), np.uint8
    )
    arr = raw[: n * dt.itemsize].view(dt).reshape(shape)  # keeps the mapping (and buffer)
    if arr.nbytes:
        _PINNED[arr.__array_interface__["data"][0]] = arr
    return arr


def is_pinned(host: np.ndarray) -> bool:
    """``host`` lies inside an array made by ``pinned_array``."""
    if not _PINNED or host.nbytes == 0:
        return False
    start = host.__array_interface__["data"][0]
    for base, arr in list(_PINNED.items()):
        if base <= start and start + host.nbytes <= base + arr.nbytes:
            return True
    return False
