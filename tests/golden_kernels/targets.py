"""Target profiles: the same kernel for OpenCL C 1.2, 2.0 and 3.0, extension pragmas, and
``#line`` directives back to the Python file."""

from __future__ import annotations

import clpy
from clpy import Global, double, float32, int32

from . import case


@clpy.kernel
def tgt_saxpy(a: float32, x: Global[float32], y: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    if i < n:
        y[i] = a * x[i] + y[i]


@clpy.kernel
def tgt_barrier_fp64(x: Global[double], tmp: clpy.Local[double]):
    lid = clpy.get_local_id(0)
    tmp[lid] = x[clpy.get_global_id(0)] * 0.5
    clpy.work_group_barrier(clpy.CLK_LOCAL_MEM_FENCE)
    x[clpy.get_global_id(0)] = tmp[(lid + 1) % clpy.get_local_size(0)]


@case("target_saxpy_cl12", target="opencl-c-1.2")
def _saxpy12() -> object:
    return tgt_saxpy


@case("target_saxpy_cl30", target="opencl-c-3.0")
def _saxpy30() -> object:
    return tgt_saxpy


@case("target_saxpy_line_directives", line_directives=True)
def _saxpy_lines() -> object:
    return tgt_saxpy


@case("target_barrier_fp64_cl12", target="opencl-c-1.2")
def _bar12() -> object:
    return tgt_barrier_fp64


@case("target_barrier_fp64_cl20")
def _bar20() -> object:
    return tgt_barrier_fp64


@case("target_barrier_fp64_cl30", target="opencl-c-3.0+__opencl_c_fp64")
def _bar30() -> object:
    return tgt_barrier_fp64
