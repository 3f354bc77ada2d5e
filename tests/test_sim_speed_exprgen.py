"""Generated expressions (sim/exprgen.py: call arguments, conditions, assigned and returned
values as one function each; stores through ``Local[T]`` parameters in sim/stmtgen.py) give
the same bytes and every checker report in full as the closures: NW's block (a device function
with ``?:`` blends, local-pointer loads and stores on anti-diagonals), N-body's float4 loop
(swizzles, a scalar made a vector), integer sums that stay runs, conversions, comparisons,
unary operators, and seeded bugs (a local race, an out-of-bounds local read, an uninitialised
read, an out-of-bounds global read inside a call argument); variables that no branch needs to
merge back (sim/liveness.py) give the bytes of merging them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, Local, float4, float32, int16, int32, uint8, uint32
from clpy_sim import exprgen, liveness, plan, stmtgen
from tests.test_sim_stmtgen import _outcome  # results, or every report in full

# the NumPy engine's generated expressions (checks off would otherwise run natively)
pytestmark = pytest.mark.usefixtures("numpy_engine")

BS = 16
BS1 = BS + 1


@clpy.func
def maximum(a: int32, b: int32, c: int32) -> int32:
    k = b if a <= b else a
    return c if k <= c else k


@clpy.func
def nw_block(
    reference: Global[int32], items: Global[int32], score: Local[int32], ref: Local[int32],
    cols: int32, penalty: int32, b_x: int32, b_y: int32, bug: int32,
) -> None:  # fmt: skip
    tx = clpy.get_local_id(0)
    corner = cols * BS * b_y + BS * b_x
    index = corner + tx + cols + 1
    if tx == 0:
        score[0] = items[corner]
    for ty in range(BS):
        ref[ty * BS + tx] = reference[index + cols * ty]
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    score[(tx + 1) * BS1] = items[corner + cols + cols * tx]
    score[tx + 1] = items[corner + tx + 1]
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    for m in range(BS):
        if tx <= m:
            x = tx + 1
            y = m - tx + 1
            score[y * BS1 + x] = maximum(
                score[(y - 1) * BS1 + x - 1] + ref[(y - 1) * BS + x - 1],
                score[y * BS1 + x - 1] - penalty,
                score[(y - 1) * BS1 + x] - penalty,
            )
        if bug == 1:
            score[tx + 2] = score[tx + 1] + 1  # BUG: neighbours unordered (local race)
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    for m in range(BS - 2, -1, -1):
        if tx <= m:
            x = tx + BS - m
            y = BS - tx
            score[y * BS1 + x] = maximum(
                score[(y - 1) * BS1 + x - 1] + ref[(y - 1) * BS + x - 1],
                score[y * BS1 + x - 1] - penalty,
                score[(y - 1) * BS1 + x] - penalty + ref[bug * 300],  # BUG when 1: past end
            )
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    for ty in range(BS):
        items[index + cols * ty] = score[(ty + 1) * BS1 + tx + 1]


@clpy.kernel
def nw_kernel(
    reference: Global[int32], items: Global[int32], cols: int32, penalty: int32, blk: int32,
    bug: int32,
):  # fmt: skip
    score = clpy.local_array(int32, BS1 * BS1)
    ref = clpy.local_array(int32, BS * BS)
    bx = clpy.get_group_id(0)
    nw_block(reference, items, score, ref, cols, penalty, bx, blk - 1 - bx, bug)


@clpy.kernel
def bodies(pos: Global[float4], out: Global[float4], eps: float32):
    tid = clpy.get_local_id(0)
    tile = clpy.local_array(float4, BS)
    me = pos[clpy.get_global_id(0)]
    tile[tid] = me
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    acc = float4(0.0)
    for j in range(BS):
        p = tile[j]
        r = p - me
        dist = r.x * r.x + r.y * r.y + r.z * r.z
        inv = float32(1.0) / clpy.sqrt(dist + eps)
        s = p.w * (inv * inv * inv)
        acc += s * r
        acc -= -r * float32(1.0e-3) if dist > float32(1.0) else r * float32(2.0e-3)
    out[clpy.get_global_id(0)] = acc


@clpy.kernel
def mixed(
    x: Global[int32], u: Global[uint8], y: Global[float32], z: Global[int32], k: int32,
    bug: int32,
):  # fmt: skip
    gid = clpy.get_global_id(0)
    lid = clpy.get_local_id(0)
    w = int16(lid) + int16(3)  # a narrow run
    a = x[gid + 1] - x[gid] * k + (lid & 3) - (gid ^ 5) + int32(w)
    b = uint32(u[gid]) * uint32(3) + uint32(lid)  # widened: a run stays a run
    c = -a if a > 0 else a + 1
    f = float32(a) * float32(0.5) + float32(b)
    if x[gid] + lid < k or bug * 100 + gid >= 64 and x[gid + bug * 100] > 0:  # BUG: past end
        z[gid] = c + x[lid + 1] - 1
    y[gid] = -f + float32(c) if a != 2 else f
    if (lid < 5 and gid > 3) or (lid == 7 and not k > 0):  # safe right sides: one ufunc each
        y[gid] += float32(1.0)
    z[gid + 64] = int32(b) + (gid - lid) * 2 - k


@pytest.fixture
def fresh_plans() -> Iterator[None]:
    plan._PLANS.clear()
    yield
    stmtgen.ENABLED = exprgen.ENABLED = liveness.ENABLED = True
    plan._PLANS.clear()


def _ways(run: Callable[[], Any]) -> list[Any]:
    """``run()`` with generated statements and expressions, each alone, and neither."""
    out = []
    for st, ex in ((True, True), (True, False), (False, True), (False, False)):
        stmtgen.ENABLED, exprgen.ENABLED = st, ex
        out.append(_outcome(run))
    stmtgen.ENABLED = exprgen.ENABLED = True
    return out


def _same(run: Callable[[], Any]) -> Any:
    first, *rest = _ways(run)
    for other in rest:
        assert other == first
    return first


def _launch(k: Any, g: Any, loc: Any, *args: Any, checks: bool = True) -> Any:
    arrays = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with clpy.sim.config(checks=checks, threads=1):
        k[g, loc](*arrays, device="sim")
    return [a.tobytes() for a in arrays if isinstance(a, np.ndarray)]


def _nw_inputs() -> tuple[np.ndarray, np.ndarray, int]:
    n = 3 * BS
    rng = np.random.default_rng(5)
    reference = rng.integers(-4, 12, (n + 1, n + 1)).astype(np.int32)
    items = np.zeros((n + 1, n + 1), np.int32)
    items[:, 0] = -np.arange(n + 1) * 10
    items[0, :] = -np.arange(n + 1) * 10
    return reference, items, n + 1


@pytest.mark.parametrize("checks", [False, True])
def test_nw_blocks(fresh_plans: None, checks: bool) -> None:
    reference, items, cols = _nw_inputs()

    def run() -> Any:
        out = []
        it = items.copy()
        with clpy.sim.config(checks=checks, threads=1):
            for blk in (1, 2, 3):
                nw_kernel[(BS * blk,), (BS,)](reference, it, cols, 10, blk, 0, device="sim")
                out.append(it.tobytes())
        return out

    kind, got = _same(run)
    assert kind == "ok"
    assert got[0] != items.tobytes()


@pytest.mark.parametrize("bug", [1, 2])
def test_nw_block_reports(fresh_plans: None, bug: int) -> None:
    reference, items, cols = _nw_inputs()
    kind, reports = _same(
        lambda: _launch(nw_kernel, (2 * BS,), (BS,), reference, items, cols, 10, 2, bug)
    )
    assert kind == "error"
    assert reports[0][0] == ("data-race" if bug == 1 else "out-of-bounds")


@pytest.mark.parametrize("checks", [False, True])
def test_bodies(fresh_plans: None, checks: bool) -> None:
    rng = np.random.default_rng(9)
    pos = rng.standard_normal((64, 4)).astype(np.float32)
    pos[5, 2] = np.nan
    out = np.zeros((64, 4), np.float32)
    kind, got = _same(lambda: _launch(bodies, (64,), (BS,), pos, out, 0.25, checks=checks))
    assert kind == "ok"


@pytest.mark.parametrize("checks", [False, True])
def test_mixed_integers(fresh_plans: None, checks: bool) -> None:
    rng = np.random.default_rng(11)
    x = rng.integers(-50, 50, 65).astype(np.int32)
    u = rng.integers(0, 256, 64).astype(np.uint8)
    y = np.zeros(64, np.float32)
    z = np.zeros(128, np.int32)
    kind, got = _same(lambda: _launch(mixed, (64,), (BS,), x, u, y, z, 7, 0, checks=checks))
    assert kind == "ok"
    kind, reports = _same(lambda: _launch(mixed, (64,), (BS,), x, u, y, z, 7, 1))
    assert kind == "error" and reports[0][0] == "out-of-bounds"


def test_uninitialised_local_read(fresh_plans: None) -> None:
    """NW's block without the row of ``score`` that the first loop reads."""
    reference, items, cols = _nw_inputs()

    @clpy.kernel
    def partial(reference: Global[int32], items: Global[int32], cols: int32):
        score = clpy.local_array(int32, BS1 * BS1)
        ref = clpy.local_array(int32, BS * BS)
        tx = clpy.get_local_id(0)
        ref[tx] = reference[tx]
        score[tx + 1] = items[tx + 1]  # BUG: score[(tx + 1) * BS1] never written
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
        items[tx] = maximum(score[(tx + 1) * BS1] + ref[tx], score[tx + 1] - 10, tx)

    kind, reports = _same(lambda: _launch(partial, (BS,), (BS,), reference, items, cols))
    assert kind == "error" and reports[0][0] == "uninitialized-read"


