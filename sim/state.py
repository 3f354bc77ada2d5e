"""Per-launch and per-batch state: geometry, configuration, reports, printf buffer."""

from __future__ import annotations

import math
import weakref
from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.ir.nodes import Loc
from clpy_sim.config import SimConfig
from clpy_sim.errors import Report, SimulationError, user_site, warn_once

if TYPE_CHECKING:
    from clpy_sim.frame import Frame


class Launch:
    """One ``sim.launch``: the NDRange geometry, settings, findings and printf output."""

    def __init__(
        self,
        cfg: SimConfig,
        gsize: tuple[int, ...],
        lsize: tuple[int, ...],
        offset: tuple[int, ...],
    ) -> None:
        self.cfg = cfg
        self.gsize = gsize
        self.lsize = lsize
        self.offset = offset
        self.dims = len(gsize)
        # OpenCL 2.0 non-uniform work-groups: the last group of a dimension may be smaller
        self.ngroups = tuple(-(-g // sz) for g, sz in zip(gsize, lsize))
        self.uniform = all(g % sz == 0 for g, sz in zip(gsize, lsize))
        self.W = math.prod(lsize)
        self.total_groups = math.prod(self.ngroups)
        self.reports: list[Report] = []
        self.warned: set[tuple[str, Loc]] = set()
        # where on_error="warn" points its warnings: the user's launch line (taken here, in
        # the launching thread; work-group batches may run on others)
        self.site = user_site() if cfg.on_error == "warn" else None
        self.prints: list[tuple[np.ndarray, int, list[str]]] = []
        self.checks = cfg.checks
        # device-side enqueue (sim/enqueue.py): the queue shared with child launches, how deep
        # below the host's launch this one is, and the command it runs (None: the host's)
        self.device_queue: Any = None
        self.enqueue_depth = 0
        self.command: Any = None
        # global memory objects and images, for the snapshot of a parallel launch
        self.memories: list[Any] = []
        # a parallel launch with the race checker: copies of the written memories' contents
        # from before the launch (memories made during it, like program-scope variables, add
        # theirs when made), to run it again on one thread after a finding
        self.saved: list[tuple[Any, np.ndarray]] | None = None

    # ------------------------------------------------------------------ ids

    def ids_of(self, wid: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        """(global id, local id, group id) of a work-item from its internal linear id."""
        glin, llin = divmod(int(wid), self.W)
        lid: list[int] = []
        grp: list[int] = []
        for d in range(self.dims):
            llin, r = divmod(llin, self.lsize[d])
            lid.append(r)
            glin, q = divmod(glin, self.ngroups[d])
            grp.append(q)
        gid = tuple(g * s + x + o for g, s, x, o in zip(grp, self.lsize, lid, self.offset))
        return gid, tuple(lid), tuple(grp)

    def global_linear(self, wid: np.ndarray) -> np.ndarray:
        """The spec's global linear id (work-item order) of internal ids."""
        glin, llin = np.divmod(wid, self.W)
        out = np.zeros_like(wid)
        stride = 1
        for d in range(self.dims):
            llin, lr = np.divmod(llin, self.lsize[d])
            glin, gq = np.divmod(glin, self.ngroups[d])
            out += (gq * self.lsize[d] + lr) * stride
            stride *= self.gsize[d]
        return out

    def group_local_sizes(self, glin: np.ndarray) -> list[np.ndarray]:
        """Per dimension, the local size of the work-groups with linear ids ``glin``."""
        out = []
        for d in range(self.dims):
            glin, q = np.divmod(glin, self.ngroups[d])
            rem = self.gsize[d] - (self.ngroups[d] - 1) * self.lsize[d]
            out.append(np.where(q == self.ngroups[d] - 1, rem, self.lsize[d]))
        return out

    def group_sizes(self, glin: np.ndarray) -> np.ndarray:
        sizes = self.group_local_sizes(glin)
        total = np.ones_like(glin)
        for s in sizes:
            total = total * s
        return total

    def active_lanes(self, gfirst: int, G: int) -> np.ndarray:
        """(G, W) bool: the lanes that are work-items of a non-uniform NDRange."""
        glin = np.arange(gfirst, gfirst + G, dtype=np.int64)[:, None]
        llin = np.arange(self.W, dtype=np.int64)[None, :]
        ok = np.ones((G, self.W), dtype=bool)
        for d in range(self.dims):
            llin, lid = np.divmod(llin, self.lsize[d])
            glin, grp = np.divmod(glin, self.ngroups[d])
            ok &= grp * self.lsize[d] + lid < self.gsize[d]
        return ok

    # ------------------------------------------------------------------ findings

    def fail(
        self,
        kind: str,
        message: str,
        loc: Loc,
        wid: int | None = None,
        memory: str | None = None,
        index: int | None = None,
        other_loc: Loc | None = None,
        other_wid: int | None = None,
        count: int = 1,
    ) -> None:
        """Record a finding; raises ``SimulationError`` unless ``on_error="warn"``."""
        ids = self.ids_of(wid) if wid is not None and wid >= 0 else (None, None, None)
        other = self.ids_of(other_wid)[0] if other_wid is not None and other_wid >= 0 else None
        r = Report(
            kind, message, loc, ids[0], ids[1], ids[2], memory, index, other_loc, other, count
        )
        self.reports.append(r)
        if self.cfg.on_error == "raise" or kind == "unsupported":
            raise SimulationError([r])
        key = (kind, loc)
        if key not in self.warned:
            self.warned.add(key)
            warn_once(r, self.site)

    def fail_lanes(
        self,
        fr: Frame,
        bad: Any,
        kind: str,
        message: str,
        loc: Loc,
        memory: str | None = None,
        index: Any = None,
    ) -> None:
        """Report the first work-item (in work-item order) among the lanes where ``bad``."""
        bad = np.broadcast_to(np.asarray(bad, dtype=bool), fr.shape)
        wids = np.broadcast_to(frame_wids(fr), fr.shape)[bad]
        if wids.size == 0:
            return
        k = int(np.argmin(wids))
        idx = None
        if index is not None:
            idx = int(np.broadcast_to(np.asarray(index), fr.shape)[bad][k])
        self.fail(kind, message, loc, int(wids[k]), memory, idx, count=int(wids.size))


class Batch:
    """Work-groups ``gfirst .. gfirst + G - 1`` simulated together."""

    def __init__(self, launch: Launch, gfirst: int, G: int) -> None:
        self.launch = launch
        self.gfirst = gfirst
        self.G = G
        self.epoch = np.zeros(G, dtype=np.int64)
        # work-items per work-group (the last groups of non-uniform NDRanges are smaller)
        self.group_sizes: np.ndarray | None = (
            None if launch.uniform else launch.group_sizes(np.arange(gfirst, gfirst + G))
        )
        self.barriers = 0  # barriers executed in this batch (cache key for epoch values)
        self.locals: dict[Any, Any] = {}
        # index arrays known to be runs of consecutive ints: id -> (weak ref, first index).
        # Weak, so that the registry neither keeps arrays alive nor blocks in-place updates;
        # an in-place update of a registered array forgets it (``forget_run``).
        self.runs: dict[int, tuple[weakref.ref[np.ndarray], int, int]] = {}
        self.stores = 0  # memory stores so far (the no-progress checker's "memory changed")
        # while loops watched by the no-progress checker running now: stores then count only
        # when they change memory
        self.watching = 0
        self.print_seq = 0  # printf calls so far (program order of a work-item's output)
        # parallel launches: this batch's position and the turnstile that orders what must
        # happen in batch order (``ordered``); None when batches run one after another
        self.index = 0
        self.turn: Any = None
        self.stop: Any = None  # the same turnstile, kept: loops stop when the launch aborts
        self.watch = True  # the shadow-memory checkers watch this batch (config ``sample``)

    def ordered(self) -> None:
        """Called before an operation whose result depends on the order of work-groups across
        batches (an atomic on global memory): waits until every earlier batch of the launch
        has finished, so the launch gives what running the batches one by one gives."""
        turn = self.turn
        if turn is not None:
            turn.wait(self.index)
            self.turn = None  # every earlier batch is done: no more waiting

    def note_run(self, a: np.ndarray, first: int, step: int = 1) -> np.ndarray:
        """Remember that ``a`` holds first, first + step, ... in C order (``step`` 1: a
        C-contiguous run of consecutive ints, what ``run_of`` answers; any other step only
        ``ramp_of``, for ``sim/affine.py``)."""
        runs = self.runs
        if len(runs) > 256:
            for k in [k for k, (r, _, _) in runs.items() if r() is None]:
                del runs[k]
            if len(runs) > 256:
                runs.clear()
        runs[id(a)] = (weakref.ref(a), first, step)
        return a

    def run_of(self, a: Any) -> int | None:
        hit = self.runs.get(id(a))
        if hit is not None and hit[2] == 1 and hit[0]() is a:
            return hit[1]
        return None

    def ramp_of(self, a: Any) -> tuple[int, int] | None:
        """(first, step) of an array noted by ``note_run``."""
        hit = self.runs.get(id(a))
        if hit is not None and hit[0]() is a:
            return hit[1], hit[2]
        return None

    def forget_run(self, a: Any) -> None:
        """``a`` is about to change in place: it is no longer a known run."""
        self.runs.pop(id(a), None)


def frame_wids(fr: Frame) -> np.ndarray:
    """Internal linear work-item ids of a frame's lanes: group * W + local linear id."""
    w = fr.cache.get("wid")
    if w is None or np.shape(w)[-2:] != fr.shape:
        b = fr.batch
        w = (np.asarray(fr.gslot, dtype=np.int64) + b.gfirst) * b.launch.W + np.asarray(
            fr.llid, dtype=np.int64
        )
        w = np.broadcast_to(w, fr.shape)
        fr.cache["wid"] = w
    return w
