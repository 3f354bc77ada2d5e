"""The global race shadows' arrays, reused across launches (sim/races_global.py
``GlobalShadow``): a launch takes zeroed writer and reader arrays for each written buffer from
its thread's pool, and the next launch on that thread takes them again, zeroing only what the
last one changed instead of faulting in fresh pages."""

from __future__ import annotations

import threading
import weakref
from typing import Any

import numpy as np

from clpy_sim.parallel import in_worker
from clpy_sim.state import Launch

# Shadow arrays are reused by the next launch on the same thread (read at run time: False
# allocates fresh zeroed arrays per shadow, as before; tests compare both)
POOL = True


class ShadowArrays:
    """A global shadow's writer and reader arrays, and what of each its launch changed, to be
    zeroed when the next launch takes them: a span (runs of elements, and everything once
    the other indices grow large) and the element indices of other accesses while they are
    few (a launch of NW's scattered blocks changes a few of a large buffer's elements)."""

    __slots__ = ("w", "r", "spans", "idx", "nidx")

    def __init__(self, count: int) -> None:
        self.w = np.zeros(count, np.int64)
        self.r = np.zeros(count, np.int64)
        self.spans = [count, 0, count, 0]  # writer lo, hi; reader lo, hi
        self.idx: list[list[np.ndarray]] = [[], []]  # writer's, reader's
        self.nidx = [0, 0]

    def wrote(self, lo: int, hi: int) -> None:
        sp = self.spans
        if lo < sp[0]:
            sp[0] = lo
        if hi > sp[1]:
            sp[1] = hi

    def read(self, lo: int, hi: int) -> None:
        sp = self.spans
        if lo < sp[2]:
            sp[2] = lo
        if hi > sp[3]:
            sp[3] = hi

    def wrote_where(self, w: Any) -> None:
        if w.kind == "run":
            self.wrote(w.sl, w.sl + w.shape[0] * w.shape[1])
        else:
            self._scattered(0, w)

    def read_where(self, w: Any) -> None:
        if w.kind == "run":
            self.read(w.sl, w.sl + w.shape[0] * w.shape[1])
        else:
            self._scattered(1, w)

    def _scattered(self, k: int, w: Any) -> None:
        """The elements of an access other than a run (of the writer array: ``k`` 0)."""
        count = self.w.size
        if self.spans[2 * k] == 0 and self.spans[2 * k + 1] == count:
            return  # (all of it already)
        f = w.flat()
        n = self.nidx[k] + f.size
        if n <= count >> 3:
            # (a copy: the lanes' index arrays may be reused by later statements)
            self.idx[k].append(np.array(f, dtype=np.intp).reshape(-1))
            self.nidx[k] = n
        else:
            self.idx[k].clear()
            self.nidx[k] = 0
            self.spans[2 * k] = 0
            self.spans[2 * k + 1] = count

    def clear(self) -> None:
        """Zero what the last launch changed."""
        count = self.w.size
        for k, arr in enumerate((self.w, self.r)):
            lo, hi = self.spans[2 * k], self.spans[2 * k + 1]
            if lo < hi:
                arr[lo:hi] = 0
            got = self.idx[k]
            if got:
                arr[got[0] if len(got) == 1 else np.concatenate(got)] = 0
                got.clear()
                self.nidx[k] = 0
            self.spans[2 * k] = count
            self.spans[2 * k + 1] = 0


class _Pool:
    """The shadow arrays of a thread's current launch, and those of its launch before, free
    to take: a fresh ``np.zeros`` of a large buffer faulted in every page the launch touched
    (5,700-7,300 per launch of the real programs' kernels), reused arrays are in memory and
    zeroed only where the launch before changed them. Launches on one thread do not overlap
    (a device-side enqueue's children run after their parent's batches; a nested launch in a
    batch is not pooled), so the shadows of an earlier launch are no longer used. Between
    launches a thread keeps its last launch's arrays (16 bytes per element of each buffer
    it wrote), until ``clpy.clear_caches()`` (``release_pools``); ``POOL = False`` allocates
    per shadow instead."""

    def __init__(self, launch: Launch, free: dict[int, list[ShadowArrays]]) -> None:
        self.launch = weakref.ref(launch)
        self.used: list[ShadowArrays] = []
        self.free = free


_LOCAL = threading.local()
_POOLS: weakref.WeakSet[_Pool] = weakref.WeakSet()  # every thread's pool (release_pools)


def release_pools() -> None:
    """Let every thread's pool go of the shadow arrays it keeps between launches (called by
    ``clpy.clear_caches()``; arrays a running launch uses stay with its shadows)."""
    for pool in list(_POOLS):
        pool.free = {}
        pool.used = []


def take(launch: Launch, count: int) -> ShadowArrays:
    """Shadow arrays of ``count`` zeros for a global shadow of ``launch``."""
    if not POOL or in_worker():
        return ShadowArrays(count)
    pool = getattr(_LOCAL, "pool", None)
    if pool is None or pool.launch() is not launch:
        free: dict[int, list[ShadowArrays]] = {}
        if pool is not None:  # (the free arrays of the launch before that are dropped)
            for a in pool.used:
                free.setdefault(a.w.size, []).append(a)
        pool = _LOCAL.pool = _Pool(launch, free)
        _POOLS.add(pool)
    got = pool.free.get(count)
    if got:
        a = got.pop()
        a.clear()
    else:
        # a launch with other buffers: free arrays as large as the new ones are let go first
        # (what the pool holds beyond what fresh arrays would stays below one launch's)
        left = count
        for size in sorted(pool.free, reverse=True):
            arrays = pool.free[size]
            while arrays and left > 0:
                arrays.pop()
                left -= size
        a = ShadowArrays(count)
    pool.used.append(a)
    return a
