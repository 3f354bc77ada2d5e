"""Trip vectorization (sim/tripvec.py: a loop's independent trips evaluated at once) gives the
same bytes and the same checker reports as the trip-by-trip loop: reductions into variables
and memory elements (float roundings in trip order, integer wrap-around), maps over memory,
loop-carried dependences and duplicate writes (which must fall back), declared variables and
the counter after the loop, descending and empty loops, and findings of the bounds and
division checkers inside the loop."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, float4, float32, int32
from clpy_sim import plan, tripvec
from tests.test_sim_stmtgen import _outcome, tile_update

# the NumPy engine's own machinery (checks off would otherwise run natively)
pytestmark = pytest.mark.usefixtures("numpy_engine")

BS = 16


@clpy.kernel
def reductions(x: Global[float32], y: Global[float32], out: Global[int32], m: int32):
    """Float and int accumulators, a declared temporary, the counter used after the loop."""
    gid = clpy.get_global_id(0)
    s = float32(0.5)
    t = float32(0.0)
    k = 7
    i = 0
    j = 0
    for i in range(m):
        t = x[i * 32 + gid] * x[(i + 1) * 32 - 1 - gid]
        s += t * float32(1.0e-3) + y[i]
    for j in range(m, 0, -2):
        k *= j + 2147480000  # wraps around
    y[m + gid] = s + t
    out[gid] = k + i + j


@clpy.kernel
def memory_loops(a: Global[float32], r: Global[float32], m: int32, n: int32):
    """A reduction into a memory element, a map, and maps that must fall back."""
    j = clpy.get_global_id(0)
    if j > 0:
        r[j] = 0.0
        for i in range(m):
            r[j] += a[i * n + j] * a[i * n]
        for i in range(m):
            a[i * n + j] -= r[j] * float32(0.25)
        for i in range(1, m):
            a[i * n] += a[(i - 1) * n]  # loop-carried: trip i reads trip i - 1's write
        for i in range(m):
            r[0] += a[i * n + j]  # every lane writes one element


@clpy.kernel
def vector_acc(pos: Global[float4], out: Global[float4]):
    """N-body's inner loop: float4 temporaries, a float4 accumulator over a local tile."""
    tid = clpy.get_local_id(0)
    tile = clpy.local_array(float4, 32)
    me = pos[clpy.get_global_id(0)]
    tile[tid] = me
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    acc = float4(0.0)
    for j in range(32):
        p = tile[j]
        r = p - me
        d = r.x * r.x + r.y * r.y + r.z * r.z + float32(0.5)
        acc += (p.w / clpy.sqrt(d)) * r
    out[clpy.get_global_id(0)] = acc


@clpy.kernel
def private_tile(a: Global[float32], b: Global[float32], out: Global[float32]):
    """SGEMM's register tile: a private accumulator row per trip, from a local slab."""
    gid = clpy.get_global_id(0)
    lx = clpy.get_local_id(0)
    c = clpy.private_array(float32, 8)
    for i in range(8):
        c[i] = 0.0
    slab = clpy.local_array(float32, 64)
    slab[lx] = b[lx]
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    for j in range(8):
        av = a[gid * 8 + j]
        for kk in range(8):
            c[kk] += av * slab[j * 8 + kk]
        c[7 - j] -= av  # one row per trip, the same in every lane
    for i in range(8):
        out[gid * 8 + i] = c[i]


@clpy.kernel
def oob_in_loop(x: Global[float32], y: Global[float32], m: int32):
    gid = clpy.get_global_id(0)
    s = float32(0.0)
    for i in range(m):
        s += x[i * 16 + gid]  # BUG for large m: reads past the end
    y[gid] = s


@clpy.kernel
def div_in_loop(x: Global[int32], y: Global[int32], m: int32):
    gid = clpy.get_global_id(0)
    s = 0
    for i in range(m):
        s += 100 // (x[gid] - i)  # BUG: zero for the lane whose x equals i
    y[gid] = s


@pytest.fixture
def fresh_plans(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bool]]:
    """Fresh plans; yields the outcomes of the vectorized loops' runs (True: all trips)."""
    plan._PLANS.clear()
    run = tripvec._Loop.run
    ran: list[bool] = []

    def counted(self: Any, fr: Any) -> bool:
        ok = run(self, fr)
        ran.append(ok)
        return ok

    monkeypatch.setattr(tripvec._Loop, "run", counted)
    yield ran
    tripvec.ENABLED = True
    plan._PLANS.clear()


def _same(run: Callable[[], Any], outcome: Callable[[Any], Any] = _outcome) -> Any:
    """``run()`` with trip vectorization and without (fresh plans): the same ``outcome``."""
    out = []
    for on in (True, False):
        tripvec.ENABLED = on
        out.append(outcome(run))
    tripvec.ENABLED = True
    assert out[0] == out[1]
    return out[0]


