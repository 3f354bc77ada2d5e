"""Shadow memory for the data-race and uninitialised-read checkers.

Two accesses to one element conflict when they come from different work-items that are
*concurrent* (spec §3.3: unordered): in different work-groups (always), or in the same
work-group and the same barrier interval. A conflict with at least one write is a data race.
Atomic built-ins bypass these shadows.

Local memory (``LocalShadow``, one row per work-group, like the data) keeps, per element and
per barrier interval, the local id of the writer and of the reader (-2: several readers); a
barrier clears the rows of its work-groups. Global memory (``GlobalShadow``, races_global.py,
for buffers the kernel writes) keeps the writer's and readers' work-item, work-group and
barrier epoch, since different work-groups never synchronize. Shadows are read and written
through the same compiled index (``sim.memory.Where``) as the data, so checks cost a few
extra array passes per access, not a Python loop.
"""

from __future__ import annotations

import itertools
from collections import deque
from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.ir.nodes import Loc
from clpy_sim.state import Launch, frame_wids

if TYPE_CHECKING:
    from clpy_sim.frame import Frame

_I32 = np.int32
# ``ndarray.any()``/``.all()`` go through a Python wrapper (a few µs on the small arrays of
# every checked access); counting the non-zero elements is one C call (NumPy's own, without
# ``np.count_nonzero``'s Python layer: 0.16 against 0.54 µs, several per access)
try:
    from numpy._core.multiarray import count_nonzero as nz
except ImportError:  # pragma: no cover (another NumPy layout)
    nz = np.count_nonzero


def every_lane(a: np.ndarray) -> bool:
    """``a.all()`` of an array."""
    return bool(np.count_nonzero(a) == a.size)


def _first(fr: Frame, bad: np.ndarray) -> int:
    """Lane (flat position in the frame) of the first work-item, in id order, among ``bad``."""
    b = np.broadcast_to(bad, fr.shape).ravel()
    lanes = np.flatnonzero(b)
    wids = np.broadcast_to(frame_wids(fr), fr.shape).ravel()[lanes]
    return int(lanes[int(np.argmin(wids))])


# stamps of logged accesses, ordered across the shadows of overlapping buffers
_CLOCK = itertools.count(1)


def stamps(n: int) -> int:
    """The first of ``n`` consecutive stamps for logged accesses (``n`` >= 1)."""
    first = next(_CLOCK)
    deque(itertools.islice(_CLOCK, n - 1), maxlen=0)  # (consumed in C)
    return first


_ALL = slice(None)
KEEP = 16  # logged accesses per (kind, line): a loop of 16 steps between barriers
# repeated accesses skip their (idempotent) checks; read at run time (tests compare both)
MEMO = True
# the cheaper paths (sim/races_global.py: runs on flat slices, records known to be the lanes'
# own; local memory: a pass first for "no record") that end as the general tests would; read at
# run time: False runs every access the general way (tests compare the reports of both)
FAST = True


class _Lanes:
    """A frame's lane coordinates, kept to compute its work-item ids later (``frame_wids``)."""

    __slots__ = ("gslot", "llid", "first", "W")

    def __init__(self, fr: Frame) -> None:
        self.gslot = fr.gslot
        self.llid = fr.llid
        self.first = fr.batch.gfirst
        self.W = fr.batch.launch.W

    def wids(self) -> np.ndarray:
        g = np.asarray(self.gslot, dtype=np.int64) + self.first
        return g * self.W + np.asarray(self.llid, dtype=np.int64)