def test_generated_expressions_are_used(fresh_plans: None) -> None:
    """The NW block does run generated expressions (its call's arguments) and a generated
    store through its ``Local[int32]`` parameter."""
    reference, items, cols = _nw_inputs()
    names: list[str] = []
    orig = exprgen.ExprGen.finish

    def finish(self: Any, head: str, where: Any) -> Any:
        names.append(head)
        return orig(self, head, where)

    exprgen.ExprGen.finish = finish  # type: ignore[method-assign]
    try:
        _launch(nw_kernel, (BS,), (BS,), reference, items, cols, 10, 1, 0)
    finally:
        exprgen.ExprGen.finish = orig  # type: ignore[method-assign]
    assert "def expr(fr):" in names and "def stmt(fr):" in names


@clpy.kernel
def scopes(x: Global[float32], out: Global[float32], n: int32):
    """Variables set in branches: some read only after a full assignment in their own block
    (branch-local: ``t``, ``u``), others read after the branch, in the next trip, in a
    ``while`` condition or after a partial assignment (merged)."""
    gid = clpy.get_global_id(0)
    lid = clpy.get_local_id(0)
    v = x[gid]
    w = float4(v)
    acc = float32(0.0)
    carry = float32(1.0)
    k = 0
    for i in range(n):
        if (gid + i) % 3 == 0:
            t = v * float32(2.0)  # branch-local
            acc += t
            carry = t  # read at the top of a later trip
        else:
            u = v + float32(i)  # branch-local
            acc -= u * carry
        if lid < i:
            w.y = acc  # partial: merged
            k = k + 1
        out[gid] = acc
    while k > 0:
        if k % 2 == 1:
            v = v * float32(0.5)
        k = k - 1
    out[gid] = acc + v + w.y + carry


