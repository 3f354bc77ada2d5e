"""Transfers of NumPy arguments through host memory the driver pins once (the default on
NVIDIA GPUs; ``CLPY_STAGING=register`` elsewhere; issue 18).

Why. Staging a pageable NumPy array costs three passes through host memory: the array is read,
its pinned copy written, and the DMA reads that copy. On the H100 host of
``benchmarks/results/transfers_h100_s6.json`` the host copies into pinned memory at 48.6 GB/s
with 16 threads (about 97 GB/s of memory traffic), so staging tops out near 32 GB/s of a
53 GB/s link: the ring measured 31.7 GB/s to the device, the pair 25.6. A ``USE_HOST_PTR``
buffer made once over page-aligned host memory and kept (``uhp_cached_aligned`` there) moved
53.0 GB/s to the device and 52.5 GB/s back: the driver pins the memory when the buffer is
made, and each transfer is one DMA from or into the user's own memory. Measured as clpy's
``register`` path in session 7 (``python -m benchmarks.transfers --parts paths``, H100):
49.2 GB/s in and 49.0 out at 256 MiB (a launch at 0.98 of the link's bound; the pair 0.40,
the ring 0.58), 34.8 and 29.5 at 16 MiB (0.76; the pair 0.26).

How. For a contiguous array of at least ``REGISTER_MIN`` bytes, the pages its memory touches
become a ``USE_HOST_PTR`` buffer, kept per queue in a least-recently-used table of at most
``REGISTER_BYTES``; the array's bytes are copied at their offset in it (NumPy's large arrays
start 16 bytes into a page; the buffer itself starts at the array's first byte where that lies
on its first page). Registrations never share a page: arrays from malloc's heap share their
first and last page with their neighbours, and a page another registration already covers is
left out, the array's bytes on it (less than a page) going through that registration, or
through pinned slots where none covers it any more (``ENDS_SLOTS``; a copy from pageable
memory made NVIDIA's driver wait). Until session 10 only the page-aligned interior was
registered, so every array had two such ends: the 4 MiB launch of
``scripts/gpu_reg_rounded.py`` (x in, y in, y out) took 419-490 µs on the H100 where the
pinned copies' bound is 290-299 µs; with the pages registered 293 µs (separate allocations,
no ends) and 318-326 µs (neighbouring arrays, one end each). On a device that keeps its own
copy of registered memory a launch that waits binds an array's registration as the kernel's
buffer (``bind``: no device copy; 274 µs there). From ``FIRST_STAGE_MIN`` an array's first
transfer each way is staged, its second registers it (``_again``). The OpenCL API's way to
keep such a buffer in step with its host memory is the map, of the array's bytes only (the
rest of a shared page belongs to other objects):

- upload: map the bytes for ``CL_MAP_WRITE_INVALIDATE_REGION`` and unmap them (the host changed
  every byte: nothing is copied back first, which could overwrite the caller's new data), then
  copy them into the kernel's buffer on the device, and wait for that copy, so the caller may
  change the array as soon as the launch returns (as with staging);
- download: copy the kernel's buffer into the registration on the device, then map the bytes
  for ``CL_MAP_READ`` (blocking: the host memory holds the data) and unmap.

A kept buffer does not keep its array alive: the driver holds a pointer into the array's
memory, so the registration is dropped (the buffer released, which unpins the memory) by a
``weakref.finalize`` on the array that owns the memory, which NumPy runs before it frees the
memory. Memory owned by something that cannot be weakly referenced (``bytes``, some buffer
providers) is kept alive by its buffer instead, as the whole table was before session 7.
``REGISTER_BYTES`` bounds the memory registered, and ``clpy.clear_caches()`` drops it all.
Device memory. On NVIDIA a ``USE_HOST_PTR`` buffer has a copy in device memory (its map and
unmap are the transfers): ``clpy.to_device`` of an 8 GiB array took 16.5 GiB of the H100's
memory, and a 45 GiB one failed (``MEM_OBJECT_ALLOCATION_FAILURE``) where a plain copy fits
(``scripts/gpu_reg_memory.py``, session 9). So the table also stays within
``REGISTER_DEVICE_FRACTION`` of the device's global memory, an array whose pages alone are
larger go through ``large`` (pinned staging) instead, and a registered transfer that fails
for want of memory drops every registration and is done again that way.
The buffer is made over a ctypes view of the memory's address, not the array: pyopencl keeps
its ``hostbuf`` alive. The API leaves commands on buffers made from overlapping host memory
undefined, so a new registration first drops any that overlaps more than its first or last
page (two views of one array); the queue is in order, so each upload and download runs
after the one before. A launch that waits anyway (``wait=True``) enqueues its arrays' uploads
and downloads with ``sync=False`` and finishes the queue once (clpy/runtime/clplan.py).

Tested on PoCL with the path forced (tests/test_runtime_registered.py: values, ends, reuse,
eviction, overlapping views, neighbours sharing pages, arrays freed while registered); on
NVIDIA by the same tests and ``scripts/gpu_reg_rounded.py``'s sentinel (bytes of another
object on a shared page, changed by the host after an upload, survive the download).
"""

