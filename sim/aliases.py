"""Global buffers that overlap in memory share one race shadow.

The race checker keeps its shadow (``sim.races_global.GlobalShadow``) per buffer, but a data race
is about memory, not parameters (spec §3.3: conflicting unordered accesses to the same
location): ``y[i] = x[i] + x[i + 1]`` with ``x`` and ``y`` two overlapping views of one
array races between work-items even though no parameter alone does. So, once per launch,
the kernel's global buffers whose elements overlap get shadows that are views of one pair
of arrays keyed by element position in their common memory (base address + byte offset),
one lock and a log searched across all of them; buffers that overlap nothing keep their
own shadow (or none, when the kernel does not write them), so the common case costs one
``np.may_share_memory`` per pair of buffers.

Only buffers whose elements line up (same element size, offsets a multiple of it, one
flat contiguous row of elements each) are linked; others are checked per buffer, as before.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from clpy_sim.races_global import GlobalShadow
from clpy_sim.state import Launch


def _start(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def _groups(mems: list[Any]) -> list[list[Any]]:
    """Connected groups (two or more) of memories whose data may overlap."""
    parent = list(range(len(mems)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(mems)):
        for j in range(i):
            if np.may_share_memory(mems[i].data, mems[j].data):
                parent[root(i)] = root(j)
    out: dict[int, list[Any]] = {}
    for i, m in enumerate(mems):
        out.setdefault(root(i), []).append(m)
    return [g for g in out.values() if len(g) > 1]


def _lined_up(group: list[Any]) -> tuple[int, int] | None:
    """(lowest start address, element size) when every member's elements are whole, equally
    sized and at offsets that are multiples of that size from one another; else None."""
    size = group[0].data.strides[0] if group[0].data.ndim else 0
    if size <= 0:
        return None
    for m in group:
        d = m.data
        if not d.flags.c_contiguous or d.strides[0] != size or d.itemsize * _trail(d) != size:
            return None
    lo = min(_start(m.data) for m in group)
    if any((_start(m.data) - lo) % size for m in group):
        return None
    return lo, size


def _trail(d: np.ndarray) -> int:
    n = 1
    for s in d.shape[1:]:
        n *= s
    return n


def share_shadows(launch: Launch, mems: list[Any]) -> None:
    """Give overlapping global buffers (``mems``: the kernel's, in parameter order) one
    shadow keyed by memory position; at least one of a group must be written."""
    if "races" not in launch.checks or len(mems) < 2:
        return
    for group in _groups([m for m in mems if m.count]):
        if not any(m.shadow is not None for m in group):
            continue  # only read: no race
        lined = _lined_up(group)
        if lined is None:
            continue
        lo, size = lined
        offs = [(_start(m.data) - lo) // size for m in group]
        n = max(o + m.count for o, m in zip(offs, group))
        w = np.zeros(n, np.int64)
        r = np.zeros(n, np.int64)
        lock = threading.Lock()
        peers: list[GlobalShadow] = []
        for o, m in zip(offs, group):
            sh = m.shadow
            if sh is None:  # read-only here, written through another parameter
                sh = m.shadow = GlobalShadow(launch, m.count, m)
            sh.w = w[o : o + m.count]
            sh.r = r[o : o + m.count]
            sh.lock = lock
            sh.off = o
            sh.any_read = True  # a read through a peer fills the shared reader array
            sh.peers = peers
            peers.append(sh)


__all__ = ["share_shadows"]
