"""The native engine's device functions with barriers spliced into the kernel
(sim/native/cgen_splice.py): a function called once at the kernel's top level, without a
``return``, runs as the kernel's own statements (its uniform loops once per group, its
local-id variables recomputed per region); a function called twice, under a condition, or
with a ``return`` keeps the generic inlining. Each compared byte for byte with the NumPy
engine, checks off, and with every checker on (the same report)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import clpy
import clpy_sim
from clpy import Global, Local, float32, int32
from clpy_sim.native import runner
from clpy_sim.native.cgen import Geometry, generate

pytestmark = pytest.mark.filterwarnings("ignore::clpy.UniformityWarning")

BS = 16


@pytest.fixture(autouse=True)
def _strict(monkeypatch: pytest.MonkeyPatch) -> None:
    """A C compiler error on a generated source fails the test (no quiet fall-back)."""
    monkeypatch.setenv("CLPY_SIM_NATIVE_STRICT", "1")


@clpy.func
def wave(
    src: Global[int32], dst: Global[int32], t: Local[int32], cols: int32, pen: int32, b: int32
) -> None:
    tx = clpy.get_local_id(0)
    base = b * BS + cols
    t[tx] = src[base + tx]
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    for m in range(BS):  # (a uniform loop with barriers: once per group)
        v = t[tx]
        if tx <= m and tx > 0:
            v = max(t[tx - 1] - pen, t[tx] + m)
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
        t[tx] = v
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    for m in range(cols % 3, BS - 2, 2):
        v = t[tx]
        if tx < m:
            v += t[tx + 1]
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
        t[tx] = v
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    dst[base + tx] = t[tx]


@clpy.kernel
def k_wave(src: Global[int32], dst: Global[int32], cols: int32, pen: int32):
    t = clpy.local_array(int32, BS)
    wave(src, dst, t, cols, pen, clpy.get_group_id(0))


@clpy.func
def shift_pass(x: Global[float32], t: Local[float32], k: int32) -> None:
    lid = clpy.get_local_id(0)
    t[lid] = x[clpy.get_global_id(0)] * 2.0
    clpy.barrier()
    x[clpy.get_global_id(0)] = t[(lid + k) % BS]
    clpy.barrier()


@clpy.kernel
def k_twice(x: Global[float32], k: int32):
    t = clpy.local_array(float32, BS)
    shift_pass(x, t, k)  # called twice: the generic inlining
    shift_pass(x, t, k + 1)


@clpy.func
def outer(x: Global[float32], t: Local[float32], k: int32) -> None:
    g = clpy.get_group_id(0) + k
    shift_pass(x, t, g)  # reached once through `outer`: spliced in two rounds


@clpy.kernel
def k_nested(x: Global[float32], k: int32):
    t = clpy.local_array(float32, BS)
    outer(x, t, k)


@clpy.kernel
def k_conditional(x: Global[float32], k: int32):
    t = clpy.local_array(float32, BS)
    if k > 2:  # (a uniform condition, but not the kernel's top level)
        shift_pass(x, t, k)


@clpy.kernel
def k_after_return(x: Global[float32], k: int32):
    t = clpy.local_array(float32, BS)
    if clpy.get_local_id(0) >= k + 8:
        return  # (the spliced statements run under the kernel's mask)
    shift_pass(x, t, k)


@clpy.func
def early(x: Global[float32], t: Local[float32], k: int32) -> None:
    lid = clpy.get_local_id(0)
    t[lid] = x[clpy.get_global_id(0)]
    clpy.barrier()
    if k < 0:
        return
    x[clpy.get_global_id(0)] = t[(lid + k) % BS] + 1.0


@clpy.kernel
def k_return(x: Global[float32], k: int32):
    t = clpy.local_array(float32, BS)
    early(x, t, k)


@clpy.func
def varying(x: Global[float32], t: Local[float32], n: int32) -> None:
    lid = clpy.get_local_id(0)
    t[lid] = 0.0
    clpy.barrier()
    for i in range(n):  # n differs per work-item: masks, as the generic inlining had
        t[(lid + i) % BS] += 1.0  # (a race between work-items: same interval)
        clpy.barrier()
    x[clpy.get_global_id(0)] = t[lid]


@clpy.kernel
def k_varying(x: Global[float32], n: int32):
    t = clpy.local_array(float32, BS)
    varying(x, t, n + clpy.get_local_id(0) % 3)


@clpy.func
def moved(x: Global[float32], t: Local[float32], k: int32) -> None:
    lid = clpy.get_local_id(0)
    x = x + clpy.get_group_id(0) * BS  # a pointer parameter the function assigns
    t[lid] = x[lid]
    clpy.barrier()
    x[lid] = t[(lid + k) % BS] - t[lid]


@clpy.kernel
def k_moved(x: Global[float32], k: int32):
    t = clpy.local_array(float32, BS)
    moved(x, t, k)


@clpy.func
def divergent(x: Global[float32], t: Local[float32], k: int32) -> None:
    lid = clpy.get_local_id(0)
    t[lid] = x[clpy.get_global_id(0)]
    if lid < k:
        clpy.barrier()  # reached by part of the group when 0 < k < BS
    x[clpy.get_global_id(0)] = t[lid] + t[(lid + k) % BS]


@clpy.kernel
def k_divergent(x: Global[float32], k: int32):
    t = clpy.local_array(float32, BS)
    divergent(x, t, k)


def _run(k: Any, gs: Any, ls: Any, args: list[Any], **cfg: Any) -> tuple[list[Any], str | None]:
    out = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    err = None
    with clpy.sim.config(**cfg):
        try:
            k[gs, ls](*out, device="sim")
        except clpy_sim.SimulationError as e:
            err = str(e)
    return out, err


def _compare(k: Any, gs: Any, args: list[Any], checks: bool = False) -> str | None:
    ref, e1 = _run(k, gs, (BS,), args, engine="numpy", checks=checks)
    got, e2 = _run(k, gs, (BS,), args, engine="auto" if checks else "native", checks=checks)
    assert e1 == e2
    if e1 is None:
        assert runner.why_not(k) is None
    for a, b in zip(ref, got):
        if isinstance(a, np.ndarray):
            assert a.tobytes() == b.tobytes()
    return e1


RNG = np.random.default_rng(5)


def _source(kern: Any, **types: Any) -> str:
    return generate(kern.specialize(**types).function, Geometry(1, (BS, 1, 1)))[0]


@pytest.mark.parametrize("cols", [0, 5, 16, 40, -3])
@pytest.mark.parametrize("pen", [0, 7, -(2**31)])
def test_spliced_function_equals_numpy(cols: int, pen: int) -> None:
    src = RNG.integers(-1000, 1000, 256).astype(np.int32)
    _compare(k_wave, (128,), [src, np.zeros(256, np.int32), np.int32(cols), np.int32(pen)])


def test_spliced_source() -> None:
    """The spliced loop's counter is one scalar per group and runs with no masks; the
    function's local id is recomputed in the regions, not kept per work-item."""
    src = _source(k_wave, src=Global[int32], dst=Global[int32], cols=int32, pen=int32)
    assert "/* inlined" not in src
    assert "unsigned char clpy_m" not in src.replace("unsigned char clpy_m1[", "")
    assert "tx[" not in src and "const int32_t tx = " in src


