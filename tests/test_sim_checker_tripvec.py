"""Trip vectorization with the race and uninitialised-memory checkers on (sim/tripshadow.py):
the same bytes and the same reports (every field, the other access's line and work-item
included) as the trip-by-trip loop, on kernels built for each case: loops with no finding
(global and local memory, reductions into variables, memory elements and private rows, maps),
a race found inside a vectorized loop (write/write, read/write, local memory), an
uninitialised read inside one, cross-group races, and races found after a loop whose other
access is one of the loop's (named from the checker's log of the last trips: a trip in it,
one older, an element several work-items read), with one batch, batches of one group and two
threads."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, float32, int32
from clpy_sim import SimulationError, plan, races, tripvec
from tests.test_sim_speed_tripvec import _same as same_with_and_without
from tests.test_sim_speed_tripvec import (
    fresh_plans,
    memory_loops,
    private_tile,
    reductions,
    vector_acc,
)
from tests.test_sim_stmtgen import tile_update

# the NumPy engine's own machinery (checks off would otherwise run natively)
pytestmark = pytest.mark.usefixtures("numpy_engine")

__all__ = ["fresh_plans"]  # (a fixture of these tests)

BS = 16


@clpy.kernel
def gram_schmidt_step(
    a: Global[float32], r: Global[float32], q: Global[float32], k: int32, m: int32, n: int32
):
    """Gram-Schmidt's kernel3: a reduction into a memory element, then a map that reads it."""
    j = clpy.get_global_id(0)
    if k < j < n:
        r[k * n + j] = 0.0
        for i in range(m):
            r[k * n + j] += q[i * n + k] * a[i * n + j]
        for i in range(m):
            a[i * n + j] -= q[i * n + k] * r[k * n + j]


@clpy.kernel
def map_over_others(a: Global[float32], m: int32, n: int32, bad: int32):
    """A map whose elements another work-item wrote before the loop (when ``bad``)."""
    j = clpy.get_global_id(0)
    a[(j + bad) % n] = float32(1.0)
    for i in range(m):
        a[i * n + j] = float32(i) + a[(m + 1) * n + j]


@clpy.kernel
def read_others(x: Global[float32], y: Global[float32], m: int32, n: int32, shift: int32):
    """A reduction reading elements another work-item wrote before the loop (``shift`` > 0)."""
    j = clpy.get_global_id(0)
    x[j] = float32(2.0)
    s = float32(0.0)
    for i in range(m):
        s += x[i * n + j + shift]
    y[j] = s


@clpy.kernel
def write_after_loop(x: Global[float32], y: Global[float32], m: int32, n: int32, at: int32):
    """Reads in a loop, then one work-item writes an element the loop read: the report names
    the loop's line when the read was one of the last trips' (the checker's log)."""
    j = clpy.get_global_id(0)
    s = float32(0.0)
    for i in range(m):
        s += x[i * n + j] * x[i * n]
    y[j] = s
    if j == 3:
        x[at] = float32(0.0)


@clpy.kernel
def local_tile_race(out: Global[float32], m: int32, shift: int32):
    """A local tile written in a loop; with ``shift`` a lane writes another's elements."""
    lid = clpy.get_local_id(0)
    t = clpy.local_array(float32, 256)
    t[lid] = float32(lid)
    for i in range(m):
        t[i * BS + ((lid + shift) % BS)] = float32(i) * float32(0.5)
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    out[clpy.get_global_id(0)] = t[lid * 3]


@clpy.kernel
def local_uninit(out: Global[float32], m: int32, filled: int32):
    """Reads of a local tile in a loop; only its first ``filled`` rows were written."""
    lid = clpy.get_local_id(0)
    t = clpy.local_array(float32, 256)
    for i in range(filled):
        t[i * BS + lid] = float32(i + lid)
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    s = float32(0.0)
    for i in range(m):
        s += t[i * BS + lid] * float32(0.5)
    out[clpy.get_global_id(0)] = s


