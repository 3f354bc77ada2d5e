"""The race checker's memo of repeated accesses (sim/races.py, ``MEMO``): a loop's accesses
to the same elements by the same lanes skip their checks while the shadow is unchanged. The
reports (kind, message, lines, work-items, element, count) and the results are the same with
the memo off, for races found on any trip, across work-groups, in local and global memory,
and for clean kernels."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, float32, int32
from clpy_sim import SimulationError, plan, races

BS = 16


@clpy.kernel
def rmw_then_neighbour(y: Global[float32], trips: int32):
    gid = clpy.get_global_id(0)
    for _i in range(trips):
        y[gid] += float32(1.0)  # the same run every trip: remembered
    for i in range(trips):
        y[gid] *= float32(2.0)
        if i == trips - 1:
            y[gid + 1] = float32(5.0)  # BUG: the neighbour's element, same interval


@clpy.kernel
def rmw_across_groups(y: Global[float32], trips: int32):
    lid = clpy.get_local_id(0)
    for _i in range(trips):
        y[lid] += float32(1.0)  # BUG: every group updates the same elements


@clpy.kernel
def rmw_clean(y: Global[float32], x: Global[float32], trips: int32):
    gid = clpy.get_global_id(0)
    for _i in range(trips):
        y[gid] += x[gid] * float32(0.5)
        y[gid] -= x[gid + 1]
    clpy.barrier(clpy.CLK_GLOBAL_MEM_FENCE)
    for _i in range(trips):
        y[gid] += x[gid]


@clpy.kernel
def local_loop_race(y: Global[float32], trips: int32):
    tx = clpy.get_local_id(0)
    tile = clpy.local_array(float32, BS + 1)
    tile[tx] = float32(1.0)
    tile[BS] = float32(0.0)
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    acc = float32(0.0)
    for i in range(trips):
        tile[tx] += float32(1.0)  # remembered after the first trip
        acc += tile[tx]
        if i == trips - 2:
            acc += tile[tx + 1]  # BUG: the neighbour writes it every trip
    y[clpy.get_global_id(0)] = acc


@clpy.kernel
def local_write_after_read(y: Global[float32], trips: int32):
    tx = clpy.get_local_id(0)
    tile = clpy.local_array(float32, BS + 1)
    tile[tx] = float32(1.0)
    tile[BS] = float32(0.0)
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    acc = float32(0.0)
    for i in range(trips):
        acc += tile[tx + 1]  # read: pending until a write needs it
        if i == trips - 1:
            tile[tx] = acc  # BUG: the left neighbour read this element in this interval
    y[clpy.get_global_id(0)] = acc


@clpy.kernel
def local_clean(y: Global[float32], trips: int32):
    tx = clpy.get_local_id(0)
    tile = clpy.local_array(float32, BS)
    tile[tx] = float32(tx)
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    for _i in range(trips):
        tile[tx] = tile[tx] * float32(0.5) + float32(1.0)
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
        y[clpy.get_global_id(0)] += tile[(tx + 1) % BS]
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)


@clpy.kernel
def local_uninit_loop(y: Global[float32], trips: int32):
    tx = clpy.get_local_id(0)
    tile = clpy.local_array(float32, 2 * BS)
    tile[tx] = float32(1.0)
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    acc = float32(0.0)
    for i in range(trips):
        acc += tile[tx]
        if i == 2:
            acc += tile[tx + BS]  # BUG: never written
    y[clpy.get_global_id(0)] = acc


@pytest.fixture
def fresh() -> Iterator[None]:
    plan._PLANS.clear()
    yield
    races.MEMO = True


def _run(k: Any, g: int, args: list[Any], threads: int) -> Any:
    arrays = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        with clpy.sim.config(checks=True, threads=threads, max_lanes=BS * 2):
            k[(g,), (BS,)](*arrays, device="sim")
    except SimulationError as e:
        return [
            (r.kind, r.message, r.loc, r.global_id, r.index, r.other_loc, r.other_global_id)
            + (r.count,)
            for r in e.reports
        ]
    return [a.tobytes() for a in arrays if isinstance(a, np.ndarray)]


def _both(k: Any, g: int, args: list[Any], threads: int = 1) -> Any:
    out = []
    for memo in (True, False):
        races.MEMO = memo
        out.append(_run(k, g, args, threads))
    races.MEMO = True
    assert out[0] == out[1]
    return out[0]


@pytest.mark.parametrize(
    "kernel,n,kind",
    [
        (rmw_then_neighbour, 2 * BS + 1, "data-race"),
        (rmw_across_groups, BS, "data-race"),
        (local_loop_race, 2 * BS, "data-race"),
        (local_write_after_read, 2 * BS, "data-race"),
        (local_uninit_loop, 2 * BS, "uninitialized-read"),
    ],
)
def test_reports_match_without_memo(fresh: None, kernel: Any, n: int, kind: str) -> None:
    got = _both(kernel, 2 * BS, [np.zeros(n, np.float32), 4])
    assert isinstance(got[0], tuple) and got[0][0] == kind


def test_cross_group_race_on_threads(fresh: None) -> None:
    # several batches (max_lanes): the parallel run's finding is rerun on one thread
    got = _both(rmw_across_groups, 4 * BS, [np.zeros(BS, np.float32), 3], threads=2)
    assert got[0][0] == "data-race"


def test_clean_kernels_match(fresh: None) -> None:
    x = np.arange(2 * BS + 1, dtype=np.float32)
    got = _both(rmw_clean, 2 * BS, [np.ones(2 * BS, np.float32), x, 5])
    y = np.frombuffer(got[0], np.float32)
    want = np.ones(2 * BS, np.float32)
    for _ in range(5):
        want = want + x[:-1] * np.float32(0.5)
        want = want - x[1:]
    for _ in range(5):
        want = want + x[:-1]
    np.testing.assert_array_equal(y, want)
    got = _both(local_clean, 2 * BS, [np.zeros(2 * BS, np.float32), 3])
    assert isinstance(got[0], bytes)