def test_branch_local_variables(fresh_plans: None) -> None:
    body = scopes.specialize().function.body  # type: ignore[attr-defined]
    names = {v.name for v in liveness.branch_local(body)}
    assert {"t", "u"} <= names
    assert not names & {"acc", "carry", "w", "k", "v"}
    rng = np.random.default_rng(13)
    x = rng.random(64).astype(np.float32)
    got = []
    for on in (True, False):
        liveness.ENABLED = on
        for checks in (False, True):
            args = (x, np.zeros(64, np.float32), 7)
            got.append(
                _outcome(lambda a=args, c=checks: _launch(scopes, (64,), (BS,), *a, checks=c))
            )
    liveness.ENABLED = True
    assert got[0][0] == "ok" and all(g == got[0] for g in got)


TX, TY = 8, 4


@clpy.kernel
def halo(a: Global[float32], out: Global[float32], n: int32, shift: int32, bug: int32):
    """stencil3d's halo reads: ``?:`` with a global load on one side and a local load on the
    other, indices out of bounds on the lanes that do not take the side, whole-group and
    uniform conditions, a pointer with an offset, an integer select."""
    sh = clpy.local_array(float32, TX * TY)
    lx = clpy.get_local_id(0)
    ly = clpy.get_local_id(1)
    i = clpy.get_group_id(0) * TX + lx
    j = clpy.get_group_id(1) * TY + ly
    sid = lx + ly * TX
    g = j * n + i
    sh[sid] = a[g]
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    up = a[g + n] if ly == TY - 1 else sh[sid + TX]  # sh past its end where not taken
    down = a[g + bug * 4096] if ly == 0 else sh[sid - TX]  # negative where not taken
    left = a[g + 2] if lx == 0 else sh[sid - 1]
    whole = a[g + 1] if clpy.get_group_id(1) == 0 else sh[sid]  # per-group condition
    uni = a[g] if shift > 2 else sh[sid]  # uniform condition
    p = a + shift
    off = p[g] if lx < 3 else sh[sid]  # a pointer with an offset: the compacted path
    k = int32(i) if lx > 5 else int32(sid * 2)
    out[g] = up + down + left + whole + uni + off + float32(k)


