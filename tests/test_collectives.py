"""Work-group functions (spec §1.13.15): emission, lowering, and PoCL runs against NumPy.

PoCL has no native work-group collectives, so every run here exercises the lowered code
(clpy/emit/lower_collectives.py). Integers must match exactly; floating-point within a
tolerance (combination order unspecified by the spec, fixed by the lowering).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import clpy
from clpy import Global, int32
from clpy.emit.lowering import without_features
from clpy.errors import FeatureError, KernelTypeError
from tests.test_collectives_util import cl_target, per_group, run_cl

WG = "__opencl_c_work_group_collective_functions"


@clpy.kernel
def spec_scan(x: Global[int32], inc: Global[int32], exc: Global[int32]):
    i = clpy.get_global_id(0)
    inc[i] = clpy.work_group_scan_inclusive_add(x[i])
    exc[i] = clpy.work_group_scan_exclusive_add(x[i])


@clpy.kernel
def every_collective(x, out, flags, bx: int32, by: int32, bz: int32):
    g = (clpy.get_global_id(2) * clpy.get_global_size(1) + clpy.get_global_id(1)) * \
        clpy.get_global_size(0) + clpy.get_global_id(0)
    n = clpy.get_global_size(0) * clpy.get_global_size(1) * clpy.get_global_size(2)
    v = x[g]
    out[g] = clpy.work_group_reduce_add(v)
    out[n + g] = clpy.work_group_reduce_min(v)
    out[2 * n + g] = clpy.work_group_reduce_max(v)
    out[3 * n + g] = clpy.work_group_scan_inclusive_add(v)
    out[4 * n + g] = clpy.work_group_scan_inclusive_min(v)
    out[5 * n + g] = clpy.work_group_scan_inclusive_max(v)
    out[6 * n + g] = clpy.work_group_scan_exclusive_add(v)
    out[7 * n + g] = clpy.work_group_scan_exclusive_min(v)
    out[8 * n + g] = clpy.work_group_scan_exclusive_max(v)
    out[9 * n + g] = clpy.work_group_broadcast(v, bx, by, bz)
    lin = (bz * clpy.get_local_size(1) + by) * clpy.get_local_size(0) + bx
    out[10 * n + g] = clpy.work_group_broadcast(v, lin)
    flags[g] = clpy.work_group_all(v > 0)
    flags[n + g] = clpy.work_group_any(v > 0)


def _ident(op: str, dt: np.dtype) -> object:
    if dt.kind == "f":
        return {"add": 0, "min": np.inf, "max": -np.inf}[op]
    info = np.iinfo(dt)
    return {"add": 0, "min": info.max, "max": info.min}[op]


def _reference(x: np.ndarray, gsize: tuple[int, ...], lsize: tuple[int, ...],
               b: tuple[int, int, int]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    dt = x.dtype
    blin = (b[2] * (lsize[1] if len(lsize) > 1 else 1) + b[1]) * lsize[0] + b[0]
    ops = {"add": np.add, "min": np.minimum, "max": np.maximum}
    outs: list[np.ndarray] = []
    for op in ("add", "min", "max"):
        f = ops[op]
        outs.append(per_group(x, gsize, lsize, lambda v, f=f: np.full_like(
            v, f.reduce(v, dtype=dt))))
    for op in ("add", "min", "max"):
        f = ops[op]
        outs.append(per_group(x, gsize, lsize, lambda v, f=f: f.accumulate(v, dtype=dt)))
    for op in ("add", "min", "max"):
        f, e = ops[op], _ident(op, dt)
        outs.append(per_group(x, gsize, lsize, lambda v, f=f, e=e: np.concatenate(
            [np.array([e], dt), f.accumulate(v, dtype=dt)[:-1]])))
    bc = per_group(x, gsize, lsize, lambda v: np.full_like(v, v[blin]))
    outs += [bc, bc]
    pos = (x > 0).astype(np.int32)
    flags = [per_group(pos, gsize, lsize, lambda v: np.full_like(v, int(v.all()))),
             per_group(pos, gsize, lsize, lambda v: np.full_like(v, int(v.any())))]
    return outs, flags


SHAPES = [((8,), (8,)), ((64,), (1,)), ((21,), (7,)), ((200,), (100,)), ((256,), (64,)),
          ((12, 6), (4, 3)), ((10, 6, 10), (2, 3, 5))]
TYPES = [np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64]


def test_spec_example_pocl(cl_device, cl_context, cl_queue):
    """The spec's worked example (§1.13.15): [3 1 7 0 4 1 6 3] in one group of 8."""
    x = np.array([3, 1, 7, 0, 4, 1, 6, 3], np.int32)
    z = np.zeros(8, np.int32)
    for tgt in (cl_target(cl_device), without_features(cl_target(cl_device, "opencl-c-3.0"),
                                                       WG)):
        _, inc, exc = run_cl(cl_context, cl_queue, spec_scan.specialize(), tgt, (8,), (8,),
                             x, z, z)
        assert inc.tolist() == [3, 4, 11, 11, 15, 16, 22, 25]
        assert exc.tolist() == [0, 3, 4, 11, 11, 15, 16, 22]


