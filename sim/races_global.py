"""Shadow memory of global buffers for the data-race and uninitialised-read checkers
(``GlobalShadow``); sim/races.py has the shared checks and local memory's shadow, and says
what conflicts (spec §3.3)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.ir.nodes import Loc
from clpy_sim import races
from clpy_sim.races import Shadow, every_lane, nz
from clpy_sim.state import Launch, frame_wids
from clpy_sim.values import full

if TYPE_CHECKING:
    from clpy_sim.frame import Frame

_SHIFT = np.int64(24)
_EMASK = np.int64((1 << 24) - 1)
_MULTI = np.int64(-(1 << 62))  # readers in several work-groups


class GlobalShadow(Shadow):
    """Flat, for buffers the kernel writes. One int64 per element and kind of access, zero
    for none: a single work-item is ``(internal id + 1) << 24 | barrier epoch``; several
    readers of one work-group are ``-((group + 1) << 24 | epoch)``; readers in several
    work-groups are ``_MULTI``. Accesses of the same work-group in earlier barrier intervals
    are ordered (stale); any two of different work-groups are concurrent."""

    def __init__(self, launch: Launch, count: int, mem: Any) -> None:
        self.launch = launch
        self.mem = mem
        self.w = np.zeros(count, np.int64)
        self.r = np.zeros(count, np.int64)
        self.any_read = False  # until a read, the reader array is all zero: skip it
        self.log: dict[tuple[str, Loc], list[Any]] = {}
        self.log_ids: dict[tuple[str, int], list[Any]] = {}  # the same lists, by id(loc)
        self.W = np.int64(launch.W)
        # batches on other threads update the same shadow: each check-and-record is atomic,
        # so a cross-group race is found in any interleaving (sim/parallel.py)
        self.lock = threading.Lock()
        # Repeated accesses (``r[k * n + j] += ...`` every trip) are idempotent while the
        # shadow is as they left it: ``version`` counts the changes of ``w``/``r``
        self.version = 0
        self.last_read: tuple[Any, ...] | None = None
        self.last_write: tuple[Any, ...] | None = None

    def _key(self, w: Any, mine: np.ndarray) -> tuple[Any, ...] | None:
        """What makes an access the same as a remembered one: a run's elements, the frame's
        lanes and interval (``mine`` is made anew per frame and barrier), and the shadow's
        state; None when it cannot be remembered (other kinds of index; overlapping buffers,
        whose peers change the shared arrays)."""
        if w.kind != "run" or self.peers or not races.MEMO:
            return None
        return (w.sl, w.shape, mine, self.version)

    @staticmethod
    def _same(key: tuple[Any, ...] | None, last: tuple[Any, ...] | None) -> bool:
        return (
            key is not None
            and last is not None
            and key[2] is last[2]  # (by identity: arrays do not compare to one bool)
            and key[3] == last[3]
            and key[0] == last[0]
            and key[1] == last[1]
        )

    def _ids(self, fr: Frame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(id + 1) << 24, group + 1, epoch and the packed record of the frame's lanes."""
        b = fr.batch
        ids = fr.cache.get("gshadow")
        if ids is None or ids[4] != b.barriers:
            gs = np.asarray(fr.gslot)
            me_hi = (frame_wids(fr) + 1) << _SHIFT
            grp1 = gs + (b.gfirst + 1)
            ep = b.epoch[gs]
            ids = (me_hi, grp1, ep, me_hi | ep, b.barriers)
            fr.cache["gshadow"] = ids
        return ids[0], ids[1], ids[2], ids[3]

    def _wid_of(self, packed: np.ndarray) -> Any:
        def of(other: int, wid: int) -> int | None:
            return int(other >> 24) - 1 if other > 0 else None

        return of

    def _conflict_single(
        self, x: np.ndarray, me_hi: np.ndarray, grp1: np.ndarray, ep: np.ndarray
    ) -> np.ndarray:
        """Lanes whose recorded single accessor ``x`` (> 0) is concurrent with them."""
        other1 = x >> _SHIFT
        mine1 = me_hi >> _SHIFT
        og1 = (other1 - 1) // self.W + 1
        return (x > 0) & (other1 != mine1) & ((og1 != grp1) | ((x & _EMASK) == ep))

    def read(self, fr: Frame, w: Any, loc: Loc) -> None:
        with self.lock:
            self._read(fr, w, loc)

    def write(self, fr: Frame, w: Any, loc: Loc) -> None:
        with self.lock:
            self._write(fr, w, loc)

    def _read(self, fr: Frame, w: Any, loc: Loc) -> None:
        me_hi, grp1, ep, mine = self._ids(fr)
        key = self._key(w, mine)
        if self._same(key, self.last_read):
            self._note("read", loc, w, fr)  # the same read of an unchanged shadow
            return
        self.any_read = True
        wv = w.gather(self.w, False)
        # (the ``== mine`` tests: a loop's read-modify-write of its own elements, every trip;
        # the record is then exactly this access's, so the full test would find nothing and
        # the update would change nothing)
        if nz(wv) and not every_lane(wv == mine):
            bad = self._conflict_single(wv, me_hi, grp1, ep)
            if nz(bad):
                self._race(
                    fr, w, bad, loc, "read", "write", self.w, self._line_of, self._wid_of(self.w)
                )
        rv = w.gather(self.r, False)
        fresh = not nz(rv)
        if w.unique and fresh:
            self.version += 1
            w.put(self.r, full(mine, fr.shape))
        elif fresh or not every_lane(rv == mine):  # the last reader of each element: this one
            self.version += 1
            # (no reader yet: every lane is "fresh" to the merge, which gives ``mine``)
            new = full(mine, fr.shape) if fresh else self._merge_readers(rv, me_hi, grp1, ep, mine)
            w.put(self.r, new)
            if not w.unique:
                dup = w.gather(self.r, False) != new
                if nz(dup):
                    shape = fr.shape
                    d = full(dup, shape)
                    flat = full(w.flat(), shape)[d]
                    self.r[flat] = -((full(grp1, shape)[d] << _SHIFT) | full(ep, shape)[d])
        if key is not None:
            self.last_read = (*key[:3], self.version)
        self._note("read", loc, w, fr)

    def _merge_readers(
        self, rv: np.ndarray, me_hi: np.ndarray, grp1: np.ndarray, ep: np.ndarray, mine: np.ndarray
    ) -> np.ndarray:
        single = rv > 0
        other1 = rv >> _SHIFT
        og1 = np.where(single, (other1 - 1) // self.W + 1, (-rv) >> _SHIFT)
        oep = np.where(single, rv & _EMASK, (-rv) & _EMASK)
        same_g = og1 == grp1
        stale = same_g & (oep != ep)
        fresh = (rv == 0) | stale | (single & (other1 == (me_hi >> _SHIFT)))
        group_multi = -((grp1 << _SHIFT) | ep)
        out = np.where(fresh, mine, np.where(same_g & (rv != _MULTI), group_multi, _MULTI))
        if out.shape == np.shape(mine):
            return out
        return np.broadcast_to(out, np.broadcast_shapes(out.shape, np.shape(mine)))

    def _write(self, fr: Frame, w: Any, loc: Loc) -> None:
        me_hi, grp1, ep, mine = self._ids(fr)
        key = self._key(w, mine)
        if self._same(key, self.last_write):
            self._note("write", loc, w, fr)  # the same write into an unchanged shadow
            return
        wv = w.gather(self.w, False)
        mine_all = False  # this work-item wrote each of these elements last, in this interval
        if nz(wv):
            mine_all = every_lane(wv == mine)
            bad = None if mine_all else self._conflict_single(wv, me_hi, grp1, ep)
            if bad is not None and nz(bad):
                self._race(
                    fr, w, bad, loc, "write", "write", self.w, self._line_of, self._wid_of(self.w)
                )
        rv = w.gather(self.r, False) if self.any_read else None
        if rv is not None and nz(rv) and not every_lane((rv == mine) | (rv == 0)):
            single = self._conflict_single(rv, me_hi, grp1, ep)
            g1 = (-rv) >> _SHIFT
            multi = (rv < 0) & ((rv == _MULTI) | (g1 != grp1) | (((-rv) & _EMASK) == ep))
            bad = single | multi
            if nz(bad):
                self._race(
                    fr, w, bad, loc, "write", "read", self.r, self._line_of, self._wid_of(self.r)
                )
        self._note("write", loc, w, fr)
        if mine_all:
            # the record stays as it is; and no two lanes share an element (the record of
            # each is one work-item's)
            if key is not None:
                self.last_write = key
            return
        self.version += 1
        w.put(self.w, full(mine, fr.shape))
        if key is not None:
            self.last_write = (*key[:3], self.version)
        if not w.unique:
            dup = w.gather(self.w, False) != full(mine, fr.shape)
            if nz(dup):
                self._race(
                    fr, w, dup, loc, "write", "write", self.w, self._line_of, self._wid_of(self.w)
                )