def _halo(checks: bool, bug: int, shift: int = 1) -> Any:
    n = 4 * TX
    rows = 3 * TY + 2
    rng = np.random.default_rng(17)
    a = rng.random(rows * n).astype(np.float32)
    out = np.zeros(rows * n, np.float32)
    return _launch(halo, (n, 3 * TY), (TX, TY), a[n:], out, n, shift, bug, checks=checks)


@pytest.mark.parametrize("checks", [False, True])
@pytest.mark.parametrize("shift", [1, 3])
def test_speculative_selects(fresh_plans: None, checks: bool, shift: int) -> None:
    from clpy_sim import selectgen

    got = []
    for on in (True, False):
        selectgen.ENABLED = on
        got.append(_outcome(lambda: _halo(checks, 0, shift)))
    selectgen.ENABLED = True
    assert got[0][0] == "ok" and got[0] == got[1]
    assert got[0] == _same(lambda: _halo(checks, 0, shift))


@pytest.mark.parametrize("checks", [False, True])
def test_speculative_select_out_of_bounds(fresh_plans: None, checks: bool) -> None:
    """A lane that takes a side reads out of bounds: reported with the bounds checker, element
    0 without, as the compacted path does."""
    from clpy_sim import selectgen

    got = []
    for on in (True, False):
        selectgen.ENABLED = on
        got.append(_outcome(lambda: _halo(checks, 1)))
    selectgen.ENABLED = True
    assert got[0] == got[1]
    assert got[0][0] == ("error" if checks else "ok")


@clpy.kernel
def rows_halo(dst: Global[float32], src: Global[float32], w: int32):
    """convsep's row filter loads: a 2-D local tile filled by ``?:`` stores whose global side
    is out of bounds on the lanes left of the image (taking the constant side)."""
    data = clpy.local_array(float32, (TY, 3 * TX))
    lx = clpy.get_local_id(0)
    ly = clpy.get_local_id(1)
    base_x = (clpy.get_group_id(0) - 1) * TX + lx
    base = (clpy.get_group_id(1) * TY + ly) * w + base_x
    for i in range(3):
        data[ly][lx + i * TX] = src[base + i * TX] if base_x + i * TX >= 0 else 0.0
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    dst[base + TX] = data[ly][lx + TX - 1] + data[ly][lx + TX + 1]


@pytest.mark.parametrize("checks", [False, True])
def test_speculative_select_stored(fresh_plans: None, checks: bool) -> None:
    from clpy_sim import selectgen

    w = 4 * TX
    rng = np.random.default_rng(19)
    src = rng.random(3 * TY * w + 2 * TX).astype(np.float32)
    dst = np.zeros_like(src)
    got = []
    for on in (True, False):
        selectgen.ENABLED = on
        got.append(
            _outcome(
                lambda: _launch(rows_halo, (2 * TX, 3 * TY), (TX, TY), dst, src, w, checks=checks)
            )
        )
    selectgen.ENABLED = True
    assert got[0][0] == "ok" and got[0] == got[1]


@clpy.func
def clampf(x: float32, lo: float32, hi: float32) -> float32:
    y = lo if x < lo else x
    return hi if y > hi else y


@clpy.func
def shifted(a: int32, b: int32) -> int32:
    s = a + b  # an integer sum declared: stays the call (affine.value_fn keeps it exact)
    return s * 2


@clpy.func
def reads(p: Global[float32], i: int32) -> float32:
    return p[i] * float32(2.0)  # a pointer and a load: the call


@clpy.func
def flip(a: int32) -> int32:
    return -a if a > 3 else a


@clpy.kernel
def calls(x: Global[float32], out: Global[float32], k: int32):
    """Device functions made inline where their bodies are declarations and a return of
    inline expressions (``clampf``, ``flip`` with a uniform and a lane-varying argument),
    and calls kept where not."""
    gid = clpy.get_global_id(0)
    v = clampf(x[gid], float32(0.25), float32(0.75)) + float32(shifted(gid, k))
    out[gid] = v + reads(x, gid) + float32(flip(k) + flip(gid)) + clampf(v, v, v)


@pytest.mark.parametrize("checks", [False, True])
def test_inlined_calls(fresh_plans: None, checks: bool) -> None:
    x = np.random.default_rng(23).random(64).astype(np.float32)
    out = np.zeros(64, np.float32)
    for k in (2, 5):
        kind, got = _same(lambda k=k: _launch(calls, (64,), (BS,), x, out, k, checks=checks))
        assert kind == "ok"