def _launch(k: Any, g: Any, loc: Any, *args: Any, checks: Any = False) -> Any:
    arrays = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with clpy.sim.config(checks=checks, threads=1):
        k[g, loc](*arrays, device="sim")
    return [a.tobytes() for a in arrays if isinstance(a, np.ndarray)]


CHECKS = [False, {"bounds", "div_zero"}]


@pytest.mark.parametrize("checks", CHECKS)
def test_reductions(fresh_plans: list[bool], checks: Any) -> None:
    rng = np.random.default_rng(2)
    x = rng.random(32 * 12).astype(np.float32)
    y = rng.random(64).astype(np.float32)
    out = np.zeros(32, np.int32)
    for m in (0, 1, 5, 11):
        kind, _ = _same(lambda m=m: _launch(reductions, (32,), (8,), x, y, out, m, checks=checks))
        assert kind == "ok"
    assert any(fresh_plans)


@pytest.mark.parametrize("checks", CHECKS)
def test_memory_loops(fresh_plans: list[bool], checks: Any) -> None:
    n, m = 24, 9
    a = np.random.default_rng(3).random(m * n).astype(np.float32)
    r = np.zeros(n, np.float32)
    kind, got = _same(lambda: _launch(memory_loops, (n,), (8,), a, r, m, n, checks=checks))
    assert kind == "ok"
    # the reduction into r[j], in float32 in trip order
    j = 5
    ref = np.float32(0.0)
    for i in range(m):
        ref = np.float32(ref + a[i * n + j] * a[i * n])
    assert np.frombuffer(got[1], np.float32)[j] == ref
    assert any(fresh_plans) and not all(fresh_plans)


@pytest.mark.parametrize("checks", CHECKS)
def test_local_tile(fresh_plans: list[bool], checks: Any) -> None:
    dim = 2 * BS
    a = (np.random.default_rng(4).random(BS * dim) + np.eye(BS, dim).ravel() * 4).astype(np.float32)
    # LU's diagonal block (the stmtgen tests' kernel): local reductions whose reads miss the
    # element they update
    kind, _ = _same(lambda: _launch(tile_update, (BS,), (BS,), a, dim, checks=checks))
    assert kind == "ok"
    assert any(fresh_plans)


@pytest.mark.parametrize("checks", CHECKS)
def test_vector_accumulator(fresh_plans: list[bool], checks: Any) -> None:
    pos = np.random.default_rng(5).random((64, 4)).astype(np.float32)
    out = np.zeros((64, 4), np.float32)
    kind, _ = _same(lambda: _launch(vector_acc, (64,), (32,), pos, out, checks=checks))
    assert kind == "ok"
    assert any(fresh_plans)


@pytest.mark.parametrize("checks", CHECKS)
def test_private_rows(fresh_plans: list[bool], checks: Any) -> None:
    rng = np.random.default_rng(6)
    a = rng.random(128 * 8).astype(np.float32)
    b = rng.random(64).astype(np.float32)
    out = np.zeros(128 * 8, np.float32)
    kind, _ = _same(lambda: _launch(private_tile, (128,), (64,), a, b, out, checks=checks))
    assert kind == "ok"
    assert any(fresh_plans)


def test_out_of_bounds_report(fresh_plans: list[bool]) -> None:
    x = np.ones(16 * 4, np.float32)
    y = np.zeros(16, np.float32)
    kind, reports = _same(lambda: _launch(oob_in_loop, (16,), (16,), x, y, 6, checks=True))
    assert kind == "error" and reports[0][0] == "out-of-bounds"
    kind, _ = _same(lambda: _launch(oob_in_loop, (16,), (16,), x, y, 6, checks=False))
    assert kind == "ok"


def test_division_report(fresh_plans: list[bool]) -> None:
    x = (np.arange(16, dtype=np.int32) % 7) + 3
    y = np.zeros(16, np.int32)
    for checks in ({"div_zero"}, {"bounds"}):
        kind, _ = _same(lambda c=checks: _launch(div_in_loop, (16,), (16,), x, y, 8, checks=c))
        assert kind == ("error" if "div_zero" in checks else "ok")


def test_threads_and_batches(fresh_plans: list[bool]) -> None:
    """The same bytes with one thread and one batch as with two threads over small batches
    (every batch vectorizes its own loops)."""
    rng = np.random.default_rng(11)
    x = rng.random(32 * 12).astype(np.float32)
    y = rng.random(64).astype(np.float32)
    out = []
    for cfg in ({"threads": 1}, {"threads": 2, "max_lanes": 8}):
        arrays = [y.copy(), np.zeros(32, np.int32)]
        with clpy.sim.config(checks=False, **cfg):
            reductions[(32,), (8,)](x, arrays[0], arrays[1], 11, device="sim")
        out.append([a.tobytes() for a in arrays])
    assert out[0] == out[1]
    assert any(fresh_plans)
