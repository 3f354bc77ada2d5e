"""OpenCL vector names that collide with the NumPy-style scalar aliases live in clpy.vectors."""

from __future__ import annotations

import numpy as np
import pytest

import clpy
from clpy import Global, float32
from clpy.vectors import float16 as float16v
from clpy.vectors import int8 as int8v


def test_aliases_stay_scalars_and_vectors_are_reachable() -> None:
    assert clpy.float16 is clpy.half and clpy.int8 is clpy.char
    assert float16v is clpy.vector(clpy.float32, 16) and float16v.n == 16
    assert int8v is clpy.vector(clpy.int32, 8) and clpy.vectors.uint16.elem is clpy.uint
    assert clpy.vectors.float4 is clpy.float4
    with pytest.raises(ValueError, match="2, 3, 4, 8 or 16"):
        clpy.vector(clpy.float32, 5)


@clpy.kernel
def wide(x: Global[float16v], out: Global[float32]):
    v = x[0] + clpy.vectors.float16(1.0)
    out[0] = v.sF + clpy.dot(v.lo.lo.lo, v.hi.hi.hi)


def test_sixteen_lane_vectors_in_a_kernel() -> None:
    src = wide.source_for("opencl-c-1.2", line_directives=False)
    assert "__global const float16* x" in src and "(float16)(1.0f)" in src
    x = np.arange(16, dtype=np.float32).reshape(1, 16)
    out = np.zeros(1, np.float32)
    wide[1, 1](x, out, device="sim")
    v = x[0] + 1
    assert out[0] == v[15] + v[0] * v[14] + v[1] * v[15]


@clpy.kernel
def bad_sat(x: Global[float32]):
    x[0] = clpy.convert_float_sat(x[1])


def test_missing_conversion_names_the_rule() -> None:
    with pytest.raises(clpy.UndefinedNameError, match="_sat is only valid for conversions to "
                       "integer types"):
        bad_sat.source  # noqa: B018
    with pytest.raises(AttributeError, match="convert_<type>"):
        clpy.convert_int5  # noqa: B018


@clpy.kernel
def uniform_vector_load(x: Global[clpy.float4], out: Global[clpy.float4]):
    i = clpy.get_global_id(0)
    out[i] = x[0] + clpy.float4(1.0) + x[i].wzyx   # x[0]: one address for every work-item


def test_uniform_vector_load_broadcasts_over_work_items() -> None:
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    out = np.zeros_like(x)
    uniform_vector_load[8, 4](x, out, device="sim")
    np.testing.assert_array_equal(out, x[0] + 1 + x[:, ::-1])


@clpy.kernel
def vec_steps(x: Global[clpy.float3], out: Global[clpy.int32]):
    a = clpy.private_array(float32, clpy.vec_step(clpy.float4) * 2)   # sizes an array
    a[7] = 1.0
    out[0] = clpy.vec_step(x[0]) + clpy.vec_step(float32) + clpy.vec_step(clpy.int2)


def test_vec_step_takes_values_and_types_and_folds() -> None:
    # spec §1.13.12: 1 for scalars, n for n-vectors, 4 for 3-vectors; like sizeof, a constant
    src = vec_steps.source_for("opencl-c-1.2", line_directives=False)
    assert "float a[8];" in src and "out[0] = 7;" in src
    out = np.zeros(1, np.int32)
    vec_steps[1, 1](np.zeros((1, 4), np.float32), out, device="sim")
    assert out[0] == 7


@clpy.kernel
def vec_step_bad(out: Global[clpy.int32]):
    out[0] = clpy.vec_step(clpy.Global)


def test_vec_step_rejects_non_types() -> None:
    with pytest.raises(clpy.KernelTypeError, match="vec_step takes a value or a scalar/vector"):
        vec_step_bad.source  # noqa: B018


@clpy.struct
class _Pair:
    a: float32
    b: clpy.int32


@clpy.kernel
def private_structs(out: Global[float32]):
    ps = clpy.private_array(_Pair, 2)
    ps[0] = _Pair(1.0, 2)
    out[0] = ps[0].a


def test_private_struct_arrays_are_a_clear_simulator_limit() -> None:
    import clpy.sim

    assert "_Pair ps[2];" in private_structs.source_for("opencl-c-1.2", line_directives=False)
    with pytest.raises(clpy.sim.SimulationError, match="unsupported.*private array `ps`"):
        private_structs[1, 1](np.zeros(1, np.float32), device="sim")