from __future__ import annotations

import ctypes
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from clpy.runtime.end_slots import PAGE, EndSlots

REGISTER_MIN = 1 << 20  # registered bytes below this go the fallback's way
REGISTER_BYTES = 4 << 30  # the most host memory kept registered per queue
ENDS_SLOTS = 64  # pinned pages for the ends of the arrays in flight (Registered._ends)
# An array of FIRST_STAGE_MIN bytes or more is registered on its second transfer the same way
# (``Registered._again``); its first goes through pinned staging. For a one-off transfer
# (``clpy.to_device`` of a new array, ``DeviceArray.get()``) pinning costs more than it saves
# at that size: on the H100 (scripts/gpu_d2h_probe.py, session 10) a 64 MiB ``get()`` moved
# 4.5 GB/s registered and 12.6-14.3 staged, ``to_device`` 13 and 19-26; at 4-16 MiB
# registering at once was as fast as staging or faster, and faster than a direct copy
# (16 MiB: get 3.8-4.2 GB/s registered, 3.0 direct; to_device 9.2-10 and 6.6-7.0).
FIRST_STAGE_MIN = 64 << 20
SEEN = 256  # the arrays remembered as transferred once
# Registrations are bound as the kernel's own buffers (``Registered.bind``) on devices that keep
# a copy of a USE_HOST_PTR buffer's memory (not host-unified: a kernel that fails then leaves
# the array untouched, its results reaching it only by the map after a successful launch);
# BIND_UNIFIED binds on host-unified devices too (the tests on PoCL).
BIND = True
BIND_UNIFIED = False
REGISTER_DEVICE_FRACTION = 1 / 8  # of the device's global memory, the most registered


def out_of_memory(cl: Any, e: Exception) -> bool:
    """``e`` says the device (or the driver's host side) ran out of memory."""
    st = cl.status_code
    return isinstance(e, cl.MemoryError) or getattr(e, "code", None) in (
        st.MEM_OBJECT_ALLOCATION_FAILURE,
        st.OUT_OF_RESOURCES,
        st.OUT_OF_HOST_MEMORY,
    )


