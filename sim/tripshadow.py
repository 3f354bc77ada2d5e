"""The race and uninitialised-memory checkers' part in trip vectorization (``sim/tripvec.py``).

Their shadows record every access, and the trip-by-trip loop checks each access against the
records left by the accesses before it. A vectorized loop's trips touch disjoint elements
(``tripvec`` proves it: no load reads an element the loop writes, no element is written
twice, a memory reduction's target is its own lane's), so every check of the trip-by-trip loop
would compare with the records as they were before the loop, and what the loop leaves in them
does not depend on the order of its trips. ``ShadowTap`` therefore holds the shadows' accesses
back while the trips are evaluated at once (``Shadow.taps``), then:

- ``settle``: checks every held-back access against the records as they are (``quiet``, no
  report). If any would find something, the vectorized attempt is dropped (``tripvec`` undoes
  its memory writes) and the loop runs trip by trip from the same state, which reports it;
- ``commit``: records them (``record``), and logs the last ``KEEP`` trips' accesses one trip
  at a time, in the trip's order (``note``): the log from which a later report names the
  other access's line and work-item then holds what the trip-by-trip loop leaves there.

The held-back accesses must be those of the trip-by-trip loop: each made on its chunk's
expanded frame (lanes of a conditional operand would run on a sub-frame: the loop then runs
trip by trip) or, for a memory reduction's target, on the loop's frame (its load before the
first trip's value, its store after the last). With threads, the global shadows' locks are held
from the checks to the records, so that another batch's accesses come before or after the loop's
as a whole (each access trip by trip is atomic the same way).
"""

from __future__ import annotations

from typing import Any

from clpy_sim.frame import Frame
from clpy_sim.races import KEEP, stamps

Entry = tuple[Any, bool, Frame, Any, Any]  # (shadow, write, frame, compiled index, loc)


class _TripWhere:
    """Trip ``t`` of ``trips`` of an expanded frame's compiled index ``w``: the element
    indices of the trip-by-trip loop's access at that trip (all the log asks of an index)."""

    __slots__ = ("w", "trips", "t")

    def __init__(self, w: Any, trips: int, t: int) -> None:
        self.w = w
        self.trips = trips
        self.t = t

    def flat(self) -> Any:
        f = self.w.flat()
        g, n = f.shape[-2:]
        return f.reshape(g, self.trips, n // self.trips)[:, self.t, :]


class ShadowTap:
    """The held-back shadow accesses of one vectorized run of a loop in ``batch``."""

    def __init__(self, batch: Any, shadows: list[Any]) -> None:
        self.batch = batch
        self.shadows = shadows
        self.entries: list[Entry] = []
        # per chunk of trips: [first entry, first entry of the statement (after the
        # declarations), expanded frame, first trip, trips]
        self.chunks: list[list[Any]] = []
        self.end = 0  # entries of the chunks end here (a memory reduction's store follows)
        self.locked: list[Any] = []

    def start(self) -> None:
        for sh in self.shadows:
            sh.taps[self.batch] = self.entries

    def stop(self) -> None:
        for sh in self.shadows:
            sh.taps.pop(self.batch, None)
        for lock in reversed(self.locked):
            lock.release()
        self.locked.clear()

    def chunk(self, x: Frame, t0: int, trips: int) -> None:
        """The trips ``t0 .. t0 + trips - 1`` start, on the expanded frame ``x``."""
        n = len(self.entries)
        self.chunks.append([n, n, x, t0, trips])

    def mark(self) -> None:
        """The chunk's declarations are done; its statement starts."""
        self.chunks[-1][1] = len(self.entries)

    def settle(self, fr: Frame, target_write: bool) -> bool:
        """Whether the held-back accesses are the trip-by-trip loop's and none of their checks
        finds anything. ``target_write``: a memory reduction, whose store (after this) is
        checked as its target's load before the chunks was. Takes the global shadows' locks
        (``stop`` releases them)."""
        entries = self.entries
        self.end = len(entries)
        pre = self.chunks[0][0] if self.chunks else self.end
        if pre and not target_write:
            return False
        if any(e[2] is not fr for e in entries[:pre]):
            return False
        for k, (start, _, x, _, _) in enumerate(self.chunks):
            stop = self.chunks[k + 1][0] if k + 1 < len(self.chunks) else self.end
            for e in entries[start:stop]:
                if e[2] is not x:
                    return False
        locks = {id(sh.lock): sh.lock for sh in self.shadows if hasattr(sh, "lock")}
        for key in sorted(locks):
            locks[key].acquire()
            self.locked.append(locks[key])
        for sh, write, f, w, _ in entries:
            if not sh.quiet(f, w, write):
                return False
        if target_write:
            for sh, write, f, w, _ in entries[:pre]:
                if not write and not sh.quiet(f, w, True):
                    return False
        return True

    def commit(self, fr: Frame, n: int) -> None:
        """Record the held-back accesses of the loop's ``n`` trips, and log its last trips."""
        entries = self.entries
        for sh, write, f, w, _ in entries:
            sh.record(f, w, write)
        chunks = self.chunks
        pre = entries[: chunks[0][0]]
        post = entries[self.end :]
        first = max(0, n - KEEP)
        logs: dict[Any, Any] = {}  # per (shadow, kind, line): its log and the lanes, or None
        shape = fr.shape
        for k, (start, mark, _, t0, trips) in enumerate(chunks):
            if t0 + trips <= first:
                continue
            stop = chunks[k + 1][0] if k + 1 < len(chunks) else self.end
            trip = []  # (log, lanes, compiled index, on the loop's frame) in the trip's order
            for sh, write, f, w, loc in [*entries[start:mark], *pre, *entries[mark:stop], *post]:
                key = (id(sh), write, id(loc))
                lg = logs.get(key, False)
                if lg is False:
                    lg = logs[key] = (
                        sh.log_of("write" if write else "read", loc, fr) if sh.races else None
                    )
                trip.append((None, None, None, True) if lg is None else (*lg, w, f is fr))
            logged = range(max(first - t0, 0), trips)
            stamp = stamps(len(trip) * len(logged))
            for rel in logged:
                for dq, lanes, w, same in trip:
                    if dq is not None:
                        dq.append((stamp, w if same else _TripWhere(w, trips, rel), lanes, shape))
                    stamp += 1
