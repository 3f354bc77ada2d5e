"""Shadow memory of global buffers for the data-race and uninitialised-read checkers
(``GlobalShadow``); sim/races.py has the shared checks and local memory's shadow, and says
what conflicts (spec §3.3)."""

from __future__ import annotations

import threading
from collections import deque
from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.ir.nodes import Loc
from clpy_sim import races, shadow_pool
from clpy_sim.races import Shadow, every_lane, nz
from clpy_sim.state import Launch
from clpy_sim.values import full

if TYPE_CHECKING:
    from clpy_sim.frame import Frame

_SHIFT = np.int64(24)
_EMASK = np.int64((1 << 24) - 1)
_MULTI = np.int64(-(1 << 62))  # readers in several work-groups
_NO_WRITER = "no writer"  # (``GlobalShadow.read_state``)
_OWN_WRITES = "own writes"


class GlobalShadow(Shadow):
    """Flat, for buffers the kernel writes. One int64 per element and kind of access, zero
    for none: a single work-item is ``(internal id + 1) << 24 | barrier epoch``; several
    readers of one work-group are ``-((group + 1) << 24 | epoch)``; readers in several
    work-groups are ``_MULTI``. Accesses of the same work-group in earlier barrier intervals
    are ordered (stale); any two of different work-groups are concurrent."""

    def __init__(self, launch: Launch, count: int, mem: Any) -> None:
        self.launch = launch
        self.mem = mem
        self.rec = shadow_pool.take(launch, count)
        self.w = self.rec.w
        self.r = self.rec.r
        self.any_read = False  # until a read, the reader array is all zero: skip it
        self.any_write = False  # the same for the writer array (overlapping buffers: peers)
        self.log: dict[tuple[str, Loc], deque[Any]] = {}
        self.log_ids: dict[tuple[str, int], deque[Any]] = {}  # the same lists, by id(loc)
        self.W = np.int64(launch.W)
        self.races = True
        self.taps = {}
        # batches on other threads update the same shadow: each check-and-record is atomic,
        # so a cross-group race is found in any interleaving (sim/parallel.py)
        self.lock = threading.Lock()
        # Repeated accesses (``r[k * n + j] += ...`` every trip) are idempotent while the
        # shadow is as they left it: ``version`` counts the changes of ``w``/``r``
        self.version = 0
        self.last_read: tuple[Any, ...] | None = None
        self.last_write: tuple[Any, ...] | None = None
        # what the remembered read (``last_read``) found of the writers: none, or the lanes'
        # own in this interval; None: other (its write skips no check)
        self.read_state: str | None = None

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
            ids = _packed(fr)
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
        if self.taps and self._tapped(fr, w, loc, False):
            return
        with self.lock:
            if w.kind == "run" and self.peers is None and races.FAST:
                self._read_run(fr, w, loc)
            else:
                self._read(fr, w, loc)

    def write(self, fr: Frame, w: Any, loc: Loc) -> None:
        if self.taps and self._tapped(fr, w, loc, True):
            return
        with self.lock:
            if w.kind == "run" and self.peers is None and races.FAST:
                self._write_run(fr, w, loc)
            else:
                self._write(fr, w, loc)

    # Runs of consecutive elements (``a[i * n + j]`` in a loop: most accesses of the real
    # programs' serial loops) on flat slices of the records, with the frame's packed records
    # flat too: ``_read``/``_write`` for a ``run``, in fewer and cheaper NumPy calls (their
    # fixed costs, not the elements, are most of a small access's).

    def _run_ids(self, fr: Frame, w: Any) -> tuple[Any, ...] | None:
        ids = fr.cache.get("gshadow")
        if ids is None or ids[4] != fr.batch.barriers:
            self._ids(fr)
            ids = fr.cache["gshadow"]
        if ids[5].size != w.shape[0] * w.shape[1]:
            return None
        return ids

    def _race_writer(self, fr: Frame, w: Any, bad: Any, loc: Loc, kind: str) -> None:
        """Report this access (``kind``) against the recorded writers of the lanes ``bad``."""
        self._race(fr, w, bad, loc, kind, "write", self.w, self._line_of, self._wid_of(self.w))

    def _unchanged(self, last: Any, sl: int, shape: Any, mine: Any) -> bool:
        """Whether ``last`` (a memo entry: start, shape, the lanes' records, shadow version)
        is this access of these lanes, with the shadow unchanged since."""
        return (
            last is not None
            and last[2] is mine
            and last[3] == self.version
            and last[0] == sl
            and last[1] == shape
        )

    def _read_run(self, fr: Frame, w: Any, loc: Loc) -> None:
        ids = self._run_ids(fr, w)
        if ids is None:
            self._read(fr, w, loc)
            return
        mine = ids[3]
        sl = w.sl
        memo = races.MEMO
        last = self.last_read
        if memo and self._unchanged(last, sl, w.shape, mine):
            self._note("read", loc, w, fr)  # the same read of an unchanged shadow
            return
        mf = ids[5]
        s = slice(sl, sl + mf.size)
        self.any_read = True
        state: str | None = _NO_WRITER
        if self.any_write:
            wv = self.w[s]
            if nz(wv):
                state = _OWN_WRITES if not nz(wv != mf) else None
                if state is None:
                    bad = self._conflict_single(wv.reshape(fr.shape), ids[0], ids[1], ids[2])
                    if nz(bad):
                        self._race_writer(fr, w, bad, loc, "read")
        rv = self.r[s]
        self.rec.read(s.start, s.stop)
        if not nz(rv):
            self.version += 1
            self.r[s] = mf
        elif nz(rv != mf):
            self.version += 1
            if not nz(_items(rv, mf)):
                self.r[s] = mf
            else:
                new = self._merge_readers(rv.reshape(fr.shape), ids[0], ids[1], ids[2], mine)
                self.r[s] = new.reshape(-1)
                state = None  # (the records are not all this access's)
        if memo:
            self.last_read = (sl, w.shape, mine, self.version)
            self.read_state = state
        self._note("read", loc, w, fr)

    def _write_run(self, fr: Frame, w: Any, loc: Loc) -> None:
        ids = self._run_ids(fr, w)
        if ids is None:
            self._write(fr, w, loc)
            return
        mine = ids[3]
        sl = w.sl
        memo = races.MEMO
        last = self.last_write
        if memo and self._unchanged(last, sl, w.shape, mine):
            self._note("write", loc, w, fr)  # the same write into an unchanged shadow
            return
        mf = ids[5]
        s = slice(sl, sl + mf.size)
        last = self.last_read
        if memo and self._unchanged(last, sl, w.shape, mine) and self.read_state is not None:
            # A read-modify-write (``a[i * n + j] -= ...``): the read of these elements by
            # these lanes just before, into an unchanged shadow, found no writer or the lanes'
            # own (``read_state``) and left each element's reader record the lane's own; the
            # write's checks would find nothing.
            mine_all = self.read_state == _OWN_WRITES
        else:
            mine_all = self._write_run_checks(fr, w, loc, ids, s)
        self._note("write", loc, w, fr)
        if mine_all:
            if memo:
                self.last_write = (sl, w.shape, mine, self.version)
            return
        self.version += 1
        self.any_write = True
        self.rec.wrote(s.start, s.stop)
        self.w[s] = mf
        if memo:
            self.last_write = (sl, w.shape, mine, self.version)

    def _write_run_checks(
        self, fr: Frame, w: Any, loc: Loc, ids: tuple[Any, ...], s: slice
    ) -> bool:
        """A run write's conflicts with the records; whether each element's writer record is
        this lane's, in this interval, already."""
        mf = ids[5]
        mine_all = False
        if self.any_write:
            wv = self.w[s]
            if nz(wv):
                mine_all = not nz(wv != mf)
                if not mine_all and nz(_items(wv, mf)):
                    bad = self._conflict_single(wv.reshape(fr.shape), ids[0], ids[1], ids[2])
                    if nz(bad):
                        self._race_writer(fr, w, bad, loc, "write")
        if self.any_read:
            rv = self.r[s]
            if nz(rv) and nz(rv != mf):
                items = _items(rv, mf)
                if nz(items) and not every_lane((items == 0) | (rv == 0)):
                    self._read_conflicts(fr, w, loc, rv.reshape(fr.shape), ids)
        return mine_all

    def _read_conflicts(
        self, fr: Frame, w: Any, loc: Loc, rv: np.ndarray, ids: tuple[Any, ...]
    ) -> None:
        """Report a write's lanes whose elements' reader records ``rv`` are concurrent."""
        bad = self._reader_conflicts(rv, ids[0], ids[1], ids[2])
        if nz(bad):
            of = self._wid_of(self.r)
            self._race(fr, w, bad, loc, "write", "read", self.r, self._line_of, of)

    def _reader_conflicts(
        self, rv: np.ndarray, me_hi: np.ndarray, grp1: np.ndarray, ep: np.ndarray
    ) -> np.ndarray:
        """Lanes whose elements' reader records ``rv`` are concurrent with them."""
        single = self._conflict_single(rv, me_hi, grp1, ep)
        g1 = (-rv) >> _SHIFT
        multi = (rv < 0) & ((rv == _MULTI) | (g1 != grp1) | (((-rv) & _EMASK) == ep))
        return single | multi

    def _read(self, fr: Frame, w: Any, loc: Loc) -> None:
        me_hi, grp1, ep, mine = self._ids(fr)
        key = self._key(w, mine)
        if self._same(key, self.last_read):
            self._note("read", loc, w, fr)  # the same read of an unchanged shadow
            return
        self.any_read = True
        if self.any_write or self.peers or not races.FAST:
            wv = w.gather(self.w, False)
            # (the ``== mine`` tests: a loop's read-modify-write of its own elements, every
            # trip; the record is then exactly this access's, so the full test would find
            # nothing and the update would change nothing)
            if nz(wv) and not every_lane(wv == mine):
                bad = self._conflict_single(wv, me_hi, grp1, ep)
                if nz(bad):
                    self._race_writer(fr, w, bad, loc, "read")
        self._record_read(w, fr.shape, me_hi, grp1, ep, mine)
        if key is not None:
            self.last_read = (*key[:3], self.version)
            self.read_state = None
        self._note("read", loc, w, fr)

    def _record_read(
        self,
        w: Any,
        shape: tuple[int, int],
        me_hi: np.ndarray,
        grp1: np.ndarray,
        ep: np.ndarray,
        mine: np.ndarray,
    ) -> None:
        """Merge the lanes of a read into the reader records."""
        rv = w.gather(self.r, False)
        self.rec.read_where(w)
        if not nz(rv):  # no reader yet: every lane records itself
            self.version += 1
            w.put(self.r, full(mine, shape))
            if not w.unique:
                self._several_readers(w, full(mine, shape), grp1, ep, shape)
        elif not every_lane(rv == mine):  # (else the last reader of each element: this one)
            self.version += 1
            if races.FAST and not nz(_items(rv, mine)):
                # each element's last reader is this lane's work-item, in an earlier interval:
                # the merge gives ``mine`` (and no two lanes share an element)
                w.put(self.r, full(mine, shape))
            else:
                new = self._merge_readers(rv, me_hi, grp1, ep, mine)
                w.put(self.r, new)
                if not w.unique:
                    self._several_readers(w, new, grp1, ep, shape)

    def _several_readers(
        self, w: Any, new: np.ndarray, grp1: np.ndarray, ep: np.ndarray, shape: tuple[int, int]
    ) -> None:
        """After ``new`` was scattered to the reader records: elements that several lanes of
        this access read hold one of them. They become "several readers of the group" when
        their lanes are of one group and none of their records says "several groups"
        (``_MULTI``, from the merge with an older record); else ``_MULTI``: what merging the
        lanes' reads one after another gives, in any order."""
        dup = w.gather(self.r, False) != new
        if not nz(dup):
            return
        flat = full(w.flat(), shape)
        # every lane of an element some lane lost (the scatter's winner too)
        hit = np.zeros(self.r.shape, bool)
        hit[flat[full(dup, shape)]] = True
        d = hit[flat]
        fd = flat[d]
        val = -((full(grp1, shape)[d] << _SHIFT) | full(ep, shape)[d])
        val[full(new, shape)[d] == _MULTI] = _MULTI
        self.r[fd] = val
        mixed = self.r[fd] != val  # (lanes of several groups, or one says _MULTI)
        if nz(mixed):
            self.r[fd[mixed]] = _MULTI

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
        mine_all = False  # this work-item wrote each of these elements last, in this interval
        # no two lanes share an element: each element's record is one of the lanes' own
        unique = w.unique
        if self.any_write or self.peers or not races.FAST:
            wv = w.gather(self.w, False)
            if nz(wv):
                mine_all = every_lane(wv == mine)
                if mine_all:
                    unique = True
                elif races.FAST and not nz(_items(wv, mine)):
                    unique = True  # (each lane's own write of an earlier interval)
                else:
                    bad = self._conflict_single(wv, me_hi, grp1, ep)
                    if nz(bad):
                        self._race_writer(fr, w, bad, loc, "write")
        rv = w.gather(self.r, False) if self.any_read else None
        if rv is not None and nz(rv):
            if not races.FAST:  # (every test, the general way)
                if not every_lane((rv == mine) | (rv == 0)):
                    self._read_conflicts(fr, w, loc, rv, (me_hi, grp1, ep))
            elif every_lane(rv == mine):
                unique = True  # (a read-modify-write: each lane read its element last)
            else:
                items = _items(rv, mine)
                if nz(items) and not every_lane((items == 0) | (rv == 0)):
                    self._read_conflicts(fr, w, loc, rv, (me_hi, grp1, ep))
                elif not nz(items):
                    unique = True
        self._note("write", loc, w, fr)
        if mine_all:
            # the record stays as it is; and no two lanes share an element (the record of
            # each is one work-item's)
            if key is not None:
                self.last_write = key
            return
        self._record_write(w, fr.shape, mine)
        if key is not None:
            self.last_write = (*key[:3], self.version)
        if not unique:
            dup = w.gather(self.w, False) != full(mine, fr.shape)
            if nz(dup):
                self._race_writer(fr, w, dup, loc, "write")

    def _record_write(self, w: Any, shape: tuple[int, int], mine: np.ndarray) -> None:
        self.version += 1
        self.any_write = True
        self.rec.wrote_where(w)
        w.put(self.w, full(mine, shape))

    # A trip-vectorized loop's accesses (sim/tripshadow.py, under ``lock``): each checked
    # against the records as they were before the loop, then recorded, no report, no log entry

    def quiet(self, fr: Frame, w: Any, write: bool) -> bool:
        """Whether the checks of this access find nothing in the records as they are."""
        me_hi, grp1, ep, mine = self._ids(fr)
        # (the ``mine`` tests first: records of the lanes' own accesses, most often)
        if self.any_write:
            wv = w.gather(self.w, False)
            if nz(wv) and not every_lane(wv == mine):
                if nz(self._conflict_single(wv, me_hi, grp1, ep)):
                    return False
        if write and self.any_read:
            rv = w.gather(self.r, False)
            if nz(rv) and not every_lane(rv == mine):
                if nz(self._reader_conflicts(rv, me_hi, grp1, ep)):
                    return False
        return True

    def record(self, fr: Frame, w: Any, write: bool) -> None:
        """What this access, whose checks find nothing, leaves in the records."""
        me_hi, grp1, ep, mine = self._ids(fr)
        if write:
            self._record_write(w, fr.shape, mine)
        else:
            self.any_read = True
            self._record_read(w, fr.shape, me_hi, grp1, ep, mine)
        self.version += 1


