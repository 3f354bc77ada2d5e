"""Legal OpenCL that clpy used to reject (issue 12 part 4): fence flags combined in the
kernel, constants held in locals, and kernel factories whose annotations name the factory's
arguments. Run on the simulator and on PoCL."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, Local, float32, int32
from clpy.errors import ConstantError
from clpy.runtime.devices import Device
from clpy_sim import SimulationError

# ----------------------------------------------------------------------------- fence flags


@clpy.kernel
def reverse_in_groups(x: Global[float32], y: Global[float32], tmp: Local[float32]):
    i = clpy.get_global_id(0)
    lid = clpy.get_local_id(0)
    n = clpy.get_local_size(0)
    both = clpy.CLK_LOCAL_MEM_FENCE | clpy.CLK_GLOBAL_MEM_FENCE
    tmp[lid] = x[i]
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE | clpy.CLK_GLOBAL_MEM_FENCE)
    v = tmp[n - 1 - lid]
    clpy.barrier(both)
    tmp[lid] = v * 2.0
    clpy.mem_fence(both)
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    y[i] = tmp[lid]


@clpy.kernel
def wg_barrier_flags(x: Global[float32], y: Global[float32], tmp: Local[float32]):
    i = clpy.get_global_id(0)
    lid = clpy.get_local_id(0)
    tmp[lid] = x[i]
    clpy.work_group_barrier(clpy.CLK_LOCAL_MEM_FENCE | clpy.CLK_GLOBAL_MEM_FENCE)
    y[i] = tmp[(lid + 1) % clpy.get_local_size(0)]


def test_combined_fence_flags_keep_their_names() -> None:
    text = reverse_in_groups.source_for("opencl-c-1.2")
    assert text.count("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);") == 2
    assert "mem_fence(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);" in text
    assert "work_group_barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)" in (
        wg_barrier_flags.source_for("opencl-c-2.0")
    )


def test_combined_fence_flags_run(dev: Device) -> None:
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    reverse_in_groups[64, 16](x, y, clpy.LocalMemory(16), device=dev)
    np.testing.assert_array_equal(y, 2 * x.reshape(4, 16)[:, ::-1].ravel())


def test_work_group_barrier_flags_run_on_the_simulator() -> None:
    x = np.arange(32, dtype=np.float32)
    y = np.zeros(32, np.float32)
    wg_barrier_flags[32, 8](x, y, clpy.LocalMemory(8), device="sim")
    np.testing.assert_array_equal(y, np.roll(x.reshape(4, 8), -1, axis=1).ravel())


def test_a_local_assigned_twice_is_not_a_constant() -> None:
    @clpy.kernel
    def twice(x: Global[float32]):
        flags = clpy.CLK_LOCAL_MEM_FENCE
        if x[0] > 0:
            flags = clpy.CLK_GLOBAL_MEM_FENCE
        clpy.barrier(flags)

    with pytest.raises(ConstantError, match="argument 1 of barrier must be a compile-time"):
        twice.specialize()


def test_other_operators_on_named_constants_fold() -> None:
    @clpy.kernel
    def masked(x: Global[int32]):
        clpy.barrier((clpy.CLK_LOCAL_MEM_FENCE | clpy.CLK_GLOBAL_MEM_FENCE) & 1)
        x[0] = clpy.CLK_GLOBAL_MEM_FENCE ^ 1

    text = masked.source_for("opencl-c-1.2")
    assert "barrier(((CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE) & 1));" in text
    x = np.zeros(1, np.int32)
    masked[1](x, device="sim")
    assert x[0] == 2 ^ 1  # CLK_GLOBAL_MEM_FENCE is 2 (spec §1.13.8)


# ----------------------------------------------------------------------------- factories


def make_scale(T: Any) -> Any:
    @clpy.func
    def twice(v: T) -> T:
        return v + v

    @clpy.kernel
    def scale(x: Global[T], y: Global[T], k: T):
        i = clpy.get_global_id(0)
        acc: T = 0
        acc += twice(x[i]) * k
        y[i] = acc

    return scale


@pytest.mark.parametrize("T, dtype", [(float32, np.float32), (clpy.double, np.float64),
                                      (int32, np.int32), (clpy.uchar, np.uint8)])
def test_kernel_factories_see_their_arguments(dev: Device, T: Any, dtype: Any) -> None:
    k = make_scale(T)
    x = np.arange(16).astype(dtype)
    y = np.zeros_like(x)
    k[16](x, y, 3, device=dev)
    np.testing.assert_array_equal(y, (x * 2 * 3).astype(dtype))
    assert f"__global {T.cl_name}* y" in k.source_for("opencl-c-2.0")


def test_factory_locals_are_a_snapshot_and_closures_win() -> None:
    def make(T: Any) -> Any:
        @clpy.kernel
        def k(x: Global[T]):
            x[clpy.get_global_id(0)] = 1

        return k

    k32, k64 = make(float32), make(clpy.double)
    assert "__global float* x" in k32.source_for("opencl-c-2.0")
    assert "__global double* x" in k64.source_for("opencl-c-2.0")


# ----------------------------------------------------------------------------- barrier in if

LANES = 16


@clpy.kernel
def csr_vector(val: Global[float32], cols: Global[int32], rowptr: Global[int32],
               x: Global[float32], out: Global[float32], dim: int32, tmp: Local[float32]):
    # SHOC's CSR-vector SpMV: LANES work-items per row, `if (myRow < dim)` around barriers
    lid = clpy.get_local_id(0)
    lane = lid % LANES
    row = clpy.get_global_id(0) // LANES
    if row < dim:
        s = float32(0)
        for j in range(rowptr[row] + lane, rowptr[row + 1], LANES):
            s += val[j] * x[cols[j]]
        tmp[lid] = s
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
        off = LANES // 2
        while off > 0:
            if lane < off:
                tmp[lid] += tmp[lid + off]
            clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
            off //= 2
        if lane == 0:
            out[row] = tmp[lid]


def _csr(dim: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(5)
    dense = rng.standard_normal((dim, dim)).astype(np.float32)
    dense[rng.random((dim, dim)) < 0.7] = 0
    rows, cols = np.nonzero(dense)
    rowptr = np.searchsorted(rows, np.arange(dim + 1)).astype(np.int32)
    return dense, dense[rows, cols], cols.astype(np.int32), rowptr


def test_barrier_under_a_uniform_at_run_time_condition_runs(dev: Device) -> None:
    dim = 24
    dense, val, cols, rowptr = _csr(dim)
    x = np.linspace(-1, 1, dim).astype(np.float32)
    out = np.zeros(dim, np.float32)
    k = clpy.kernel(csr_vector.py_function)  # a fresh kernel: its warning is not yet given
    with pytest.warns(clpy.UniformityWarning, match=r"line \d+ that varies with the work-item"):
        k[dim * LANES, LANES](val, cols, rowptr, x, out, dim, clpy.LocalMemory(LANES),
                              device=dev)
    np.testing.assert_allclose(out, dense @ x, rtol=1e-5, atol=1e-5)


def test_uniformity_warning_once_per_line_and_can_be_an_error() -> None:
    src = csr_vector.py_function
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("default")
        clpy.kernel(src).specialize()
        clpy.kernel(src).specialize()  # same module and line: not repeated
    lines = {(w.filename, w.lineno) for w in seen if w.category is clpy.UniformityWarning}
    assert len(lines) == len([w for w in seen if w.category is clpy.UniformityWarning])
    assert all(f == __file__ for f, _ in lines)
    with warnings.catch_warnings():
        warnings.simplefilter("error", clpy.UniformityWarning)
        with pytest.raises(clpy.UniformityWarning):
            clpy.kernel(src).specialize()


def test_the_simulator_checks_the_condition_at_run_time() -> None:
    dim = 3
    _, val, cols, rowptr = _csr(dim)
    x = np.ones(dim, np.float32)
    out = np.zeros(dim, np.float32)
    # two rows per work-group and 4 rows launched for 3: the last group diverges
    with pytest.warns(clpy.UniformityWarning), pytest.raises(SimulationError, match="barrier"):
        clpy.kernel(csr_vector.py_function)[4 * LANES, 2 * LANES](
            val, cols, rowptr, x, out, dim, clpy.LocalMemory(2 * LANES), device="sim")
    np.testing.assert_array_equal(out, 0)  # a failed launch leaves the arrays untouched


def test_provably_divergent_barrier_is_an_error() -> None:
    @clpy.kernel
    def only_first(x: Global[float32]):
        lid = clpy.get_local_id(0)
        if lid == 0:
            clpy.barrier()
        x[lid] = 1.0

    with pytest.raises(clpy.KernelTypeError, match="holds for only one work-item"):
        only_first.specialize()
