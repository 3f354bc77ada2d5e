"""The race checker's cheaper paths (sim/races.py ``FAST``: runs of global memory on flat
slices, records known to be the lanes' own, a read-modify-write's write after its read, local
memory's "no record" pass) end as the general tests would: every report (kind, message,
lines, work-items, element, count), with ``on_error`` raise and warn, and the results are the
same with them and the memo off, on kernels built to reach each path: clean and racy runs,
stale records of earlier barrier intervals, flat indices with and without duplicates, shared
reads across work-groups, local memory."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, float32, int32
from clpy_sim import SimulationError, plan, races
from clpy_sim.state import Launch

BS = 16
GROUPS = 4
N = BS * GROUPS


@clpy.kernel
def rmw_run_loop(y: Global[float32], trips: int32):
    gid = clpy.get_global_id(0)
    for i in range(trips):
        y[gid] += float32(1.0)  # a read-modify-write of the lane's own run, every trip
        if i == trips - 1:
            y[gid] += y[gid + 1]  # BUG: the neighbour writes it in this interval


@clpy.kernel
def rmw_after_barrier(y: Global[float32], trips: int32):
    gid = clpy.get_global_id(0)
    y[gid] = float32(1.0)
    clpy.barrier(clpy.CLK_GLOBAL_MEM_FENCE)
    for _i in range(trips):
        y[gid] += float32(2.0)  # own records of an earlier interval: no race
    clpy.barrier(clpy.CLK_GLOBAL_MEM_FENCE)
    y[gid] += y[gid + 1]  # BUG only across groups (the next group's first work-item)


@clpy.kernel
def stale_read_then_write(y: Global[float32], x: Global[float32]):
    gid = clpy.get_global_id(0)
    lid = clpy.get_local_id(0)
    x[gid] = y[gid] + y[gid + 1]
    clpy.barrier(clpy.CLK_GLOBAL_MEM_FENCE)
    y[gid] = x[gid]  # own element, read in an earlier interval
    if lid == BS - 1:
        y[gid + 1] = float32(0.0)  # BUG: the next group read it (same group: ordered)


@clpy.kernel
def flat_permutation(y: Global[int32], stage: int32):
    t = clpy.get_global_id(0)
    d = 1 << stage
    left = (t % d) + (t // d) * 2 * d
    right = left + d
    a = y[left]
    b = y[right]
    if a > b:
        y[left] = b
        y[right] = a
    else:
        y[left] = a
        y[right] = b
    y[right] = y[right] + 1  # own, this interval's record
    clpy.barrier(clpy.CLK_GLOBAL_MEM_FENCE)
    y[left] += 1  # own again, an earlier interval's record
    if t % 2 == 0:
        a = y[right]
    y[right] = a  # read before in this interval by some lanes, in the earlier by all


@clpy.kernel
def flat_duplicate_write(y: Global[int32]):
    gid = clpy.get_global_id(0)
    y[(gid * 7) % N // 2] = gid  # BUG: two work-items per element


@clpy.kernel
def flat_duplicate_read_then_write(y: Global[int32]):
    gid = clpy.get_global_id(0)
    lid = clpy.get_local_id(0)
    v = y[(gid * 5) % N // 4]  # four readers per element, in different groups
    if lid % 4 == 0:
        y[(gid * 5) % N // 4 + 1] = v  # BUG: others read it


@clpy.kernel
def shared_read_then_write(y: Global[int32]):
    gid = clpy.get_global_id(0)
    v = y[0] + y[N - 1]  # every work-item reads both
    clpy.barrier(clpy.CLK_GLOBAL_MEM_FENCE)
    if gid == 1:
        y[0] = v  # BUG: the other groups' reads are unordered
    if gid == N - 1:
        y[N - 1] = v  # BUG too


@clpy.kernel
def neighbour_read_then_rmw(y: Global[float32]):
    gid = clpy.get_global_id(0)
    v = y[gid + 1]
    y[gid] += v  # BUG: the left neighbour read this element


@clpy.kernel
def neighbour_write(y: Global[float32]):
    gid = clpy.get_global_id(0)
    y[gid] = float32(1.0)
    y[gid + 1] = float32(2.0)  # BUG: the right neighbour wrote it


@clpy.kernel
def local_races(y: Global[float32]):
    tx = clpy.get_local_id(0)
    tile = clpy.local_array(float32, BS)
    tile[tx] = float32(tx)
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    v = tile[0] + tile[tx // 2]  # one element per group; two readers per element
    v += tile[(tx + 1) % BS]
    tile[tx] = v  # BUG: the left neighbour read it
    tile[(tx + 1) % BS] = v  # BUG: and the right neighbour wrote it
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    tile[tx // 2] = v  # BUG: two work-items per element
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    y[clpy.get_global_id(0)] = tile[tx]


@clpy.kernel
def local_tile(y: Global[float32], trips: int32):
    tx = clpy.get_local_id(0)
    tile = clpy.local_array(float32, 2 * BS + 2)
    tile[tx] = float32(tx)
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    acc = float32(0.0)
    for i in range(trips):
        acc += tile[(tx + i) % BS]  # others' elements, several readers each
        acc += tile[tx]
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    tile[tx] += acc  # own: read by others in an earlier interval
    acc += tile[(tx + 1) % BS]  # BUG: the neighbour writes it in this interval
    tile[tx + BS] = acc
    y[clpy.get_global_id(0)] = tile[tx + BS] + tile[2 * BS + tx % 2]  # BUG: and uninit


CASES: list[tuple[Any, list[Any]]] = [
    (rmw_run_loop, [np.zeros(N + 1, np.float32), 4]),
    (rmw_after_barrier, [np.zeros(N + 1, np.float32), 3]),
    (stale_read_then_write, [np.arange(N + 1, dtype=np.float32), np.zeros(N, np.float32)]),
    (flat_permutation, [np.arange(2 * N, 0, -1).astype(np.int32), 2]),
    (flat_permutation, [np.arange(2 * N, 0, -1).astype(np.int32), 4]),
    (flat_duplicate_write, [np.zeros(N, np.int32)]),
    (flat_duplicate_read_then_write, [np.zeros(N + 2, np.int32)]),
    (shared_read_then_write, [np.ones(N, np.int32)]),
    (neighbour_read_then_rmw, [np.zeros(N + 1, np.float32)]),
    (neighbour_write, [np.zeros(N + 1, np.float32)]),
    (local_races, [np.zeros(N, np.float32)]),
    (local_tile, [np.zeros(N, np.float32), 5]),
]
IDS = [f"{k.__name__}-{i}" for i, (k, _) in enumerate(CASES)]


@pytest.fixture
def fresh() -> Iterator[None]:
    plan._PLANS.clear()
    yield
    races.MEMO = True
    races.FAST = True


def _run(k: Any, args: list[Any], on_error: str, monkeypatch: Any) -> Any:
    """Every report (in warn mode each finding, not only the first per line) and the
    arrays after the run."""
    arrays = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    seen: list[Any] = []
    real = Launch.fail

    def fail(self: Launch, kind: str, message: str, loc: Any, *a: Any, **kw: Any) -> None:
        seen.append((kind, message, str(loc), a, tuple(sorted(kw.items()))))
        real(self, kind, message, loc, *a, **kw)

    monkeypatch.setattr(Launch, "fail", fail)
    out: list[Any] = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with clpy.sim.config(checks=True, threads=1, on_error=on_error):
                k[(N,), (BS,)](*arrays, device="sim")
    except SimulationError as e:
        out = [
            (r.kind, r.message, r.loc, r.global_id, r.index, r.other_loc, r.other_global_id)
            + (r.count,)
            for r in e.reports
        ]
    monkeypatch.setattr(Launch, "fail", real)
    return seen, out, [a.tobytes() for a in arrays if isinstance(a, np.ndarray)]


@pytest.mark.parametrize("on_error", ["raise", "warn"])
@pytest.mark.parametrize("case", range(len(CASES)), ids=IDS)
def test_fast_paths_report_as_the_general_ones(
    fresh: None, monkeypatch: Any, case: int, on_error: str
) -> None:
    k, args = CASES[case]
    got = []
    for fast in (True, False):
        races.MEMO = races.FAST = fast
        got.append(_run(k, args, on_error, monkeypatch))
    assert got[0] == got[1]
    assert bool(got[0][0]) == (k is not flat_permutation)  # (the others have a bug)


def test_each_case_reaches_its_finding(fresh: None, monkeypatch: Any) -> None:
    kinds = {}
    for k, args in CASES:
        seen, _, _ = _run(k, args, "warn", monkeypatch)
        kinds.setdefault(k.__name__, set()).update((s[0], s[1].split(":")[0]) for s in seen)
    race = ("data-race", "write/read data race on global memory `y`")
    assert race in kinds["rmw_after_barrier"]
    assert race in kinds["stale_read_then_write"]
    assert race in kinds["neighbour_read_then_rmw"]
    assert race in kinds["shared_read_then_write"]
    assert race in kinds["flat_duplicate_read_then_write"]
    assert ("data-race", "write/write data race on global memory `y`") in kinds[
        "flat_duplicate_write"
    ]
    assert ("data-race", "read/write data race on global memory `y`") in kinds["rmw_run_loop"]
    assert not kinds["flat_permutation"]
    uninit = "read of local memory `tile` that no work-item of the group has written"
    assert ("uninitialized-read", uninit) in kinds["local_tile"]
    assert ("data-race", "read/write data race on local memory `tile`") in kinds["local_tile"]
    assert ("data-race", "write/write data race on global memory `y`") in kinds["neighbour_write"]
    for what in ("write/read", "write/write"):
        assert ("data-race", f"{what} data race on local memory `tile`") in kinds["local_races"]


@clpy.kernel
def shared_read_one_access(x: Global[int32], y: Global[int32]):
    gid = clpy.get_global_id(0)
    y[gid] = x[0]  # every work-item of every group reads x[0], in one access
    clpy.barrier(clpy.CLK_GLOBAL_MEM_FENCE)
    if gid == BS:
        x[0] = 5  # BUG: group 1 writes; group 0's reads are unordered with it


@pytest.mark.parametrize("max_lanes", [None, BS])
def test_one_access_reading_across_groups_records_several_groups(
    fresh: None, max_lanes: Any
) -> None:
    # One access whose lanes of several groups read one element records "several groups"
    # (it recorded the last lane's group, so a later write of that group, after a barrier,
    # was not reported when the groups ran in one batch; in batches of one group it was)
    kw = {} if max_lanes is None else {"max_lanes": max_lanes}
    with pytest.raises(SimulationError) as e, clpy.sim.config(checks=True, threads=1, **kw):
        shared_read_one_access[(2 * BS,), (BS,)](
            np.zeros(1, np.int32), np.zeros(2 * BS, np.int32), device="sim"
        )
    r = e.value.reports[0]
    assert r.kind == "data-race" and r.message.startswith("write/read data race")
    assert r.global_id == (BS,) and r.index == 0
    if max_lanes is None:  # (in batches, the log names a reader of the writer's group)
        assert r.other_global_id is not None and r.other_global_id[0] < BS
        assert "in different work-groups" in r.message