@pytest.mark.parametrize("dtype", TYPES, ids=lambda d: np.dtype(d).name)
def test_every_collective_pocl(cl_device, cl_context, cl_queue, dtype):
    """Lowered (OpenCL C 1.2 target) on the test device."""
    _check_every_collective(cl_context, cl_queue, cl_target(cl_device), dtype)


@pytest.mark.parametrize("dtype", TYPES, ids=lambda d: np.dtype(d).name)
def test_every_collective_device_target(cl_device, cl_context, cl_queue, dtype):
    """With the runtime's own target for the device: native work_group_* calls where the
    device has them (NVIDIA under -cl-std=CL2.0), lowered where not (PoCL)."""
    tgt = clpy.get_device(cl_device).target
    tgt = replace(tgt, info={**tgt.info, "max_work_group_size": cl_device.max_work_group_size,
                             "local_mem_size": cl_device.local_mem_size})
    _check_every_collective(cl_context, cl_queue, tgt, dtype)


def test_spec_example_device_target(cl_device, cl_context, cl_queue):
    x = np.array([3, 1, 7, 0, 4, 1, 6, 3], np.int32)
    z = np.zeros(8, np.int32)
    tgt = clpy.get_device(cl_device).target
    _, inc, exc = run_cl(cl_context, cl_queue, spec_scan.specialize(), tgt, (8,), (8,), x, z, z)
    assert inc.tolist() == [3, 4, 11, 11, 15, 16, 22, 25]
    assert exc.tolist() == [0, 3, 4, 11, 11, 15, 16, 22]


