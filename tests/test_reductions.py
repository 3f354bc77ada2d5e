"""Reductions/scans with any operator and user-defined reductions (OpenMP 5.1 §2.21.5),
lowered and run on PoCL, compared with NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import clpy
from clpy import Global, float2, float32, int32
from clpy.errors import KernelTypeError
from tests.test_collectives_util import cl_target, per_group, run_cl


@clpy.struct
class ValIdx:
    val: float32
    idx: int32


@clpy.struct
class MinMax:
    lo: float32
    hi: float32


@clpy.reduction(identity=ValIdx(-np.inf, 2**31 - 1))
def argmax(a: ValIdx, b: ValIdx) -> ValIdx:
    """Largest value; ties go to the lowest index (so the combiner is commutative)."""
    return a if a.val > b.val or (a.val == b.val and a.idx < b.idx) else b


@clpy.reduction(identity=(1.0, 0.0))
def cmul(a: float2, b: float2) -> float2:
    return float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x)


@clpy.reduction(identity=MinMax(np.inf, -np.inf))
def minmax(a: MinMax, b: MinMax) -> MinMax:
    return MinMax(min(a.lo, b.lo), max(a.hi, b.hi))


@clpy.kernel
def user_reductions(x: Global[float32], am: Global[ValIdx], c: Global[float2],
                    mm: Global[MinMax], mm_ex: Global[MinMax]):
    i = clpy.get_global_id(0)
    v = x[i]
    am[i] = clpy.work_group_reduce(ValIdx(v, int32(clpy.get_local_id(0))), argmax)
    c[i] = clpy.work_group_scan_inclusive(c[i], cmul)
    mm[i] = clpy.work_group_reduce(MinMax(v, v), minmax)
    mm_ex[i] = clpy.work_group_scan_exclusive(MinMax(v, v), minmax)


@clpy.kernel
def int_ops(x: Global[int32], out: Global[int32]):
    i = clpy.get_global_id(0)
    n = clpy.get_global_size(0)
    v = x[i]
    out[i] = clpy.work_group_reduce(v, "*")
    out[n + i] = clpy.work_group_reduce(v, "&")
    out[2 * n + i] = clpy.work_group_scan_inclusive(v, "|")
    out[3 * n + i] = clpy.work_group_scan_exclusive(v, "^")
    out[4 * n + i] = clpy.work_group_reduce(v, "&&")
    out[5 * n + i] = clpy.work_group_scan_inclusive(v, "||")
    out[6 * n + i] = clpy.work_group_reduce(v, "-")
    out[7 * n + i] = clpy.work_group_scan_exclusive(v, "*")


SHAPES = [((8,), (8,)), ((60,), (12,)), ((256,), (128,)), ((99,), (33,))]


@pytest.mark.parametrize("gsize,lsize", SHAPES)
def test_int_operators_pocl(cl_device, cl_context, cl_queue, gsize, lsize):
    n = gsize[0]
    rng = np.random.default_rng(3)
    x = rng.integers(-5, 6, n).astype(np.int32)
    x[::7] = 0
    _, got = run_cl(cl_context, cl_queue, int_ops.specialize(), cl_target(cl_device), gsize,
                    lsize, x, np.zeros(8 * n, np.int32))
    i32 = np.int32

    def excl(f, e):
        return lambda v: np.concatenate([[e], f.accumulate(v, dtype=i32)[:-1]]).astype(i32)

    want = [
        per_group(x, gsize, lsize, lambda v: np.full_like(v, np.multiply.reduce(v, dtype=i32))),
        per_group(x, gsize, lsize, lambda v: np.full_like(v, np.bitwise_and.reduce(v))),
        per_group(x, gsize, lsize, lambda v: np.bitwise_or.accumulate(v)),
        per_group(x, gsize, lsize, excl(np.bitwise_xor, 0)),
        per_group(x, gsize, lsize, lambda v: np.full_like(v, int(np.all(v != 0)))),
        per_group(x, gsize, lsize, lambda v: np.logical_or.accumulate(v != 0).astype(i32)),
        per_group(x, gsize, lsize, lambda v: np.full_like(v, v.sum(dtype=i32))),
        per_group(x, gsize, lsize, excl(np.multiply, 1)),
    ]
    for k, w in enumerate(want):
        np.testing.assert_array_equal(got[k * n:(k + 1) * n], w, err_msg=f"output {k}")


@pytest.mark.parametrize("gsize,lsize", SHAPES)
def test_user_reductions_pocl(cl_device, cl_context, cl_queue, gsize, lsize):
    n = gsize[0]
    rng = np.random.default_rng(5)
    x = rng.integers(-3, 4, n).astype(np.float32)  # many ties for argmax
    ang = rng.uniform(-0.3, 0.3, n)
    c = np.stack([np.cos(ang), np.sin(ang)], axis=1).astype(np.float32)
    am = np.zeros(n, ValIdx.dtype)
    mm = np.zeros(n, MinMax.dtype)
    _, g_am, g_c, g_mm, g_ex = run_cl(cl_context, cl_queue, user_reductions.specialize(),
                                      cl_target(cl_device), gsize, lsize, x, am, c, mm,
                                      mm.copy())
    lid = np.arange(n) % lsize[0]
    want_idx = per_group(x, gsize, lsize, lambda v: np.full(len(v), int(np.argmax(v))))
    want_idx = want_idx.astype(np.int64)
    np.testing.assert_array_equal(g_am["idx"], want_idx)  # argmax: first maximum wins
    np.testing.assert_array_equal(g_am["val"], x[(np.arange(n) - lid) + want_idx])
    zc = c[:, 0].astype(np.complex128) + 1j * c[:, 1]
    want_c = per_group(zc, gsize, lsize, np.cumprod)
    np.testing.assert_allclose(g_c[:, 0] + 1j * g_c[:, 1], want_c, atol=1e-5 * lsize[0])
    np.testing.assert_array_equal(g_mm["lo"], per_group(x, gsize, lsize,
                                                        lambda v: np.full_like(v, v.min())))
    np.testing.assert_array_equal(g_mm["hi"], per_group(x, gsize, lsize,
                                                        lambda v: np.full_like(v, v.max())))
    lo = per_group(x, gsize, lsize, lambda v: np.concatenate(
        [[np.inf], np.minimum.accumulate(v)[:-1]]).astype(np.float32))
    np.testing.assert_array_equal(g_ex["lo"], lo)


def test_user_reduction_source_has_combiner_and_identity():
    src = user_reductions.source_for("opencl-c-2.0")
    assert "ValIdx argmax(ValIdx a, ValIdx b);" in src  # prototype before the helper
    assert "clpy_reduce_argmax_ValIdx(" in src
    assert "(MinMax){INFINITY, (-INFINITY)}" in src  # exclusive-scan identity


@clpy.kernel
def bad_op(x: Global[float32]):
    i = clpy.get_global_id(0)
    x[i] = clpy.work_group_reduce(x[i], "&")


@clpy.kernel
def unknown_op(x: Global[int32]):
    i = clpy.get_global_id(0)
    x[i] = clpy.work_group_reduce(x[i], "avg")


def test_operator_errors():
    with pytest.raises(KernelTypeError, match="integer type"):
        bad_op.source_for("opencl-c-2.0")
    with pytest.raises(KernelTypeError, match="must be a constant string"):
        unknown_op.source_for("opencl-c-2.0")


@clpy.kernel
def native_ops(x: Global[int32]):
    i = clpy.get_global_id(0)
    x[i] = clpy.work_group_reduce(x[i], "+") + clpy.sub_group_reduce(x[i], "max")


def test_plus_min_max_use_native_builtins():
    src = native_ops.source_for("opencl-c-2.0+cl_khr_subgroups+__opencl_c_subgroups")
    assert "work_group_reduce_add(x[i])" in src
    assert "sub_group_reduce_max(x[i])" in src
