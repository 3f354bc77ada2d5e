"""Simulator semantics against NumPy/``math`` references: wrap-around integers, masked shift
counts, C and Python division, half precision, math accuracy (spec §2 ULP bounds) and the
INF/NaN cases of spec §2.5, printf formatting and order, batching."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import clpy
import clpy_sim as sim
from clpy import Global, float4, float16, float32, float64, int4, int32, uint32
from tests.test_sim_util import run_sim, ulp_diff


def _run(k: Any, g: int, l_: int, args: list[Any], **cfg: Any) -> list[Any]:
    return run_sim(k.specialize().function, (g,), (l_,), args, **cfg)


@clpy.kernel
def wrap(x: Global[int32], out: Global[int32], u: Global[uint32]):
    i = clpy.get_global_id(0)
    a = x[i]
    out[5 * i] = a + 2147483647
    out[5 * i + 1] = a << (i + 30)
    out[5 * i + 2] = a // -3
    out[5 * i + 3] = a % -3
    out[5 * i + 4] = -a * 65537
    u[i] = u[i] // 3 + u[i] % 5 - 10


def test_integer_semantics() -> None:
    x = np.array([-7, 7, 2**31 - 1, -2**31, 0, 5, -1, 3], np.int32)
    u = np.array([0, 1, 2, 3, 2**32 - 1, 9, 10, 11], np.uint32)
    out = _run(wrap, 8, 4, [x, np.zeros(40, np.int32), u])
    got = out[1].reshape(8, 5)
    i = np.arange(8)
    with np.errstate(over="ignore"):
        want_add = (x.astype(np.int64) + 2147483647).astype(np.int32)
        want_shl = (x.astype(np.int64) << ((i + 30) & 31)).astype(np.int32)
        want_mul = (-x.astype(np.int64) * 65537).astype(np.int32)
    np.testing.assert_array_equal(got[:, 0], want_add)
    np.testing.assert_array_equal(got[:, 1], want_shl)
    np.testing.assert_array_equal(got[:, 2], [int(v) // -3 for v in x])
    np.testing.assert_array_equal(got[:, 3], [int(v) % -3 for v in x])
    np.testing.assert_array_equal(got[:, 4], want_mul)
    want_u = ((u.astype(np.int64) // 3 + u.astype(np.int64) % 5 - 10) % 2**32).astype(np.uint32)
    np.testing.assert_array_equal(out[2], want_u)


@clpy.kernel
def halfk(x: Global[float16], y: Global[float16], out: Global[float16]):
    i = clpy.get_global_id(0)
    out[i] = x[i] * y[i] + x[i] / y[i] - 0.1


def test_half_arithmetic_is_half_precision() -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(-4, 4, 64).astype(np.float16)
    y = rng.uniform(0.5, 4, 64).astype(np.float16)
    out = _run(halfk, 64, 16, [x, y, np.zeros(64, np.float16)])[2]
    want = (x * y + x / y) - np.float16(0.1)
    np.testing.assert_array_equal(out, want)


@clpy.kernel
def vec_rel(a: Global[float4], b: Global[float4], out: Global[int4]):
    i = clpy.get_global_id(0)
    out[i] = (a[i] < b[i]) | (a[i] == b[i])


def test_vector_relational_is_minus_one() -> None:
    a = np.array([[1, 2, 3, 4]], np.float32)
    b = np.array([[2, 2, 1, np.nan]], np.float32)
    out = _run(vec_rel, 1, 1, [a, b, np.zeros((1, 4), np.int32)])[2]
    np.testing.assert_array_equal(out, [[-1, -1, 0, 0]])


@clpy.kernel
def mathk(x: Global[float32], out: Global[float32]):
    i = clpy.get_global_id(0)
    a = x[i]
    o = 10 * i
    out[o] = clpy.sin(a)
    out[o + 1] = clpy.exp(a)
    out[o + 2] = clpy.log(clpy.fabs(a))
    out[o + 3] = clpy.erf(a)
    out[o + 4] = clpy.tgamma(a)
    out[o + 5] = clpy.lgamma(a)
    out[o + 6] = clpy.atan2(a, 1.5)
    out[o + 7] = clpy.pow(clpy.fabs(a), 1.7)
    out[o + 8] = clpy.sinpi(a)
    out[o + 9] = clpy.cbrt(a)


# spec §2.4 table 7.1 (single precision) bounds
BOUNDS = [("sin", 4, math.sin), ("exp", 3, math.exp), ("log", 3, lambda v: math.log(abs(v))),
          ("erf", 16, math.erf), ("tgamma", 16, math.gamma), ("lgamma", 16, math.lgamma),
          ("atan2", 6, lambda v: math.atan2(v, 1.5)), ("pow", 16, lambda v: abs(v) ** 1.7),
          ("sinpi", 4, lambda v: math.sin(math.pi * v)), ("cbrt", 2, lambda v: math.copysign(
              abs(v) ** (1 / 3), v))]


def test_math_within_ulp_bounds_of_float64_reference() -> None:
    rng = np.random.default_rng(5)
    x = rng.uniform(-6, 6, 256).astype(np.float32)
    x = x[np.abs(x - np.round(x)) > 1e-3]  # stay off the poles of tgamma/lgamma
    n = len(x)
    out = _run(mathk, n, 1, [x, np.zeros(10 * n, np.float32)])[1].reshape(n, 10)
    for col, (name, ulps, ref) in enumerate(BOUNDS):
        want = np.array([ref(float(v)) for v in x]).astype(np.float32)
        d = ulp_diff(out[:, col], want)
        assert d.max() <= ulps + 0.5, f"{name}: {d.max()} ulp"


@clpy.kernel
def edge(x: Global[float32], out: Global[float32]):
    i = clpy.get_global_id(0)
    a = x[i]
    out[6 * i] = clpy.sqrt(a)
    out[6 * i + 1] = clpy.log(a)
    out[6 * i + 2] = clpy.exp(a)
    out[6 * i + 3] = clpy.fmin(a, 1.0)
    out[6 * i + 4] = clpy.pow(a, -1.0)
    out[6 * i + 5] = clpy.atan(a)


def test_inf_nan_edge_cases() -> None:
    x = np.array([-1.0, 0.0, np.inf, np.nan, -np.inf, -0.0], np.float32)
    o = _run(edge, 6, 1, [x, np.zeros(36, np.float32)])[1].reshape(6, 6)
    assert np.isnan(o[0, 0]) and o[1, 0] == 0 and o[2, 0] == np.inf        # sqrt
    assert o[1, 1] == -np.inf and np.isnan(o[0, 1]) and o[2, 1] == np.inf  # log
    assert o[2, 2] == np.inf and o[4, 2] == 0 and np.isnan(o[3, 2])        # exp
    assert o[3, 3] == 1.0                                                  # fmin(NaN, 1) = 1
    assert o[1, 4] == np.inf and np.signbit(o[5, 4]) and np.isinf(o[5, 4])  # pow(±0, -1)
    assert o[2, 5] == np.float32(math.pi / 2) and np.signbit(o[5, 5])     # atan


@clpy.kernel
def printer(x: Global[float32]):
    i = clpy.get_global_id(0)
    print("item", i, x[i])
    if i % 2 == 0:
        print("even", clpy.get_local_id(0), sep=":")


def test_printf_in_work_item_order(capsys: Any) -> None:
    x = np.array([0.5, 1e-7, 3.0, 1234567.0], np.float32)
    _run(printer, 4, 2, [x])
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["item 0 0.5", "even:0", "item 1 1e-07", "item 2 3", "even:0",
                     "item 3 1.23457e+06"]


@clpy.kernel
def lazy(x: Global[float32], y: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    y[i] = x[i] if i < n else -1.0
    if i < n and x[i] > 0.0:
        y[i] = 2.0
    if i >= n or x[i] < 0.0:
        y[i] = y[i] + 10.0


def test_select_and_short_circuit_evaluate_only_needed_lanes() -> None:
    x = np.array([1.0, -1.0, 0.0], np.float32)
    out = _run(lazy, 8, 4, [x, np.zeros(8, np.float32), np.int32(3)])
    np.testing.assert_array_equal(out[1], [2, 9, 0, 9, 9, 9, 9, 9])


@clpy.kernel
def reduce(x: Global[float64], out: Global[float64]):
    lid = clpy.get_local_id(0)
    tmp = clpy.local_array(float64, 16)
    tmp[lid] = x[clpy.get_global_id(0)]
    clpy.barrier()
    s = 8
    while s > 0:
        if lid < s:
            tmp[lid] += tmp[lid + s]
        clpy.barrier()
        s //= 2
    if lid == 0:
        out[clpy.get_group_id(0)] = tmp[0]


@pytest.mark.parametrize("max_lanes", [16, 48, 1 << 18])
def test_batches_give_the_same_result(max_lanes: int) -> None:
    x = np.arange(160, dtype=np.float64)
    out = _run(reduce, 160, 16, [x, np.zeros(10)], max_lanes=max_lanes)[1]
    np.testing.assert_array_equal(out, x.reshape(10, 16).sum(1))


def test_bad_launch_arguments() -> None:
    fn = reduce.specialize().function
    with pytest.raises(ValueError, match="differ in length"):
        sim.launch(fn, (64,), (16, 1), [np.zeros(64), np.zeros(4)])
    with pytest.raises(TypeError, match="arguments"):
        sim.launch(fn, (16,), (16,), [np.zeros(16)])
    with pytest.raises(ValueError, match="checks"):
        sim.config(checks={"nonsense"})


@clpy.kernel
def aliasing(x: Global[float32], y: Global[float32], z: Global[float32]):
    i = clpy.get_global_id(0)
    lid = clpy.get_local_id(0)
    a = x[i]
    b = a
    if lid < 4:
        a += 1.0
    c = x[i] * 2.0
    if lid >= 2:
        c += a
        c *= 3.0
    y[i] = a + c
    z[i] = b


def test_in_place_updates_never_touch_aliases() -> None:
    x = np.arange(16, dtype=np.float32)
    out = _run(aliasing, 16, 8, [x, np.zeros(16, np.float32), np.zeros(16, np.float32)])
    lid = np.arange(16) % 8
    a = x + (lid < 4)
    c = np.where(lid >= 2, (x * 2 + a) * 3, x * 2)
    np.testing.assert_array_equal(out[1], a + c)
    np.testing.assert_array_equal(out[2], x)


@clpy.kernel
def nonuniform_ids(out: Global[int32]):
    i = clpy.get_global_linear_id()
    out[4 * i] = clpy.get_local_size(0) * 100 + clpy.get_local_size(1)
    out[4 * i + 1] = clpy.get_enqueued_local_size(0) * 100 + clpy.get_num_groups(0)
    out[4 * i + 2] = clpy.get_local_linear_id()
    out[4 * i + 3] = clpy.get_group_id(0) * 100 + clpy.get_group_id(1)


def test_non_uniform_work_groups_ids() -> None:
    g, l_ = (10, 7), (4, 3)
    out = np.full(4 * 70, -1, np.int32)
    sim.launch(nonuniform_ids.specialize().function, g, l_, [out])
    o = out.reshape(7, 10, 4)  # [y][x]
    for y in range(7):
        for x in range(10):
            lsx = 4 if x < 8 else 2
            lsy = 3 if y < 6 else 1
            assert o[y, x, 0] == lsx * 100 + lsy
            assert o[y, x, 1] == 4 * 100 + 3
            assert o[y, x, 2] == (x % 4) + (y % 3) * lsx
            assert o[y, x, 3] == (x // 4) * 100 + (y // 3)


@clpy.kernel
def nonuniform_sum(x: Global[float64], out: Global[float64]):
    lid = clpy.get_local_id(0)
    n = clpy.get_local_size(0)
    tmp = clpy.local_array(float64, 16)
    tmp[lid] = x[clpy.get_global_id(0)]
    clpy.barrier()
    if lid == 0:
        s = 0.0
        for k in range(n):
            s += tmp[k]
        out[clpy.get_group_id(0)] = s


def test_non_uniform_last_group_is_smaller_and_complete() -> None:
    x = np.arange(37, dtype=np.float64)
    out = _run(nonuniform_sum, 37, 16, [x, np.zeros(3)])[1]
    np.testing.assert_array_equal(out, [x[:16].sum(), x[16:32].sum(), x[32:].sum()])


def test_simulator_needs_no_opencl_driver() -> None:
    import subprocess
    import sys

    code = ("import sys; sys.modules['pyopencl'] = None\n"
            "import numpy as np, clpy, clpy_sim\n"
            "from tests.test_sim_semantics import wrap\n"
            "x = np.arange(8, dtype=np.int32); out = np.zeros(40, np.int32)\n"
            "u = np.arange(8, dtype=np.uint32)\n"
            "clpy.sim.launch(wrap.specialize().function, (8,), (4,), [x, out, u])\n"
            "assert out[0] == 2147483647 and sys.modules['pyopencl'] is None\n")
    import os

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": os.pathsep.join(
                           p for p in (root, os.environ.get("PYTHONPATH")) if p)}, timeout=120)
    assert r.returncode == 0, r.stderr


@clpy.kernel
def runs_changed_in_place(src: Global[int32], y: Global[int32]):
    gid = clpy.get_global_id(0)
    k = gid + 1
    a = src[k]
    if clpy.get_local_id(0) < 8:
        k += 10
    k += 2
    y[gid] = a * 1000 + src[k]


def test_index_runs_are_forgotten_when_updated_in_place() -> None:
    src = np.arange(160, dtype=np.int32) * 3
    out = _run(runs_changed_in_place, 128, 64, [src, np.zeros(128, np.int32)])[1]
    gid = np.arange(128)
    k = gid + 1 + np.where(gid % 64 < 8, 10, 0) + 2
    np.testing.assert_array_equal(out, (gid + 1) * 3 * 1000 + k * 3)