class Shadow:
    """Race reports name both accesses and both work-items: the shadow records who accessed an
    element last (one work-item, or "several"), and a log keeps, per kind of access and source
    line, the recent compiled indices with the work-items of their lanes, so the other line and,
    where the shadow only knows "several", another work-item can be found by address."""

    launch: Launch
    mem: Any
    log: dict[tuple[str, Loc], deque[Any]]
    log_ids: dict[tuple[str, int], deque[Any]]
    # global buffers overlapping in memory (sim/aliases.py): the shadows sharing this one's
    # arrays, and this buffer's first element's position in them
    peers: list[Any] | None = None
    off: int = 0
    # trip vectorization (sim/tripshadow.py): per batch, the list that holds back this
    # shadow's accesses while a loop's trips are evaluated at once
    taps: dict[Any, list[Any]]
    races: bool  # accesses are checked for races (and logged)

    def _tapped(self, fr: Frame, w: Any, loc: Loc, write: bool) -> bool:
        """Hold back this access (checked and recorded later, sim/tripshadow.py) when its
        batch is evaluating a loop's trips at once."""
        tap = self.taps.get(fr.batch)
        if tap is None:
            return False
        tap.append((self, write, fr, w, loc))
        return True

    def _race(
        self,
        fr: Frame,
        w: Any,
        bad: np.ndarray,
        loc: Loc,
        mine: str,
        theirs: str,
        other_ids: np.ndarray | None,
        other_locs: Any,
        other_wid_of: Any,
    ) -> None:
        k = _first(fr, bad)
        flat = np.broadcast_to(w.flat(), fr.shape).ravel()
        addr = int(flat[k])
        wids = np.broadcast_to(frame_wids(fr), fr.shape).ravel()
        wid = int(wids[k])
        other = None if other_ids is None else int(other_ids.reshape(-1)[addr])
        other_wid = other_wid_of(other, wid) if other is not None else None
        other_loc, logged_wid, via = other_locs(addr, theirs, wid, other_wid)
        if other_loc is None and other_wid is not None:  # its line, from any work-item
            other_loc, _, via = other_locs(addr, theirs, wid, None)
        if other_wid is None:
            # the shadow knows only "several work-items": one of them from the log, or a lane
            # of this very access on the same element (x[0] += 1 in every work-item)
            other_wid = logged_wid
            if other_wid is None:
                same = np.flatnonzero((flat == addr) & (wids != wid))
                if same.size:
                    other_wid = int(wids[same[0]])
                    other_loc = other_loc or loc
        W = self.launch.W
        where = (
            "in different work-groups"
            if other_wid is not None and other_wid // W != wid // W
            else "between the same barriers"
        )
        count = int(np.count_nonzero(np.broadcast_to(bad, fr.shape)))
        index = addr % self.mem.count if getattr(w, "local_count", 0) else addr
        missing = ""
        if other_loc is None or other_wid is None:
            missing = (
                f"; the other {theirs} is older than the checker's log of recent accesses "
                f"({KEEP} per line), so its "
                + (
                    "line and work-item are"
                    if other_loc is None and other_wid is None
                    else "line is"
                    if other_loc is None
                    else "work-item is"
                )
                + " not known"
            )
        what = self.mem.describe()
        through = ""
        if self.peers:
            names = ", ".join(f"`{p.mem.name}`" for p in self.peers if p is not self)
            what += f" (which overlaps {names} in memory)"
            if via is not None and via is not self.mem:
                through = f" through `{via.name}`"
        self.launch.fail(
            "data-race",
            f"{mine}/{theirs} data race on {what}: this {mine} and another work-item's "
            f"{theirs}{through} of the same element are unordered ({where})" + missing,
            loc,
            wid,
            self.mem.name,
            index,
            other_loc,
            other_wid,
            count=count,
        )

    def _note(self, kind: str, loc: Loc, w: Any, fr: Frame) -> None:
        """Remember a recent access (its compiled index and its lanes' work-items) to name the
        other line and work-item of a race: the last ``KEEP`` per kind and line."""
        entries, wids = self.log_of(kind, loc, fr)
        entries.append((next(_CLOCK), w, wids, fr.shape))

    def log_of(self, kind: str, loc: Loc, fr: Frame) -> tuple[deque[Any], Any]:
        """The log of ``kind`` accesses at ``loc``, and the lanes of ``fr`` as it keeps them:
        ``_note`` appends ``(stamp, compiled index, lanes, fr.shape)``."""
        # (by the line's identity first: hashing a ``Loc`` hashes its four fields, per access)
        fast = self.log_ids
        entries = fast.get((kind, id(loc)))
        if entries is None:
            entries = self.log.get((kind, loc))
            if entries is None:
                entries = self.log[(kind, loc)] = deque(maxlen=KEEP)
            fast[(kind, id(loc))] = entries  # (``log`` keeps ``loc`` alive: ids stay unique)
        # the work-items only when a report needs them (computing them per access cost a
        # quarter of a checked tree reduction); the lanes, once per frame
        cache = fr.cache
        wids = cache.get("wid")
        if wids is None:
            wids = cache.get("races_lanes")
            if wids is None:
                wids = cache["races_lanes"] = _Lanes(fr)
        return entries, wids

    def _line_of(
        self, addr: int, kind: str, wid: int, other: int | None
    ) -> tuple[Loc | None, int | None, Any]:
        """The line (and a work-item other than ``wid``; ``other`` if known) of the most
        recent logged ``kind`` access to element ``addr``, and the memory it went through
        (a peer's, for overlapping buffers)."""
        found = sorted(
            (
                (st, loc, w, wids, shape, sh)
                for sh in self.peers or (self,)
                for (k, loc), es in sh.log.items()
                if k == kind
                for st, w, wids, shape in es
            ),
            key=lambda e: -e[0],
        )
        for _, loc, w, wids, shape, sh in found:
            at = addr + self.off - sh.off  # the element's index in that buffer
            flat = np.broadcast_to(np.asarray(w.flat()), shape).ravel()
            if type(wids) is _Lanes:
                wids = wids.wids()
            ids = np.broadcast_to(wids, shape).ravel()
            hit = (flat == at) & (ids != wid)
            if other is not None:
                hit &= ids == other
            lanes = np.flatnonzero(hit)
            if lanes.size:
                return loc, int(ids[lanes[0]]), sh.mem
        return None, None, None