@pytest.mark.parametrize("k", [0, 3, 15, 16, -1])
@pytest.mark.parametrize(
    "kern", [k_twice, k_nested, k_conditional, k_return, k_moved, k_after_return]
)
def test_splice_or_not_equals_numpy(kern: Any, k: int) -> None:
    x = RNG.uniform(-9, 9, 64).astype(np.float32)
    _compare(kern, (64,), [x, np.int32(k)])


def test_which_calls_are_spliced() -> None:
    types = dict(x=Global[float32], k=int32)
    assert "/* inlined" not in _source(k_nested, **types)
    assert "/* inlined" not in _source(k_moved, **types)
    assert "/* inlined" not in _source(k_after_return, **types)
    for kern in (k_twice, k_conditional, k_return):
        assert "/* inlined" in _source(kern, **types)


@pytest.mark.parametrize("n", [0, 1, 4])
def test_per_work_item_loop_in_spliced_function(n: int) -> None:
    x = np.zeros(32, np.float32)
    _compare(k_varying, (32,), [x, np.int32(n)])


@pytest.mark.parametrize("k", [0, 4, 16])
def test_checkers_report_as_numpy(k: int) -> None:
    """With every checker on, a barrier reached by part of the group (0 < k < 16) inside a
    spliced function gets the NumPy engine's report; the clean launches run natively."""
    x = RNG.uniform(-9, 9, 64).astype(np.float32)
    err = _compare(k_divergent, (64,), [x, np.int32(k)], checks=True)
    assert (err is not None) == (0 < k < BS)
    if err is not None:
        assert "barrier" in err


def test_checkers_on_spliced_function() -> None:
    src = RNG.integers(-1000, 1000, 256).astype(np.int32)
    err = _compare(
        k_wave, (128,), [src, np.zeros(256, np.int32), np.int32(5), np.int32(3)], checks=True
    )
    assert err is None
    x = np.zeros(32, np.float32)
    err = _compare(k_varying, (32,), [x, np.int32(2)], checks=True)
    assert err is not None and "barrier-divergence" in err  # (its loop's trips vary)


