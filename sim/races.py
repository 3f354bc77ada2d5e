"""Shadow memory for the data-race and uninitialised-read checkers.

For every address the shadow keeps the last writer and the last two distinct readers (internal
work-item id, the barrier epoch of its work-group at the time, and the source line). Two
accesses conflict when they come from different work-items that are *concurrent*: in
different work-groups (always, for global memory), or in the same work-group and the same
barrier interval (same epoch). A conflict with at least one write is a data race (spec §3.3.1:
unordered conflicting accesses). Atomic built-ins do not record accesses here.

Within one vectorized access, two lanes writing the same address are detected by reading the
shadow back after the scatter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.ir.nodes import Loc
from sim.state import Launch, frame_wids

if TYPE_CHECKING:
    from sim.frame import Frame


class Shadow:
    def __init__(self, launch: Launch, size: int, mem: Any, local: bool) -> None:
        self.launch = launch
        self.mem = mem
        self.local = local
        self.w_id = np.full(size, -1, dtype=np.int64)
        self.w_ep = np.zeros(size, dtype=np.int64)
        self.w_loc = np.zeros(size, dtype=np.int32)
        self.r1_id = np.full(size, -1, dtype=np.int64)
        self.r1_ep = np.zeros(size, dtype=np.int64)
        self.r1_loc = np.zeros(size, dtype=np.int32)
        self.r2_id = np.full(size, -1, dtype=np.int64)
        self.r2_ep = np.zeros(size, dtype=np.int64)
        self.r2_loc = np.zeros(size, dtype=np.int32)
        self.races = "races" in launch.checks

    def _lanes(self, fr: Frame, addr: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        wid = np.broadcast_to(frame_wids(fr), fr.shape).ravel()
        ep = np.broadcast_to(fr.batch.epoch[np.asarray(fr.gslot)], fr.shape).ravel()
        return np.broadcast_to(addr, fr.shape).ravel(), wid, ep

    def _concurrent(self, other: np.ndarray, other_ep: np.ndarray, wid: np.ndarray,
                    ep: np.ndarray) -> np.ndarray:
        W = self.launch.W
        same_group = (other // W) == (wid // W)
        return (other >= 0) & (other != wid) & (~same_group | (other_ep == ep))

    def read(self, fr: Frame, addr: np.ndarray, loc: Loc) -> None:
        if not self.races:
            return
        a, wid, ep = self._lanes(fr, addr)
        lid = self.launch.loc_id(loc)
        bad = self._concurrent(self.w_id[a], self.w_ep[a], wid, ep)
        if bad.any():
            self._report(fr, a, wid, bad, loc, "read", self.w_id, self.w_loc, "write")
        r2 = self.r2_id[a]
        shift = (r2 != wid) & (r2 >= 0)
        if shift.any():
            s = a[shift]
            self.r1_id[s] = r2[shift]
            self.r1_ep[s] = self.r2_ep[s]
            self.r1_loc[s] = self.r2_loc[s]
        self.r2_id[a] = wid
        self.r2_ep[a] = ep
        self.r2_loc[a] = lid
        back = self.r2_id[a]
        dup = back != wid
        if dup.any():  # several lanes read one address in this access
            self.r1_id[a[dup]] = wid[dup]
            self.r1_ep[a[dup]] = ep[dup]
            self.r1_loc[a[dup]] = lid

    def write(self, fr: Frame, addr: np.ndarray, loc: Loc) -> None:
        a, wid, ep = self._lanes(fr, addr)
        lid = self.launch.loc_id(loc)
        if self.races:
            bad = self._concurrent(self.w_id[a], self.w_ep[a], wid, ep)
            if bad.any():
                self._report(fr, a, wid, bad, loc, "write", self.w_id, self.w_loc, "write")
            for rid, rep, rloc in ((self.r1_id, self.r1_ep, self.r1_loc),
                                   (self.r2_id, self.r2_ep, self.r2_loc)):
                bad = self._concurrent(rid[a], rep[a], wid, ep)
                if bad.any():
                    self._report(fr, a, wid, bad, loc, "write", rid, rloc, "read")
        self.w_id[a] = wid
        self.w_ep[a] = ep
        self.w_loc[a] = lid
        if self.races:
            back = self.w_id[a]
            dup = back != wid
            if dup.any():
                self._report(fr, a, wid, dup, loc, "write", self.w_id, self.w_loc, "write")

    def check_init(self, fr: Frame, addr: np.ndarray, loc: Loc, mem: Any) -> None:
        a = np.broadcast_to(addr, fr.shape)
        bad = self.w_id[a] < 0
        if bad.any():
            idx = a - np.asarray(fr.gslot, dtype=np.int64) * mem.count
            self.launch.fail_lanes(fr, bad, "uninitialized-read",
                                   f"read of {mem.describe()} that no work-item of the group "
                                   "has written", loc, mem.name, idx)

    def _report(self, fr: Frame, a: np.ndarray, wid: np.ndarray, bad: np.ndarray, loc: Loc,
                mine: str, other_ids: np.ndarray, other_locs: np.ndarray, theirs: str) -> None:
        lanes = np.flatnonzero(bad)
        k = lanes[np.argmin(wid[lanes])]
        addr = int(a[k])
        other = int(other_ids[addr])
        other_loc = self.launch.locs[int(other_locs[addr])]
        mem = self.mem
        index = addr - (addr // mem.count) * mem.count if self.local else addr
        where = "between the same barriers" if self.local or (
            other // self.launch.W == int(wid[k]) // self.launch.W) else \
            "in different work-groups"
        self.launch.fail(
            "data-race", f"{mine}/{theirs} data race on {mem.describe()}: this {mine} and "
            f"another work-item's {theirs} of the same element are unordered ({where})",
            loc, int(wid[k]), mem.name, index, other_loc, other, count=int(lanes.size))