def _check_every_collective(cl_context, cl_queue, target, dtype):
    dt = np.dtype(dtype)
    T = clpy.types.catalog.scalar_for_dtype(dt)
    spec = every_collective.specialize(x=Global[T], out=Global[T], flags=Global[int32])
    rng = np.random.default_rng(7)
    for gsize, lsize in SHAPES:
        n = int(np.prod(gsize))
        if dt.kind == "f":
            x = rng.standard_normal(n).astype(dt)
        elif dt.kind == "u":
            x = rng.integers(0, np.iinfo(dt).max, n, dtype=dt, endpoint=True)
        else:
            x = rng.integers(np.iinfo(dt).min, np.iinfo(dt).max, n, dtype=dt, endpoint=True)
        if n % 3 == 0 and dt.kind != "u":
            x = np.abs(x) + 1  # a case where work_group_all is true
        ls3 = tuple(lsize) + (1,) * (3 - len(lsize))
        b = (ls3[0] - 1, ls3[1] // 2, ls3[2] - 1)
        out = np.zeros(11 * n, dt)
        flags = np.zeros(2 * n, np.int32)
        _, got, gflags = run_cl(cl_context, cl_queue, spec, target, gsize, lsize, x, out,
                                flags, *b)
        want, wflags = _reference(x, gsize, lsize, b)
        for k, w in enumerate(want):
            g = got[k * n:(k + 1) * n]
            if dt.kind == "f" and k in (0, 3, 6):
                tol = 8 * np.finfo(dt).eps * np.prod(lsize) * np.abs(x).max()
                np.testing.assert_allclose(g, w, atol=tol, err_msg=f"output {k} {gsize}")
            else:
                np.testing.assert_array_equal(g, w, err_msg=f"output {k} {gsize} {lsize}")
        for k, w in enumerate(wflags):
            np.testing.assert_array_equal(gflags[k * n:(k + 1) * n], w)


def test_native_on_20_lowered_on_12():
    spec = spec_scan.specialize()
    native = spec.source_for("opencl-c-2.0")
    assert "work_group_scan_inclusive_add(x[i])" in native
    assert "clpy_scratch" not in native
    lowered = spec.source_for("opencl-c-1.2")
    assert "clpy_scan_inclusive_add_int(" in lowered
    assert "__local uint clpy_scratch[1057];" in lowered  # 1024 + 32 + 1 slots
    forced = spec.source_for(without_features("opencl-c-2.0", WG))
    assert "clpy_scan_exclusive_add_int(x[i], 0, " in forced
    info = replace(clpy.emit.targets.target_of("opencl-c-2.0"), info={"lower": {WG}},
                   name="opencl-c-2.0/lowered")
    assert "clpy_scan" in spec.source_for(info)


def test_scratch_sized_by_device_limit():
    # Specialization.source_for caches by Target equality, which ignores ``info``: new names.
    t = replace(clpy.emit.targets.target_of("opencl-c-1.2"), info={"max_work_group_size": 256},
                name="opencl-c-1.2/wg256")
    src = every_collective.specialize(x=Global[clpy.double], out=Global[clpy.double],
                                      flags=Global[int32]).source_for(t)
    assert "__local ulong clpy_scratch[273];" in src  # 256 + 16 + 1
    small = replace(t, info={"max_work_group_size": 256, "local_mem_size": 1024},
                    name="opencl-c-1.2/wg256/1k")
    with pytest.raises(FeatureError, match="local memory"):
        every_collective.specialize(x=Global[clpy.double], out=Global[clpy.double],
                                    flags=Global[int32]).source_for(small)


def test_half_emits_with_fp16_pragma():
    spec = every_collective.specialize(x=Global[clpy.half], out=Global[clpy.half],
                                       flags=Global[int32])
    src = spec.source_for("opencl-c-1.2+cl_khr_fp16")
    assert "half clpy_reduce_min_half(half x" in src
    assert "clpy_scan_exclusive_min_half(v, ((half)INFINITY)" in src
    assert "work_group_reduce_add(v)" in spec.source_for("opencl-c-2.0")


@clpy.func
def helper_sum(v: int32) -> int32:
    return clpy.work_group_reduce_add(v)


@clpy.kernel
def via_func(x: Global[int32]):
    i = clpy.get_global_id(0)
    x[i] = helper_sum(x[i])


def test_lowered_collective_in_func_is_a_clear_error():
    assert "work_group_reduce_add(v)" in via_func.source_for("opencl-c-2.0")
    with pytest.raises(FeatureError, match="from the kernel body"):
        via_func.source_for("opencl-c-1.2")


@clpy.kernel
def divergent(x: Global[int32]):
    i = clpy.get_local_id(0)
    if i < 4:
        x[i] = clpy.work_group_reduce_add(x[i])


@clpy.kernel
def divergent_via_var(x: Global[int32], n: int32):
    g = clpy.get_global_id(0)
    k = g * 2
    while k < n:
        x[g] = clpy.work_group_broadcast(x[g], 0)
        k += 1


@clpy.kernel
def early_exit(x: Global[int32], n: int32):
    g = clpy.get_global_id(0)
    if g >= n:
        return
    x[g] = clpy.work_group_reduce_max(x[g])


@clpy.kernel
def divergent_func(x: Global[int32]):
    i = clpy.get_global_id(0)
    if x[i] > 0:
        x[i] = helper_sum(x[i])


@clpy.kernel
def uniform_ok(x: Global[int32], n: int32):
    g = clpy.get_global_id(0)
    s = clpy.work_group_reduce_add(x[g])
    if n > 3:
        s = clpy.work_group_reduce_max(s)
    for _k in range(n):
        s += clpy.work_group_broadcast(s, 0)
    if s > 10:  # s is a reduction result: uniform
        s = clpy.work_group_reduce_min(s)
    x[g] = s


@pytest.mark.parametrize("k", [divergent, divergent_via_var, early_exit, divergent_func],
                         ids=lambda k: k.__name__)
def test_divergent_collective_warned(k):
    # legal when the host makes the condition uniform at run time: a warning, not an error
    fresh = clpy.kernel(k.py_function)
    with pytest.warns(clpy.UniformityWarning, match="varies with the work-item id"):
        assert "work_group_" in fresh.source_for("opencl-c-2.0")


@clpy.kernel
def provably_divergent(x: Global[int32]):
    lid = clpy.get_local_id(0)
    if lid == 0:
        x[lid] = clpy.work_group_reduce_add(x[lid])


def test_provably_divergent_collective_rejected():
    with pytest.raises(KernelTypeError, match="holds for only one work-item"):
        provably_divergent.source_for("opencl-c-2.0")


def test_uniform_branches_accepted():
    assert "work_group_reduce_min(s)" in uniform_ok.source_for("opencl-c-2.0")


@clpy.kernel
def sub_group_native(x: Global[int32], out: Global[int32]):
    i = clpy.get_global_id(0)
    out[i] = clpy.sub_group_reduce_add(x[i]) + clpy.get_sub_group_size()


def test_sub_groups_from_the_20_extension_enable_its_pragma():
    # A 2.0 device with cl_khr_subgroups: native calls under the extension's pragma.
    src = sub_group_native.source_for("opencl-c-2.0+cl_khr_subgroups", line_directives=False)
    assert "#pragma OPENCL EXTENSION cl_khr_subgroups : enable" in src
    assert "sub_group_reduce_add(x[i]) + (int)get_sub_group_size()" in src
    lowered = sub_group_native.source_for("opencl-c-2.0", line_directives=False)
    assert "cl_khr_subgroups" not in lowered and "clpy_scratch" in lowered