_PENDING = 1024  # reads of local memory waiting for a write (``LocalShadow.pending``)
_PENDING_ELEMENTS = 1 << 20  # index elements they may hold (8 MiB of int64)


class LocalShadow(Shadow):
    """Per work-group rows. Encoding (zeros = untouched, so allocation is free): ``w_own`` is
    the writer's local id + 1, ``r_own`` the reader's local id + 1 or -1 for several."""

    def __init__(self, launch: Launch, G: int, count: int, mem: Any) -> None:
        self.launch = launch
        self.mem = mem
        shape = (G, count)
        self.w_own = np.zeros(shape, _I32)
        # the columns written since the writer records were last all zero (a barrier of
        # every group clears only those: a tree reduction's later intervals write few)
        self.wlo = count
        self.whi = 0
        self.r_own = np.zeros(shape, _I32)
        self.init = np.zeros(shape, bool)
        # the accesses of the current interval, to name the line of a conflicting access
        self.log: dict[tuple[str, Loc], deque[Any]] = {}
        self.log_ids: dict[tuple[str, int], deque[Any]] = {}  # the same lists, by id(loc)
        self.races = "races" in launch.checks
        self.uninit = "uninit" in launch.checks
        self.taps = {}
        # Whether any work-group wrote/read this memory in its current barrier interval:
        # when not, the conflict checks of the other kind of access are skipped.
        self.wrote = False
        self.read_ = False
        self.all_init = False
        # Reads are only recorded in ``r_own`` when a write of the same interval needs them
        # (most intervals only read or only write): until then they wait here.
        self.pending: list[tuple[Any, np.ndarray, tuple[int, int]]] = []
        self.pending_size = 0  # index elements the pending reads hold (bounds their memory)
        self.r_clean = True
        # Repeated accesses (``tile[tx * BS + i] -= ...`` every trip) by the same lanes are
        # idempotent while ``w_own``/``r_own``/``init`` are as they left them (``version``).
        # A write skipped so leaves the reads pending since to the next write or barrier: a
        # read of its elements by other work-items was reported at the read, and the merge of
        # readers does not depend on their order.
        self.version = 0
        self.last_read: tuple[Any, ...] | None = None
        self.last_write: tuple[Any, ...] | None = None

    def reset(self, rows: Any) -> None:
        """A barrier of the work-groups ``rows`` (batch slots) starts a new interval."""
        if not (self.wrote or self.read_):
            return
        self.version += 1
        if isinstance(rows, slice):
            self.pending.clear()
            self.pending_size = 0
            if self.wrote:  # (else nothing was written since the last clearing: all zero)
                if self.wlo == 0 and self.whi == self.w_own.shape[1]:
                    self.w_own[...] = 0
                elif self.wlo < self.whi:
                    self.w_own[:, self.wlo : self.whi] = 0
                self.wlo = self.w_own.shape[1]
                self.whi = 0
            self.wrote = self.read_ = False
            for es in self.log.values():  # (the lists stay: making them anew after every
                es.clear()  # barrier hashed each line's ``Loc``)
            if not self.r_clean:
                self.r_own[...] = 0
                self.r_clean = True
            return
        self._replay()
        self.w_own[rows] = 0
        self.r_own[rows] = 0

    def _replay(self) -> None:
        """Record the pending reads in ``r_own``."""
        if self.pending:
            self.version += 1
        for w, me, shape in self.pending:
            if w.kind == "col" and shape[-1] > 1:
                # one element per work-group, read by its several work-items: "several"
                # (what the general steps below end with, each lane's id differing)
                self.r_own[w.rows, w.idx] = -1
                self.r_clean = False
                continue
            if self.r_clean and w.unique:
                new = me
            else:
                ro = w.gather(self.r_own, False)
                # (no reader yet of any of these elements: each records its lane)
                new = np.where((ro == 0) | (ro == me), me, _I32(-1)) if nz(ro) or not FAST else me
            w.put(self.r_own, new)
            self.r_clean = False
            if not w.unique:
                dup = w.gather(self.r_own, False) != new
                if nz(dup):
                    flat = np.broadcast_to(w.flat(), shape)[np.broadcast_to(dup, shape)]
                    self.r_own.reshape(-1)[flat] = -1
        self.pending.clear()
        self.pending_size = 0

    def _me(self, fr: Frame) -> np.ndarray:
        me = fr.cache.get("me1")
        if me is None:
            me = np.asarray(fr.llid).astype(_I32) + _I32(1)
            fr.cache["me1"] = me
        return me

    def _other(self, fr: Frame) -> Any:
        W = self.launch.W

        def of(other1: int, wid: int) -> int | None:
            return (wid // W) * W + other1 - 1 if other1 > 0 else None

        return of

    def _seen(self, last: tuple[Any, ...] | None, w: Any, me: np.ndarray) -> bool:
        """The access through ``w`` by the lanes ``me`` is the remembered one ``last`` and
        the records are as it left them. Indices are the same when they are one remembered
        ``Where``, or column slices or ``take``s of every group's row with equal columns (the
        ``take`` indices of a remembered row are one array: compared by identity)."""
        if not (MEMO and last is not None and last[1] is me and last[2] == self.version):
            return False
        lw = last[0]
        if lw is w:
            return True
        return bool(
            w.kind == lw.kind
            and (w.kind == "slice" or w.kind == "take")
            and type(w.rows) is slice
            and type(lw.rows) is slice
            and w.rows == _ALL
            and lw.rows == _ALL
            and w.shape == lw.shape
            and (w.sl == lw.sl if w.kind == "slice" else w.idx is lw.idx)
        )

    def read(self, fr: Frame, w: Any, loc: Loc) -> None:
        if self.taps and self._tapped(fr, w, loc, False):
            return
        me = fr.cache.get("me1")
        if me is None:
            me = self._me(fr)
        last = self.last_read
        # (``_seen``'s first tests inline: most reads are not the remembered one)
        if last is not None and last[1] is me and self._seen(last, w, me):
            self._note("read", loc, w, fr)
            return
        if self.uninit and not self.all_init:
            ini = w.gather(self.init, False)
            if not every_lane(ini):
                bad = ~ini
                k = _first(fr, bad)
                addr = int(np.broadcast_to(w.flat(), fr.shape).ravel()[k])
                self.launch.fail_lanes(
                    fr,
                    bad,
                    "uninitialized-read",
                    f"read of {self.mem.describe()} that no work-item of the group has written",
                    loc,
                    self.mem.name,
                    addr % self.mem.count,
                )
        if not self.races:
            return
        if self.wrote:
            wo = w.gather(self.w_own, False)
            # (no writer, or each element's is this lane: most reads; one pass each)
            if not FAST or (nz(wo) and not every_lane(wo == me)):
                bad = (wo != 0) & (wo != me)
                if nz(bad):
                    self._race(
                        fr, w, bad, loc, "read", "write", self.w_own, self._line_of, self._other(fr)
                    )
        self._pend(w, me, fr.shape)
        self.last_read = (w, me, self.version)
        self._note("read", loc, w, fr)

    def _pend(self, w: Any, me: np.ndarray, shape: tuple[int, int]) -> None:
        """Record a read (which waits in ``pending``)."""
        self.read_ = True
        # (``me`` as it is: broadcasting it to the frame's shape cost more than the read)
        self.pending.append((w, me, shape))
        # Reads wait until a write of the interval needs them (a barrier of every group drops
        # them unread: a loop of reads between barriers, like a tile's inner product, never
        # records them), as long as what they hold stays small: their compiled indices
        idx = w.idx
        self.pending_size += idx.size if isinstance(idx, np.ndarray) else 1
        if len(self.pending) > _PENDING or self.pending_size > _PENDING_ELEMENTS:
            self._replay()

    def write(self, fr: Frame, w: Any, loc: Loc) -> None:
        if self.taps and self._tapped(fr, w, loc, True):
            return
        me = self._me(fr)
        if self._seen(self.last_write, w, me):
            if self.races:
                self._note("write", loc, w, fr)
            return
        if self.races:
            if self.wrote:
                wo = w.gather(self.w_own, False)
                bad = (
                    (wo != 0) & (wo != me)
                    if not FAST or (nz(wo) and not every_lane(wo == me))
                    else None
                )
                if bad is not None and nz(bad):
                    self._race(
                        fr,
                        w,
                        bad,
                        loc,
                        "write",
                        "write",
                        self.w_own,
                        self._line_of,
                        self._other(fr),
                    )
            if self.read_:
                self._replay()
                ro = w.gather(self.r_own, False)
                bad = (
                    (ro != 0) & (ro != me)
                    if not FAST or (nz(ro) and not every_lane(ro == me))
                    else None
                )
                if bad is not None and nz(bad):
                    self._race(
                        fr, w, bad, loc, "write", "read", self.r_own, self._line_of, self._other(fr)
                    )
        self._record_write(w, me)
        if self.races:
            self._note("write", loc, w, fr)
            if not w.unique:
                dup = w.gather(self.w_own, False) != me
                if nz(dup):
                    self._race(
                        fr,
                        w,
                        dup,
                        loc,
                        "write",
                        "write",
                        self.w_own,
                        self._line_of,
                        self._other(fr),
                    )
        self.version += 1
        self.last_write = (w, me, self.version)

    def _record_write(self, w: Any, me: np.ndarray) -> None:
        if self.races:
            self.wrote = True
            self._written(w)
            w.put(self.w_own, me)  # (assignment broadcasts it over the frame's lanes)
        if self.uninit and not self.all_init:
            w.put(self.init, True)
            self.all_init = every_lane(self.init)

    def _written(self, w: Any) -> None:
        """Widen the written columns (``wlo``, ``whi``) by the elements of ``w``."""
        count = self.w_own.shape[1]
        lo, hi = 0, count
        sl = w.sl
        if w.kind == "slice" and type(sl) is slice and sl.step in (None, 1):
            lo, hi, _ = sl.indices(count)
        if lo < self.wlo:
            self.wlo = lo
        if hi > self.whi:
            self.whi = hi

    # A trip-vectorized loop's accesses (sim/tripshadow.py): each checked against the records
    # as they were before the loop, then recorded, no report and no log entry

    def quiet(self, fr: Frame, w: Any, write: bool) -> bool:
        """Whether the checks of this access find nothing in the records as they are. A write
        first records the pending reads (``_replay``, which changes no finding)."""
        me = self._me(fr)
        if not write and self.uninit and not self.all_init:
            if not every_lane(w.gather(self.init, False)):
                return False
        if not self.races:
            return True
        if self.wrote:
            wo = w.gather(self.w_own, False)
            if nz((wo != 0) & (wo != me)):
                return False
        if write and self.read_:
            self._replay()
            ro = w.gather(self.r_own, False)
            if nz((ro != 0) & (ro != me)):
                return False
        return True

    def record(self, fr: Frame, w: Any, write: bool) -> None:
        """What this access, whose checks find nothing, leaves in the records."""
        me = self._me(fr)
        if write:
            if self.races and self.read_:
                self._replay()  # (as the write's checks do)
            self._record_write(w, me)
        elif self.races:
            self._pend(w, me, fr.shape)
        self.version += 1
