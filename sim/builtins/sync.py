"""Synchronization (spec §1.13.8). All work-items of a frame run in lockstep, so a barrier
only has to (1) check that every work-item of each group present reached it, and (2) start a
new barrier interval for those groups (the race checker's epoch). Either fence flag orders
both local and global accesses of the group (no false alarms for ``barrier(LOCAL)`` kernels
that also share global data within a group). Fences are no-ops in lockstep execution."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from clpy_sim.frame import Frame

if TYPE_CHECKING:
    from clpy_sim.call import Call


def barrier(call: Call, fr: Frame, args: list[Any]) -> None:
    batch = fr.batch
    launch = batch.launch
    gs = np.asarray(fr.gslot)
    if not fr.complete:
        counts = np.bincount(np.broadcast_to(gs, fr.shape).ravel(), minlength=batch.G)
        full = batch.group_sizes if batch.group_sizes is not None else launch.W
        partial = (counts > 0) & (counts < full)
        if np.count_nonzero(partial):
            if "barriers" in call.checks:
                bad = partial[np.broadcast_to(gs, fr.shape)]
                g = int(np.flatnonzero(partial)[0])
                launch.fail_lanes(
                    fr,
                    bad,
                    "barrier-divergence",
                    f"barrier reached by {int(counts[g])} of the "
                    f"{int(np.broadcast_to(full, counts.shape)[g])} "
                    "work-items of a work-group (the others took another path "
                    "or returned): all must reach the same barrier",
                    call.loc,
                )
        groups: Any = np.flatnonzero(counts)
    else:
        groups = (
            slice(None)
            if gs.ndim and gs.shape[0] == batch.G
            else (gs.ravel() if gs.ndim else np.arange(batch.G))
        )
    batch.epoch[groups] += 1
    batch.barriers += 1
    for mem in batch.locals.values():
        if mem.shadow is not None:
            mem.shadow.reset(groups)


def _fence(call: Call, fr: Frame, args: list[Any]) -> None:
    return None


IMPLS = {
    "barrier": barrier,
    "work_group_barrier": barrier,
    "mem_fence": _fence,
    "read_mem_fence": _fence,
    "write_mem_fence": _fence,
}