@clpy.kernel
def cross_group(x: Global[float32], y: Global[float32], m: int32, victim: int32):
    """Every group reads the same elements in a loop; one work-item of the last group writes
    one of them, before the loop (``victim`` < 0: after it, element ``-victim - 1``)."""
    gid = clpy.get_global_id(0)
    lid = clpy.get_local_id(0)
    if gid == clpy.get_global_size(0) - 1 and victim >= 0:
        x[victim] = float32(3.0)
    s = float32(0.0)
    for i in range(m):
        s += x[i * BS + lid]
    y[gid] = s
    if gid == clpy.get_global_size(0) - 1 and victim < 0:
        x[-victim - 1] = float32(3.0)


def _outcome(run: Callable[[], Any]) -> Any:
    """``run()``'s result, or every field of every report (fresh plans)."""
    plan._PLANS.clear()
    try:
        return ("ok", run())
    except SimulationError as e:
        return ("error", [dataclasses.astuple(r) for r in e.reports])


def _launch(k: Any, g: Any, loc: Any, *args: Any, **cfg: Any) -> Any:
    arrays = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with clpy.sim.config(checks=True, threads=cfg.pop("threads", 1), **cfg):
        k[g, loc](*arrays, device="sim")
    return [a.tobytes() for a in arrays if isinstance(a, np.ndarray)]


def _same(run: Callable[[], Any]) -> Any:
    """``run()`` with trip vectorization and without: the same result or reports."""
    return same_with_and_without(run, _outcome)


def test_no_finding(fresh_plans: list[bool]) -> None:
    rng = np.random.default_rng(1)
    x = rng.random(32 * 12).astype(np.float32)
    y = rng.random(64).astype(np.float32)
    out = np.zeros(32, np.int32)
    assert _same(lambda: _launch(reductions, (32,), (8,), x, y, out, 11))[0] == "ok"
    n, m = 24, 9
    a = rng.random(m * n).astype(np.float32)
    r = np.zeros(n, np.float32)
    # (its last loop's lanes all add into r[0]: a race, found trip by trip)
    assert _same(lambda: _launch(memory_loops, (n,), (8,), a, r, m, n))[0] == "error"
    pos = rng.random((64, 4)).astype(np.float32)
    assert _same(lambda: _launch(vector_acc, (64,), (32,), pos, np.zeros_like(pos)))[0] == "ok"
    b = rng.random(64).astype(np.float32)
    a8 = rng.random(8 * 64).astype(np.float32)
    got = _same(lambda: _launch(private_tile, (64,), (64,), a8, b, np.zeros(8 * 64, np.float32)))
    assert got[0] == "ok"
    dim = 2 * BS
    t = (rng.random(BS * dim) + np.eye(BS, dim).ravel() * 4).astype(np.float32)
    assert _same(lambda: _launch(tile_update, (BS,), (BS,), t, dim))[0] == "ok"
    assert sum(fresh_plans) >= 5


@pytest.mark.parametrize("max_lanes", [1 << 17, 32])
def test_gram_schmidt(fresh_plans: list[bool], max_lanes: int) -> None:
    m, n = 20, 40
    a = (np.random.default_rng(2).random((m, n)) + np.eye(m, n) * 2).astype(np.float32).ravel()
    q = (a / 3).astype(np.float32)
    r = np.zeros(n * n, np.float32)

    def run() -> Any:
        aa, rr = a.copy(), r.copy()
        for k in range(4):
            aa, rr, _ = (
                np.frombuffer(b, np.float32).copy()
                for b in _launch(
                    gram_schmidt_step, (64,), (32,), aa, rr, q, k, m, n, max_lanes=max_lanes
                )
            )
        return aa.tobytes(), rr.tobytes()

    assert _same(run)[0] == "ok"
    assert sum(fresh_plans) >= 8


@pytest.mark.parametrize("bad", [0, 1])
def test_race_in_map(fresh_plans: list[bool], bad: int) -> None:
    n, m = 16, 10
    a = np.zeros((m + 2) * n, np.float32)
    kind, got = _same(lambda: _launch(map_over_others, (n,), (n,), a, m, n, bad))
    assert kind == ("error" if bad else "ok")
    if bad:
        assert got[0][0] == "data-race" and "write/write" in got[0][1]