def _packed(fr: Frame) -> tuple[Any, ...]:
    """A frame's ids for the shadow (``GlobalShadow._ids``, cached per frame and interval):
    ``(id + 1) << 24 | epoch`` of each lane is ``(group * W + 1) << 24 | epoch``, per group,
    plus ``local id << 24``: one pass over the frame's lanes where the group slots and local
    ids broadcast (the root frame's (G, 1) and (1, W)), against five with the work-item ids.
    The lanes' ``me_hi`` (``(id + 1) << 24``) is this record itself: every use shifts it
    right by 24, and the epoch is below ``1 << 24``."""
    b = fr.batch
    W = b.launch.W
    gs = np.asarray(fr.gslot)
    epoch = b.epoch
    e0 = epoch[0]
    # (one epoch for every group, most often: the scalar broadcasts where the lanes' would)
    ep = e0 if not nz(epoch != e0) else epoch.take(gs)
    grp1 = gs + (b.gfirst + 1)
    llid = np.asarray(fr.llid)
    if gs.shape == fr.shape:
        # a sub-frame's lanes (gathered slots and ids): in place, one array (each operation
        # into a new one cost ~9x as much at 16k lanes: fresh pages of large temporaries)
        mine = np.multiply(gs, W, dtype=np.int64)
        mine += llid
        mine += b.gfirst * W + 1
        mine <<= _SHIFT
        mine |= ep
        return (mine, grp1, ep, mine, b.barriers, mine.reshape(-1))
    hi = (((np.asarray(grp1, dtype=np.int64) - 1) * W + 1) << _SHIFT) | ep
    mine = hi + (llid.astype(np.int64) << _SHIFT)
    if mine.shape != fr.shape:
        mine = np.broadcast_to(mine, fr.shape).copy()
    return (mine, grp1, ep, mine, b.barriers, mine.reshape(-1))


def _items(x: np.ndarray, mine: np.ndarray) -> np.ndarray:
    """Zero where the record ``x`` is the lane's own work-item alone (any barrier interval;
    ``mine`` is its packed record): the bits above the epoch equal."""
    return (x ^ mine) >> _SHIFT
