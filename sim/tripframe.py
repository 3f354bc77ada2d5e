"""The expanded frame of trip vectorization (``sim/tripvec.py``) and its element sets.

``Trips`` repeats a frame's lanes once per trip (lane ``t * w + c`` is lane ``c`` at trip
``t``); ``elements`` and ``Written`` find the memory elements a loop reads and writes (to prove
its trips independent); ``accumulate`` combines a reduction's trips one after another.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from clpy_sim.affine import Run
from clpy_sim.frame import Frame, Sel
from clpy_sim.memory import ConstantMem, GlobalMem, LocalMem

Value = Any
MEMS = (GlobalMem, ConstantMem, LocalMem)  # the memories whose elements are flat indices
_SPAN_MAX = 1 << 22  # elements marked to test written/read overlaps (else sorted sets)
# least and greatest element, without the array methods' Python layer (``a.min()`` goes through
# ``numpy/_core/_methods.py``): these run several times per loop on arrays of tens of lanes
_MIN = np.minimum.reduce
_MAX = np.maximum.reduce


class Trips(Sel):
    """The lanes of a frame repeated once per trip: lane ``t * w + c`` is lane ``c`` at trip
    ``t`` (values the same in every lane of a row broadcast unchanged)."""

    def __init__(self, trips: int, shape: tuple[int, int]) -> None:
        self.trips = trips
        self.shape = (shape[0], trips * shape[1])

    def gather(self, v: Value) -> Value:
        if not isinstance(v, np.ndarray) or v.ndim < 2 or v.shape[-1] == 1:
            return v
        lead, w = v.shape[:-1], v.shape[-1]
        out = np.empty((*lead, self.trips, w), dtype=v.dtype)
        out[...] = v[..., None, :]
        return out.reshape(*lead, self.trips * w)

    def scatter(self, full: np.ndarray, v: Value) -> None:
        raise AssertionError("an expanded frame is never merged back")


def elements(mem: Any, fr: Frame, addr: Value) -> np.ndarray | None:
    """The flat element indices (into the memory's elements, every group's region for local
    memory) that ``addr`` accesses in ``fr``, one per lane; None when some is out of bounds
    (the trip-by-trip loop then reports it, or clamps it, as it always has)."""
    if type(mem) not in MEMS:
        return None
    count = mem.count
    if type(addr) is Run:  # (its bounds are its ends)
        lo, hi = (addr.first, addr.last) if addr.step > 0 else (addr.last, addr.first)
        if lo < 0 or hi >= count:
            return None
        a = addr.array(fr)
    else:
        a = np.asarray(addr)
        if a.size and (_MIN(a, axis=None) < 0 or _MAX(a, axis=None) >= count):
            return None
    if type(mem) is LocalMem:
        a = fr.gslot * count + a
    if a.shape != fr.shape:
        a = np.broadcast_to(a, fr.shape)
    return a.reshape(-1)


class Written:
    """The elements a loop writes: bounds, and marks over their span for overlap tests."""

    def __init__(self, w: np.ndarray) -> None:
        self.lo, self.hi = int(_MIN(w)), int(_MAX(w))
        span = self.hi - self.lo + 1
        if span <= _SPAN_MAX:
            self.mark: np.ndarray | None = np.zeros(span, dtype=bool)
            self.mark[w - self.lo] = True
            self.unique = int(np.count_nonzero(self.mark)) == w.size
        else:
            self.mark = None
            self.unique = np.unique(w).size == w.size
        self.w = w

    def hit(self, r: np.ndarray) -> bool:
        """Some element of ``r`` is written."""
        if not r.size or int(_MAX(r)) < self.lo or int(_MIN(r)) > self.hi:
            return False
        if self.mark is None:
            return bool(np.isin(r, self.w).any())
        r = r[(r >= self.lo) & (r <= self.hi)] - self.lo
        return bool(np.count_nonzero(self.mark[r]))


def last(v: Value, n: int, w: int) -> Value:
    """The last trip's lanes of an expanded frame's value."""
    if isinstance(v, np.ndarray) and v.ndim >= 2 and v.shape[-1] == n * w:
        return v[..., (n - 1) * w :].copy()
    return v


def accumulate(
    uf: np.ufunc, acc0: Value, y: Value, dt: Any, x: Frame, shape: tuple[int, int]
) -> Value:
    """``acc0 op y_0 op y_1 ...`` over the trips of ``y`` (a value of the expanded frame
    ``x``), one trip after another in dtype ``dt``; None when a dtype differs (the trips' own
    fix-ups would apply)."""
    if getattr(y, "dtype", None) != dt or getattr(acc0, "dtype", None) != dt:
        return None
    trips = x.shape[1] // shape[1]
    y = np.asarray(y)
    a = np.asarray(acc0)
    lead = y.shape[:-2] if y.ndim > 2 else a.shape[:-2] if a.ndim > 2 else ()
    g = shape[0]
    ys, as_ = (*lead, *x.shape), (*lead, *shape)
    y = (y if y.shape == ys else np.broadcast_to(y, ys)).reshape(*lead, g, trips, shape[1])
    a = (a if a.shape == as_ else np.broadcast_to(a, as_)).reshape(*lead, g, 1, shape[1])
    out = uf.accumulate(np.concatenate([a, y], axis=-2), axis=-2, dtype=dt)
    return np.ascontiguousarray(out[..., -1, :])