@pytest.mark.parametrize("shift", [0, 1, 3])
def test_race_in_reduction(fresh_plans: list[bool], shift: int) -> None:
    n, m = 16, 12
    x = np.ones(m * n + 8, np.float32)
    kind, got = _same(
        lambda: _launch(read_others, (n,), (8,), x, np.zeros(n, np.float32), m, n, shift)
    )
    assert kind == ("error" if shift else "ok")
    if shift:
        assert got[0][0] == "data-race" and "read/write" in got[0][1]


@pytest.mark.parametrize("m", [6, 12, 40])
@pytest.mark.parametrize(
    "at", [0, 5, 3 * 16 + 5, 23 * 16 + 4, 24 * 16 + 4, 30 * 16 + 7, 39 * 16 + 2]
)
def test_race_after_loop_names_the_loop(fresh_plans: list[bool], m: int, at: int) -> None:
    n = 16
    x = np.random.default_rng(3).random(40 * n).astype(np.float32)
    kind, got = _same(
        lambda: _launch(write_after_loop, (n,), (n,), x, np.zeros(n, np.float32), m, n, at)
    )
    read = at < m * n
    assert kind == ("error" if read and at != 3 else "ok")
    if kind == "error":
        assert got[0][0] == "data-race"


@pytest.mark.parametrize("shift", [0, 1])
def test_local_race(fresh_plans: list[bool], shift: int) -> None:
    kind, got = _same(
        lambda: _launch(local_tile_race, (64,), (BS,), np.zeros(64, np.float32), 12, shift)
    )
    assert kind == ("error" if shift else "ok")


@pytest.mark.parametrize("filled", [16, 9])
def test_uninitialised_read(fresh_plans: list[bool], filled: int) -> None:
    kind, got = _same(
        lambda: _launch(local_uninit, (64,), (BS,), np.zeros(64, np.float32), 16, filled)
    )
    assert kind == ("error" if filled < 16 else "ok")
    if filled < 16:
        assert got[0][0] == "uninitialized-read"


@pytest.mark.parametrize("max_lanes", [1 << 17, BS])
@pytest.mark.parametrize("victim", [-1, -200, 37, 5 * BS + 2])
def test_cross_group(fresh_plans: list[bool], max_lanes: int, victim: int) -> None:
    m = 12
    x = np.random.default_rng(4).random(m * BS + 8).astype(np.float32)
    y = np.zeros(4 * BS, np.float32)
    kind, got = _same(
        lambda: _launch(cross_group, (4 * BS,), (BS,), x, y, m, victim, max_lanes=max_lanes)
    )
    assert kind == ("error" if victim != -200 else "ok")
    if kind == "error":
        assert got[0][0] == "data-race"


@pytest.mark.parametrize("victim", [-1, 37])
def test_threads(fresh_plans: list[bool], victim: int) -> None:
    """Batches on two threads (a race found on threads reruns the launch on one)."""
    m = 12
    x = np.random.default_rng(5).random(m * BS + 8).astype(np.float32)
    y = np.zeros(8 * BS, np.float32)
    one = _outcome(lambda: _launch(cross_group, (8 * BS,), (BS,), x, y, m, victim, max_lanes=BS))
    tripvec.ENABLED = False
    base = _outcome(lambda: _launch(cross_group, (8 * BS,), (BS,), x, y, m, victim, max_lanes=BS))
    tripvec.ENABLED = True
    two = _outcome(
        lambda: _launch(cross_group, (8 * BS,), (BS,), x, y, m, victim, max_lanes=BS, threads=2)
    )
    assert one == base == two


