"""Generated code (sim/stmtgen.py: one function per assignment; sim/affine_gen.py: one per
exact index) gives the same bytes and the same checker reports as the closures it replaces:
global runs updated in place, uniform addresses, local tiles, float variables, wrapped and
out-of-range indices, offset pointers, races and uninitialised reads."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, float32, int16, int32
from clpy_sim import SimulationError, affine, plan, stmtgen

# the NumPy engine's own machinery (checks off would otherwise run natively)
pytestmark = pytest.mark.usefixtures("numpy_engine")

BS = 16


@clpy.kernel
def gs_like(a: Global[float32], r: Global[float32], q: Global[float32], k: int32, m: int32):
    """Gram-Schmidt's kernels 1 and 3: uniform loads, run updates, a float accumulator."""
    j = clpy.get_global_id(0)
    n = clpy.get_global_size(0)
    if j == 0:
        nrm = float32(0.0)
        for i in range(m):
            nrm += a[i * n + k] * a[i * n + k]
        r[k * n + k] = clpy.sqrt(nrm)
    if k < j:
        r[k * n + j] = 0.0
        for i in range(m):
            r[k * n + j] += q[i * n + k] * a[i * n + j]
        for i in range(m):
            a[i * n + j] -= q[i * n + k] * r[k * n + j]
            a[i * n + j] /= float32(2.0)
        q[(m - 1) * n + j] = a[j] * float32(0.5) + a[n + j]


@clpy.kernel
def tile_update(m: Global[float32], dim: int32):
    """LU's diagonal kernel: strided and uniform local accesses, compound updates."""
    tx = clpy.get_local_id(0)
    shadow = clpy.local_array(float32, BS * BS)
    for i in range(BS):
        shadow[i * BS + tx] = m[i * dim + tx]
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    for i in range(BS - 1):
        if tx > i:
            for j in range(i):
                shadow[tx * BS + i] -= shadow[tx * BS + j] * shadow[j * BS + i]
            shadow[tx * BS + i] /= shadow[i * BS + i]
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    for i in range(BS):
        m[i * dim + tx] = shadow[i * BS + tx] + shadow[tx] * float32(0.25)


@clpy.kernel
def accumulate(x: Global[float32], y: Global[float32], z: Global[float32]):
    """A float accumulator over the lanes, updated in place once nothing else refers to it;
    an alias taken in between keeps its value."""
    gid = clpy.get_global_id(0)
    s = float32(0.0)
    for i in range(4):
        s += x[gid + i] * float32(2.0)
        s -= x[gid] * float32(0.5)
    t = s
    s += float32(1.0) * x[gid]
    s *= x[gid + 1] + float32(1.0)
    y[gid] = s
    z[gid] = t


@clpy.kernel
def int_updates(x: Global[int32], y: Global[int32], k: int32):
    gid = clpy.get_global_id(0)
    for i in range(3):
        y[gid] += x[gid + i] * k  # an int run updated in place
        y[gid] ^= x[i]  # a uniform load
        y[0] += 0  # a uniform compound store (the general path)


@clpy.kernel
def narrow_index(x: Global[float32], y: Global[float32], base: int16):
    gid = clpy.get_global_id(0)
    # int16 arithmetic that wraps: the exact value is out of range, the wrapped one is used
    y[gid] = x[int32(base + int16(30000)) + gid] * float32(2.0) + x[gid]


@clpy.kernel
def offset_ptr(x: Global[float32], y: Global[float32], off: int32):
    gid = clpy.get_global_id(0)
    p = x + off
    y[gid] = p[gid] * float32(3.0) + p[gid + 1]
    y[gid] += p[gid] * float32(0.5)


@clpy.kernel
def past_end(x: Global[float32], y: Global[float32], k: int32):
    gid = clpy.get_global_id(0)
    y[gid] = x[gid + k] * float32(2.0) + x[gid]


@clpy.kernel
def store_past_end(x: Global[float32], y: Global[float32], k: int32):
    gid = clpy.get_global_id(0)
    y[gid + k] = x[gid] * float32(2.0) + x[gid]


@clpy.kernel
def global_race(x: Global[float32], y: Global[float32]):
    gid = clpy.get_global_id(0)
    y[gid + 1] = x[gid] * float32(2.0) + x[gid]
    y[gid] += x[gid] * float32(2.0)  # BUG: the neighbour wrote y[gid] in the same interval


@clpy.kernel
def local_race(y: Global[float32]):
    tx = clpy.get_local_id(0)
    tile = clpy.local_array(float32, 2 * BS)
    tile[tx] = float32(1.0)
    tile[tx + BS] = float32(1.0)
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    tile[tx + 1] += tile[tx] * float32(2.0)  # BUG: reads the neighbour's element unordered
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    y[clpy.get_global_id(0)] = tile[tx] * float32(1.0) + tile[tx + 1]