class Registered:
    """The registered host buffers of one in-order queue; ``fallback`` (pinned staging, or
    None for direct copies) takes arrays too small to register, ``large`` (a
    function making pinned staging for the queue, or None for direct copies) those too large
    to register and transfers that ran out of memory registered."""

    def __init__(
        self, cl: Any, queue: Any, fallback: Any = None, large: Callable[[], Any] | None = None
    ) -> None:
        self._cl = cl
        self.queue = queue
        self.fallback = fallback
        self._large_maker = large
        self._large: Any = None
        try:
            mem = int(queue.device.global_mem_size)
        except (AttributeError, cl.Error):
            mem = 0
        # the most bytes registered at once: host memory pinned, and on NVIDIA as much device
        # memory again
        self.limit = min(REGISTER_BYTES, int(mem * REGISTER_DEVICE_FRACTION) or REGISTER_BYTES)
        # (address, bytes) -> (buffer, what keeps the memory alive: a finalizer on its owner
        # that drops the entry, or the view itself when the owner has no weak references)
        # and the host address of the buffer's first byte: the array's own first byte where
        # it lies on the first page, so that the buffer can be the kernel's argument: bind)
        self._bufs: OrderedDict[tuple[int, int], tuple[Any, Any, int]] = OrderedDict()
        self.held = 0  # bytes of host memory registered
        # re-entrant: a finalizer (an array freed by the garbage collector) may run on a thread
        # that already holds it
        self.lock = threading.RLock()
        self.slots = EndSlots(cl, queue, ENDS_SLOTS)  # for ends no registration covers
        # (address, bytes, upload) -> the memory's owner, of arrays transferred once that way
        # (``_again``)
        self._seen: OrderedDict[tuple[int, int, bool], weakref.ref[Any]] = OrderedDict()
        self._copy = getattr(getattr(cl, "_cl", None), "_enqueue_copy_buffer", None)
        try:
            unified = bool(queue.device.host_unified_memory)
        except (AttributeError, cl.Error):
            unified = True
        self.binds = not unified
        # buffers bound by the launch in progress (``bind``; ``done`` ends it) and
        # registrations dropped meanwhile, released at its end: the kernel still uses them
        self._inflight: dict[int, Any] = {}  # id -> buffer (kept: no id reused meanwhile)
        self._doomed: list[Any] = []
        self._starved: int | None = None  # the array whose ``bind`` ran out of memory
        # (address, bytes) -> (registration key, buffer) of arrays bound before: ``bind``'s
        # fast path while that registration lives
        self._bound: dict[tuple[int, int], tuple[tuple[int, int], Any]] = {}

    def _again(self, flat: np.ndarray, addr: int, upload: bool) -> bool:
        """Whether ``flat``'s transfer goes the registered way: it is smaller than
        ``FIRST_STAGE_MIN`` (or too small to register: ``_parts`` sends it the fallback's
        way), its memory is registered, or it was transferred the same way before (the same
        owner at the same address; an upload and the download after it in one launch are
        two ways). Otherwise it is remembered, and the transfer is staged. Called with the
        lock held."""
        lo, hi = _pages(addr, flat.size)
        if flat.size < FIRST_STAGE_MIN or hi - lo < REGISTER_MIN or self._known(lo, hi):
            return True
        owner = _owner(flat)
        key = (addr, flat.size, upload)
        seen = self._seen.get(key)
        if seen is not None and seen() is owner:
            del self._seen[key]  # registered from now on
            return True
        try:
            self._seen[key] = weakref.ref(owner)
        except TypeError:  # no weak references: as before, registered at once
            return True
        self._seen.move_to_end(key)
        if len(self._seen) > SEEN:
            self._seen.popitem(last=False)
        return False

    def _known(self, lo: int, hi: int) -> bool:
        """Pages ``[lo, hi)`` (less the first or last) are registered."""
        bufs = self._bufs
        return any(
            (a, b - a) in bufs
            for a, b in ((lo, hi), (lo + PAGE, hi), (lo, hi - PAGE), (lo + PAGE, hi - PAGE))
        )

    def bind(self, host: np.ndarray) -> Any | None:
        """``host``'s registration as the kernel's own buffer, for a launch that waits and
        then calls ``done`` (issue 18): the upload enqueued (a map of the array's bytes for
        ``CL_MAP_WRITE_INVALIDATE_REGION``) and no device copy, the download then a map for
        reading (``download`` of ``host`` from this buffer). On the H100 a 4 MiB launch
        (x in, y in, y out) took 274 µs bound against 300 µs through device copies, the
        pinned copies' bound 300 (``exact_bound`` in scripts/gpu_reg_rounded.py). None where
        the caller copies as before: a device that does not keep its own copy (BIND), no
        registration starting at the array's first byte and covering it whole (a page a
        neighbour's registration covers; too small; a first transfer from FIRST_STAGE_MIN),
        or one bound already by this launch (two views of one memory)."""
        if not (self.binds or BIND_UNIFIED) or not BIND or not host.flags.writeable:
            return None  # (a read-only registration must not meet a kernel that writes)
        flat = host.reshape(-1).view(np.uint8)
        addr = flat.ctypes.data
        size = flat.size
        with self.lock:
            memo = self._bound.get((addr, size))
            if memo is not None:  # bound before: still its registration, not in use?
                key, buf = memo
                entry = self._bufs.get(key)
                if entry is not None and entry[0] is buf and id(buf) not in self._inflight:
                    self._bufs.move_to_end(key)
                    self._map(buf, self._cl.map_flags.WRITE_INVALIDATE_REGION, 0, size, False)
                    self._inflight[id(buf)] = buf
                    return buf
            lo, hi = _pages(addr, size)
            if size >= FIRST_STAGE_MIN and not self._known(lo, hi):
                return None  # its first transfer is staged (``_again``)
            parts = self._parts(flat, addr)
            if parts is None:
                return None
            lo, hi, start, _, ahi = parts
            if start != addr or ahi != size or hi - lo > self.limit:
                return None
            entry = self._bufs.get((lo, hi - lo))
            if entry is not None and (
                id(entry[0]) in self._inflight or entry[0].flags & self._cl.mem_flags.READ_ONLY
            ):
                return None

            def move() -> Any:
                buf = self._buffer(flat, lo, hi, start)
                self._map(buf, self._cl.map_flags.WRITE_INVALIDATE_REGION, 0, size, False)
                return buf

            buf = self._moved(move)
            if buf is not None:
                self._inflight[id(buf)] = buf
                self._bound[(addr, size)] = ((lo, hi - lo), buf)
                if len(self._bound) > SEEN:
                    del self._bound[next(iter(self._bound))]
            else:  # out of memory: the caller's upload of this array right after is staged
                self._starved = addr
            return buf

    def done(self, bound: list[Any] | tuple[Any, ...] = ()) -> None:
        """The end of a launch that enqueued transfers with ``sync=False`` or bound the
        buffers ``bound``: ``finish``, then those are no longer in use, and registrations
        dropped meanwhile that no launch uses are released (launches from other threads may
        have their own bound)."""
        with self.lock:
            self.finish()
            for buf in bound:
                self._inflight.pop(id(buf), None)
            keep = [b for b in self._doomed if id(b) in self._inflight]
            for buf in self._doomed:
                if id(buf) not in self._inflight:
                    buf.release()
            self._doomed[:] = keep

    def _place(self, addr: int, size: int) -> tuple[int, int] | None:
        """The host pages ``[lo, hi)`` (addresses) registered for the ``size`` bytes at ``addr``
        (an array's): the pages
        its bytes touch, less a first or last page that another registration already covers
        (NumPy's large arrays start 16 bytes into a page, and arrays from malloc's heap share
        their first and last page with their neighbours: registrations never share a page;
        the bytes on such a page go as ends). A registration that overlaps more of these
        pages (another view of the same memory) is dropped. None when fewer than
        ``REGISTER_MIN`` bytes would be registered. Called with the lock held."""
        lo, hi = _pages(addr, size)
        if hi - lo < REGISTER_MIN:
            return None
        bufs = self._bufs
        for a, b in ((lo, hi), (lo + PAGE, hi), (lo, hi - PAGE), (lo + PAGE, hi - PAGE)):
            if (a, b - a) in bufs:  # registered before (by this array or its memory's)
                return a, b
        first, last = lo, hi
        for start, n in list(bufs):
            end = start + n
            if end <= lo or start >= hi:
                continue
            if end == lo + PAGE:
                first = lo + PAGE  # the neighbour below registered our first page
            elif start == hi - PAGE:
                last = hi - PAGE  # ... the one above our last page
            elif id(bufs[(start, n)][0]) in self._inflight:
                return None  # another view of this memory is a kernel argument right now
            else:
                self._drop((start, n))
        return (first, last) if last - first >= REGISTER_MIN else None

    def _buffer(self, flat: np.ndarray, lo: int, hi: int, start: int) -> Any:
        """The registration of host pages ``[lo, hi)`` (``_place``) that ``flat`` lies in; a
        new one's buffer starts at host address ``start`` (``_parts``)."""
        key = (lo, hi - lo)
        entry = self._bufs.get(key)
        if entry is not None:
            self._bufs.move_to_end(key)
            return entry[0]
        cl = self._cl
        mf = cl.mem_flags
        access = mf.READ_WRITE if flat.flags.writeable else mf.READ_ONLY
        tie = self._tie(flat, key)
        # by address (pyopencl keeps hostbuf alive; ``tie`` keeps the memory alive when its
        # owner has no weak references); the driver pins the pages [lo, hi) whole
        host = (ctypes.c_ubyte * (hi - start)).from_address(start)
        buf = cl.Buffer(self.queue.context, access | mf.USE_HOST_PTR, hostbuf=host)
        self._bufs[key] = (buf, tie, start)
        self.held += hi - lo
        while self.held > self.limit and len(self._bufs) > 1:
            self._drop(next(iter(self._bufs)))
        return buf

    def _tie(self, part: np.ndarray, key: tuple[int, int]) -> Any:
        """What ends the registration of ``part``'s memory: a finalizer on the object that
        owns the memory (the last ``base`` of the view), run before that memory is freed."""
        owner = _owner(part)
        try:
            return weakref.finalize(owner, self._forget, key)
        except TypeError:  # no weak references: the view keeps its memory alive instead
            return part

    def _forget(self, key: tuple[int, int]) -> None:
        with self.lock:
            self._drop(key)

    def _drop(self, key: tuple[int, int]) -> None:
        entry = self._bufs.pop(key, None)
        if entry is None:  # dropped already (evicted, cleared, or its array freed)
            return
        buf, tie, _ = entry
        if isinstance(tie, weakref.finalize):
            tie.detach()
        self.held -= key[1]
        if id(buf) in self._inflight:
            self._doomed.append(buf)  # the launch's kernel has it: released by ``done``
        else:
            buf.release()

    def _d2d(self, dst: Any, src: Any, n: int, src_at: int, dst_at: int) -> None:
        """Enqueue a copy of ``n`` bytes between device buffers; through pyopencl's own
        entry point, which its ``enqueue_copy`` dispatches to after inspecting the arguments
        (3.3 against 7.6 µs of CPU a copy on PoCL)."""
        if self._copy is not None:
            self._copy(self.queue, src, dst, n, src_at, dst_at, None)
        else:
            self._cl.enqueue_copy(
                self.queue, dst, src, byte_count=n, src_offset=src_at, dst_offset=dst_at
            )

    def _map(self, buf: Any, flags: Any, at: int, n: int, blocking: bool) -> None:
        """Map bytes ``[at, at + n)`` of ``buf`` and unmap them: the API's sync of a
        USE_HOST_PTR buffer with its host memory (on NVIDIA the transfer itself:
        ``scripts/gpu_reg_profile.py``). Blocking in a transfer alone: a download alone with
        a non-blocking map and a finish measured 12 GB/s at 4 MiB on the H100, blocking
        23.5 (``benchmarks.transfers --parts paths``, session 10). Only the array's own
        bytes: a map of the whole registration for reading wrote stale device bytes over a
        neighbour's on the shared first and last pages on NVIDIA; this one kept them
        (``sentinel`` in ``scripts/gpu_reg_rounded.py``, session 10)."""
        m, _ = self._cl.enqueue_map_buffer(
            self.queue, buf, flags, at, (n,), np.uint8, is_blocking=blocking
        )
        m.base.release(self.queue)

    def _parts(self, flat: np.ndarray, addr: int) -> tuple[int, int, int, int, int] | None:
        """``(lo, hi, start, alo, ahi)``: the registered pages (``_place``), the host address
        of the registration's first byte, and the bytes ``[alo, ahi)`` of ``flat`` (at
        ``addr``) in it; None when ``flat`` is not to be registered. A new registration
        starts at the array's first byte where that lies on its first page (the pages are
        pinned whole all the same). Called with the lock held."""
        place = self._place(addr, flat.size)
        if place is None:
            return None
        lo, hi = place
        entry = self._bufs.get((lo, hi - lo))
        start = entry[2] if entry is not None else max(lo, addr)
        return lo, hi, start, max(start - addr, 0), min(hi - addr, flat.size)

    def _route(
        self,
        flat: np.ndarray,
        addr: int,
        upload: bool,
        large: Callable[[], None],
        fallback: Callable[[], None],
    ) -> tuple[int, int, int, int, int] | None:
        """``_parts`` of ``flat`` for a registered transfer, or None once the transfer has
        gone another way: ``large`` (pinned staging: a first transfer from FIRST_STAGE_MIN,
        or pages beyond the table's limit) or ``fallback`` (too small to register). Called
        with the lock held."""
        if self._starved == addr or not self._again(flat, addr, upload):
            self._starved = None
            large()
            return None
        parts = self._parts(flat, addr)
        if parts is None:
            fallback()
            return None
        if parts[1] - parts[0] > self.limit:
            large()
            return None
        return parts

    def upload(self, dst: Any, host: np.ndarray, offset: int = 0, sync: bool = True) -> None:
        """``host`` into device buffer ``dst`` from byte ``offset``; returns when every byte is
        on the device (the caller may change ``host`` then), or with ``sync=False`` once the
        commands are enqueued: the caller finishes the queue before ``host`` may change or be
        freed (a launch that waits anyway; one sync per launch instead of one per array: 4 to
        16 MiB launches 1.3x to 1.8x faster on the H100, ``seq_once`` in
        benchmarks/results/regprof_h100_s8.json)."""
        cl = self._cl
        flat = host.reshape(-1).view(np.uint8)
        addr = flat.ctypes.data
        with self.lock:
            parts = self._route(
                flat,
                addr,
                True,
                lambda: self._large_upload(dst, host, offset),
                lambda: self._fallback_upload(dst, host, offset),
            )
            if parts is None:
                return
            lo, hi, start, alo, ahi = parts
            at = addr + alo - start  # the array's registered bytes in the buffer

            def move() -> Any:
                buf = self._buffer(flat, lo, hi, start)
                self._map(buf, cl.map_flags.WRITE_INVALIDATE_REGION, at, ahi - alo, sync)
                self._d2d(dst, buf, ahi - alo, at, offset + alo)
                return buf

            if self._moved(move) is None:
                self._large_upload(dst, host, offset)
                return
            self._ends(flat, addr, dst, offset, alo, ahi, upload=True)
            if sync:
                self.finish()  # every byte on the device: the caller's array may change now

    def download(self, host: np.ndarray, src: Any, offset: int = 0, sync: bool = True) -> None:
        """Device buffer ``src`` from byte ``offset`` into ``host`` (blocking; with
        ``sync=False`` the data is there once the caller has finished the queue)."""
        cl = self._cl
        flat = host.reshape(-1).view(np.uint8)
        addr = flat.ctypes.data
        with self.lock:
            if id(src) in self._inflight and not offset:
                # ``host``'s registration, bound by ``bind``: the kernel wrote it itself (valid
                # until ``done`` even if dropped meanwhile)
                self._map(src, cl.map_flags.READ, 0, flat.size, sync)
                if sync:
                    self.finish()
                return
            parts = self._route(
                flat,
                addr,
                False,
                lambda: self._large_download(host, src, offset),
                lambda: self._fallback_download(host, src, offset),
            )
            if parts is None:
                return
            lo, hi, start, alo, ahi = parts
            at = addr + alo - start

            def move() -> Any:
                buf = self._buffer(flat, lo, hi, start)
                self._d2d(buf, src, ahi - alo, offset + alo, at)
                return buf

            buf = self._moved(move)
            if buf is None:
                self._large_download(host, src, offset)
                return
            self._ends(flat, addr, src, offset, alo, ahi, upload=False)
            self._map(buf, cl.map_flags.READ, at, ahi - alo, sync)
            if sync:
                self.finish()

    def _ends(
        self, flat: np.ndarray, addr: int, dev: Any, offset: int, lo: int, hi: int, upload: bool
    ) -> None:
        """Enqueue the transfers of the bytes before ``lo`` and from ``hi`` on (less than a
        page each: on a page another registration covers), to device buffer ``dev`` or from
        it: through that registration, copied and mapped at their offset in it as the rest of
        the array (a 4 MiB launch on neighbouring arrays, ``adj_nbr`` of
        scripts/gpu_reg_rounded.py: 318-374 µs on the H100, against 326-412 µs through pinned
        slots), or where none covers the page any more (its array was freed), through a
        pinned slot: a copy from or into pageable memory made NVIDIA's driver wait for the
        queue, 0.2 ms per end (scripts/gpu_launch_profile.py, session 8). A download's ends
        in slots reach ``flat`` in ``finish``."""
        cl = self._cl
        for a, b in ((0, lo), (hi, flat.size)):
            if a >= b:
                continue
            buf = self._covering(addr + a, addr + b)
            if buf is not None:
                at = addr + a - buf[0]
                if upload:
                    self._map(buf[1], cl.map_flags.WRITE_INVALIDATE_REGION, at, b - a, False)
                    self._d2d(dev, buf[1], b - a, at, offset + a)
                else:
                    self._d2d(buf[1], dev, b - a, offset + a, at)
                    self._map(buf[1], cl.map_flags.READ, at, b - a, False)
                continue
            self.slots.transfer(self._slot(b - a), dev, flat[a:b], offset + a, upload)

    def _covering(self, start: int, end: int) -> tuple[int, Any] | None:
        """The registration (its buffer's first host address, and the buffer) that covers
        host bytes ``[start, end)``, if any."""
        for (first, n), (buf, _, at) in self._bufs.items():
            if at <= start and end <= first + n:
                return at, buf
        return None

    def _slot(self, n: int) -> np.ndarray | None:
        """A free pinned slot of ``n`` (at most a page) bytes (``EndSlots.take``)."""
        return self.slots.take(n, self.finish)

    def finish(self) -> None:
        """Finish the queue, then move the downloaded ends from their pinned slots into the
        arrays; every slot is free again. A launch that enqueued with ``sync=False`` calls
        this once at its end."""
        with self.lock:
            self.queue.finish()
            self.slots.land()

    def _moved(self, move: Callable[[], Any]) -> Any:
        """``move()`` (the registered part of a transfer: returns the registered buffer), or
        None when it ran out of memory: then what is enqueued finishes and every registration
        goes (its device copy with it), for the caller to move the array another way."""
        try:
            return move()
        except self._cl.Error as e:
            if not out_of_memory(self._cl, e):
                raise
        try:
            self.finish()
        except self._cl.Error:
            pass
        for key in list(self._bufs):
            self._drop(key)
        return None

    def _large_stager(self) -> Any:
        if self._large is None and self._large_maker is not None:
            try:
                self._large = self._large_maker()
            except self._cl.Error:  # no pinned memory to be had: direct copies
                self._large_maker = None
        return self._large

    def _large_upload(self, dst: Any, host: np.ndarray, offset: int) -> None:
        """An array not to be registered (too large, or out of memory): pinned staging, or
        a direct copy; blocking."""
        self.finish()  # the ends of earlier sync=False transfers land first
        st = self._large_stager()
        if st is not None:
            st.upload(dst, host, offset)
        else:
            self._cl.enqueue_copy(self.queue, dst, host, dst_offset=offset, is_blocking=True)

    def _large_download(self, host: np.ndarray, src: Any, offset: int) -> None:
        self.finish()
        st = self._large_stager()
        if st is not None:
            st.download(host, src, offset)
        else:
            self._cl.enqueue_copy(self.queue, host, src, src_offset=offset, is_blocking=True)

    def _fallback_upload(self, dst: Any, host: np.ndarray, offset: int) -> None:
        if self.fallback is not None:
            self.fallback.upload(dst, host, offset)
        else:
            self._cl.enqueue_copy(self.queue, dst, host, dst_offset=offset, is_blocking=True)

    def _fallback_download(self, host: np.ndarray, src: Any, offset: int) -> None:
        if self.fallback is not None:
            self.fallback.download(host, src, offset)
        else:
            self._cl.enqueue_copy(self.queue, host, src, src_offset=offset, is_blocking=True)

    def clear(self) -> None:
        """Release every registered buffer (and the arrays any of them keeps)."""
        with self.lock:
            for key in list(self._bufs):
                self._drop(key)
            self._seen.clear()
            self._bound.clear()


def _pages(addr: int, size: int) -> tuple[int, int]:
    """The page-aligned host range ``[lo, hi)`` that ``size`` bytes at ``addr`` touch."""
    return addr - addr % PAGE, -(-(addr + size) // PAGE) * PAGE


def _owner(a: np.ndarray) -> Any:
    """The object that owns ``a``'s memory: the last ``base`` of the view."""
    owner: Any = a
    while isinstance(owner, np.ndarray) and owner.base is not None:
        owner = owner.base
    return owner