def test_general_paths(fresh_plans: list[bool], monkeypatch: pytest.MonkeyPatch) -> None:
    """The same with the race checker's cheaper paths and memo off."""
    monkeypatch.setattr(races, "FAST", False)
    monkeypatch.setattr(races, "MEMO", False)
    n = 16
    x = np.random.default_rng(6).random(40 * n).astype(np.float32)
    for at in (5, 30 * n + 7):
        _same(
            lambda at=at: _launch(
                write_after_loop, (n,), (n,), x, np.zeros(n, np.float32), 40, n, at
            )
        )
    assert any(fresh_plans)


@pytest.mark.parametrize("at", [5, 23 * 16 + 4, 24 * 16 + 4, 30 * 16 + 7, 39 * 16 + 2])
def test_chunks(fresh_plans: list[bool], monkeypatch: pytest.MonkeyPatch, at: int) -> None:
    """A reduction evaluated 7 trips at a time: the log's last trips span several chunks."""
    monkeypatch.setattr(tripvec, "CHUNK_ELEMENTS", 16 * 7)
    n = 16
    x = np.random.default_rng(7).random(40 * n).astype(np.float32)
    kind, _ = _same(
        lambda: _launch(write_after_loop, (n,), (n,), x, np.zeros(n, np.float32), 40, n, at)
    )
    assert kind == "error" and any(fresh_plans)


@clpy.kernel
def stale_log(out: Global[float32], first: int32):
    """Work-item 1 reads t[5] before a barrier (line A) and after it (line B, then 20 more
    reads on line B push that one out of the log); work-item 3 then writes t[5]. The report
    must not name line A, whose read is ordered before the write (an ended interval)."""
    lid = clpy.get_local_id(0)
    t = clpy.local_array(float32, 64)
    t[lid] = float32(lid)
    t[lid + 32] = float32(lid)
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    s = float32(0.0)
    if lid == 1:
        s += t[5]  # line A
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    if lid == 1:
        for i in range(21):
            s += t[(i * 9 + first) % 64]  # line B: trip 0 reads t[5] when first == 5
    if lid == 3:
        t[5] = s
    out[lid] = s


@pytest.mark.parametrize("first", [5, 6])
def test_log_of_an_ended_interval(fresh_plans: list[bool], first: int) -> None:
    kind, got = _same(lambda: _launch(stale_log, (32,), (32,), np.zeros(32, np.float32), first))
    assert kind == "error"
    (report,) = got
    assert report[0] == "data-race"
    # first == 6: trip 7 reads t[5], one of the last 16 (line B is named)
    assert ("line is not known" in report[1]) == (first == 5)


@clpy.kernel
def loop_twice(x: Global[float32], y: Global[float32], n: int32, at: int32):
    """One line read 20 trips at once, then 3 trips one by one (fewer than trip vectorization
    takes), then a write of an element read in the first run: the log holds the last 16."""
    j = clpy.get_global_id(0)
    s = float32(0.0)
    for r in range(2):
        for i in range(r * 30, r * 13 + 20):
            s += x[i * n + j]
    y[j] = s
    if j == 3:
        x[at] = float32(0.0)


@pytest.mark.parametrize("trip", [5, 6, 7, 8])
def test_log_keeps_the_last_accesses(fresh_plans: list[bool], trip: int) -> None:
    n = 16
    x = np.random.default_rng(8).random(40 * n).astype(np.float32)
    at = trip * n + 1
    kind, got = _same(lambda: _launch(loop_twice, (n,), (n,), x, np.zeros(n, np.float32), n, at))
    assert kind == "error" and any(fresh_plans) and not all(fresh_plans)
    assert ("line is not known" in got[0][1]) == (trip < 7)


@pytest.mark.parametrize("victim", [-1, 37, -200])
def test_sampled_batches(fresh_plans: list[bool], victim: int) -> None:
    """Shadows watching every other batch (config ``sample``): unwatched batches run their
    loops at once with no shadow, watched ones as above."""
    m = 12
    x = np.random.default_rng(9).random(m * BS + 8).astype(np.float32)
    y = np.zeros(4 * BS, np.float32)
    _same(lambda: _launch(cross_group, (4 * BS,), (BS,), x, y, m, victim, max_lanes=BS, sample=2))
    assert any(fresh_plans)