@clpy.kernel
def uninit_local(y: Global[float32]):
    tx = clpy.get_local_id(0)
    tile = clpy.local_array(float32, 2 * BS)
    tile[tx] = float32(1.0)
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    y[clpy.get_global_id(0)] = tile[tx] * float32(2.0) + tile[tx + BS]  # BUG: never written


@pytest.fixture
def fresh_plans() -> Iterator[None]:
    plan._PLANS.clear()
    yield
    stmtgen.ENABLED = affine.GENERATE = True
    plan._PLANS.clear()


def _outcome(run: Callable[[], Any]) -> Any:
    plan._PLANS.clear()
    try:
        return ("ok", run())
    except SimulationError as e:
        return (
            "error",
            [
                (r.kind, r.message, r.loc, r.global_id, r.index, r.other_global_id, r.count)
                for r in e.reports
            ],
        )


def _all_ways(run: Callable[[], Any]) -> list[Any]:
    """``run()`` with generated statements and indices, with generated indices only, and with
    the closures alone (fresh plans each time)."""
    out = []
    for st, gen in ((True, True), (False, True), (False, False)):
        stmtgen.ENABLED, affine.GENERATE = st, gen
        out.append(_outcome(run))
    stmtgen.ENABLED = affine.GENERATE = True
    return out


def _launch(k: Any, g: Any, loc: Any, *args: Any, checks: bool = True) -> Any:
    arrays = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with clpy.sim.config(checks=checks, threads=1):
        k[g, loc](*arrays, device="sim")
    return [a.tobytes() for a in arrays if isinstance(a, np.ndarray)]


def _same(run: Callable[[], Any]) -> Any:
    first, *rest = _all_ways(run)
    for other in rest:
        assert other == first
    return first


@pytest.mark.parametrize("checks", [False, True])
def test_gram_schmidt_like(fresh_plans: None, checks: bool) -> None:
    n, m, k = 48, 6, 3
    rng = np.random.default_rng(1)
    a = rng.random(m * n).astype(np.float32)
    r = np.zeros(n * n, np.float32)
    q = rng.random(m * n).astype(np.float32)
    kind, got = _same(lambda: _launch(gs_like, (n,), (16,), a, r, q, k, m, checks=checks))
    assert kind == "ok"
    # the float accumulator, computed in float32 in the kernel's order
    nrm = np.float32(0.0)
    for i in range(m):
        nrm = np.float32(nrm + a[i * n + k] * a[i * n + k])
    r_out = np.frombuffer(got[1], np.float32)
    assert r_out[k * n + k] == np.sqrt(nrm)
    want = np.zeros(n, np.float32)
    for i in range(m):
        want = (want + q[i * n + k] * a.reshape(m, n)[i]).astype(np.float32)
    np.testing.assert_array_equal(r_out[k * n + k + 1 : k * n + n], want[k + 1 :])


@pytest.mark.parametrize("checks", [False, True])
def test_local_tile_updates(fresh_plans: None, checks: bool) -> None:
    dim = BS
    rng = np.random.default_rng(2)
    mat = (rng.random((BS, BS)) + np.eye(BS) * BS).astype(np.float32).reshape(-1)
    kind, got = _same(lambda: _launch(tile_update, (BS,), (BS,), mat, dim, checks=checks))
    assert kind == "ok"
    assert np.isfinite(np.frombuffer(got[0], np.float32)).all()


@pytest.mark.parametrize("checks", [False, True])
def test_float_accumulator_in_place(fresh_plans: None, checks: bool) -> None:
    n = 32
    x = (np.arange(n + 4, dtype=np.float32) * 0.37).astype(np.float32)
    y = np.zeros(n, np.float32)
    z = np.zeros(n, np.float32)
    kind, got = _same(lambda: _launch(accumulate, (n,), (16,), x, y, z, checks=checks))
    assert kind == "ok"
    f = np.float32
    s = np.zeros(n, np.float32)
    for i in range(4):
        s = (s + x[i : i + n] * f(2.0)).astype(np.float32)
        s = (s - x[:n] * f(0.5)).astype(np.float32)
    t = s.copy()
    s = (s + f(1.0) * x[:n]).astype(np.float32)
    s = (s * (x[1 : n + 1] + f(1.0))).astype(np.float32)
    np.testing.assert_array_equal(np.frombuffer(got[1], np.float32), s)
    np.testing.assert_array_equal(np.frombuffer(got[2], np.float32), t)


@pytest.mark.parametrize("checks", [False, True])
def test_int_compound_updates(fresh_plans: None, checks: bool) -> None:
    n = 32
    x = np.arange(n + 3, dtype=np.int32) * 5 - 40
    y = np.arange(n, dtype=np.int32)
    kind, got = _same(lambda: _launch(int_updates, (n,), (16,), x, y, 7, checks=False))
    assert kind == "ok"
    want = y.astype(np.int64)
    for i in range(3):
        want = want + x[i : i + n] * 7
        want ^= x[i]
    np.testing.assert_array_equal(np.frombuffer(got[1], np.int32), want.astype(np.int32))