@clpy.kernel
def k_gather(x: Global[float32], idx: Global[int32], y: Global[float32], n: int32):
    gid = clpy.get_global_id(0)
    acc = float32(0.0)
    for k in range(n):
        j = idx[(gid + k) % 64]
        acc += x[j] * 0.5 + x[j + k]
    y[gid] = acc + x[idx[gid]]


@pytest.mark.parametrize("n", [0, 3, 70])
def test_indices_out_of_range_are_element_zero(n: int) -> None:
    """Indices loaded from memory, in and out of range: element 0 out of range (the branch
    form of the clamp, clpy_ixb) as on the NumPy engine."""
    x = RNG.uniform(-9, 9, 64).astype(np.float32)
    idx = RNG.integers(0, 64, 64).astype(np.int32)
    idx[::5] = [-1, 64, 2**31 - 1, -(2**31), 1000, -7, 63, 0, 65, -64, 5, 6, 7][: idx[::5].size]
    _compare(k_gather, (64,), [x, idx, np.zeros(64, np.float32), np.int32(n)])
    src = _source(k_gather, x=Global[float32], idx=Global[int32], y=Global[float32], n=int32)
    assert "#define clpy_ix(i, n) clpy_ixb((i), (n))" in src
    # its work-item loop keeps clamps: not vectorized where gathers are slow (AMD), else left
    # to the compiler (sim/native/compiler.py slow_gathers)
    from clpy_sim.native import compiler

    assert src.count('__asm__ volatile("");') == (1 if compiler.slow_gathers() else 0)


@clpy.func
def mixed(src: Global[float32], x: Global[float32], t: Local[float32], k: int32, n: int32) -> None:
    lid = clpy.get_local_id(0)
    gid = clpy.get_global_id(0)
    acc = clpy.private_array(float32, 4)
    for i in range(4):
        acc[i] = src[(gid + i * k) % 64]
    k += 1  # (a scalar parameter the function assigns)
    s = clpy.work_group_reduce_add(acc[lid % 4])  # (a collective: a region boundary)
    t[lid] = s + acc[(lid + k) % 4]
    clpy.barrier()
    while n > 0:  # (a uniform while loop with a barrier)
        v = t[(lid + n) % BS]
        clpy.barrier()
        t[lid] = v * 0.5 + t[lid]
        clpy.barrier()
        n -= 1
    x[gid] = t[lid] + float32(k)


@clpy.kernel
def k_mixed(src: Global[float32], x: Global[float32], k: int32, n: int32):
    t = clpy.local_array(float32, BS)
    mixed(src, x, t, k, n)


@pytest.mark.parametrize("k", [0, 1, 7])
@pytest.mark.parametrize("n", [0, 3])
def test_spliced_collective_private_array_while(k: int, n: int) -> None:
    src = RNG.uniform(-9, 9, 64).astype(np.float32)
    _compare(k_mixed, (64,), [src, np.zeros(64, np.float32), np.int32(k), np.int32(n)])
    types = dict(src=Global[float32], x=Global[float32], k=int32, n=int32)
    assert "/* inlined" not in _source(k_mixed, **types)


@clpy.func
def tile2(x: Global[float32], t: Local[float32], w: int32) -> None:
    lx = clpy.get_local_id(0)
    ly = clpy.get_local_id(1)
    gx = clpy.get_global_id(0)
    gy = clpy.get_global_id(1)
    t[ly * 8 + lx] = x[gy * w + gx]
    clpy.barrier()
    for i in range(1, 4):
        v = t[((ly + i) % 4) * 8 + (lx + i) % 8]
        clpy.barrier()
        t[ly * 8 + lx] += v
        clpy.barrier()
    x[gy * w + gx] = t[ly * 8 + lx]


@clpy.kernel
def k_tile2(x: Global[float32], w: int32):
    t = clpy.local_array(float32, 32)
    tile2(x, t, w)


def test_spliced_two_dimensional_groups() -> None:
    x = RNG.uniform(-9, 9, 16 * 8).astype(np.float32)
    ref, _ = _run(k_tile2, (16, 8), (8, 4), [x, np.int32(16)], engine="numpy", checks=False)
    got, _ = _run(k_tile2, (16, 8), (8, 4), [x, np.int32(16)], engine="native", checks=False)
    assert runner.why_not(k_tile2) is None
    assert ref[0].tobytes() == got[0].tobytes()