@pytest.mark.parametrize("checks", [False, True])
def test_wrapped_index_and_offset_pointer(fresh_plans: None, checks: bool) -> None:
    n = 32
    x = np.arange(4 * n, dtype=np.float32)
    y = np.zeros(n, np.float32)
    # base + 30000 wraps in int16 to a small index
    base = -30000 + 5
    kind, got = _same(lambda: _launch(narrow_index, (n,), (16,), x, y, base, checks=checks))
    assert kind == "ok"
    np.testing.assert_array_equal(np.frombuffer(got[1], np.float32), x[5 : 5 + n] * 2 + x[:n])
    kind, got = _same(lambda: _launch(offset_ptr, (n,), (16,), x, y, 3, checks=checks))
    assert kind == "ok"
    p = x[3:]
    np.testing.assert_array_equal(
        np.frombuffer(got[1], np.float32), p[:n] * 3 + p[1 : n + 1] + p[:n] * np.float32(0.5)
    )


@pytest.mark.parametrize(
    "kernel,kind",
    [(past_end, "out-of-bounds"), (store_past_end, "out-of-bounds"), (global_race, "data-race")],
)
def test_global_reports(fresh_plans: None, kernel: Any, kind: str) -> None:
    n = 32
    x = np.ones(n, np.float32)
    y = np.zeros(n + 1, np.float32)
    args = (x, y) if kernel is global_race else (x, y, 5)
    outcome, reports = _same(lambda: _launch(kernel, (n,), (16,), *args))
    assert outcome == "error" and reports[0][0] == kind


@pytest.mark.parametrize(
    "kernel,kind", [(local_race, "data-race"), (uninit_local, "uninitialized-read")]
)
def test_local_reports(fresh_plans: None, kernel: Any, kind: str) -> None:
    y = np.zeros(2 * BS, np.float32)
    outcome, reports = _same(lambda: _launch(kernel, (2 * BS,), (BS,), y))
    assert outcome == "error" and reports[0][0] == kind


def test_checks_off_out_of_range_reads_match(fresh_plans: None) -> None:
    """With the bounds checker off an out-of-range read is clamped by the memory, the same
    way through the generated code."""
    n = 32
    x = np.arange(n, dtype=np.float32)
    y = np.zeros(n, np.float32)
    _same(lambda: _launch(past_end, (n,), (16,), x, y, 5, checks=False))


def test_generated_paths_are_used(fresh_plans: None) -> None:
    """The kernels above do compile to generated statements (not only to the fallback)."""
    fn = gs_like.ir if hasattr(gs_like, "ir") else None
    n, m = 48, 6
    a = np.ones(m * n, np.float32)
    _launch(gs_like, (n,), (16,), a, np.zeros(n * n, np.float32), a.copy(), 2, m)
    made = [p for f, per in plan._PLANS.items() for p in per.values() if f.name == "gs_like"]
    assert made, fn
    src = []
    for p in made:
        stack = [p.body]
        seen = set()
        while stack:
            f = stack.pop()
            if id(f) in seen:
                continue
            seen.add(id(f))
            if getattr(f, "__name__", "") == "stmt" and f.__doc__:
                src.append(f.__doc__)
            for c in getattr(f, "__closure__", None) or ():
                v = c.cell_contents
                if callable(v):
                    stack.append(v)
                elif isinstance(v, (list, tuple)):
                    stack.extend(x for x in v if callable(x))
    assert any("out=row" in s for s in src)  # the in-place run update
    assert any(".data[" in s for s in src)  # inline loads


def test_threads_give_the_same_bytes(fresh_plans: None) -> None:
    """Generated statements run in every batch's thread: several batches on two threads give
    the bytes of one thread (and of the closures)."""
    n, m = 64, 5
    rng = np.random.default_rng(3)
    a = rng.random(m * n).astype(np.float32)
    q = rng.random(m * n).astype(np.float32)
    outs = []
    for threads in (1, 2):
        arrays = [a.copy(), np.zeros(n * n, np.float32), q.copy()]
        with clpy.sim.config(checks=True, threads=threads, max_lanes=16):
            gs_like[(n,), (16,)](*arrays, 2, m, device="sim")
        outs.append([x.tobytes() for x in arrays])
    assert outs[0] == outs[1]
    stmtgen.ENABLED = affine.GENERATE = False
    plan._PLANS.clear()
    arrays = [a.copy(), np.zeros(n * n, np.float32), q.copy()]
    with clpy.sim.config(checks=True, threads=1, max_lanes=16):
        gs_like[(n,), (16,)](*arrays, 2, m, device="sim")
    assert [x.tobytes() for x in arrays] == outs[0]
