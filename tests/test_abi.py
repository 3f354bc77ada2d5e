"""The parameter ABI (clpy/abi): one object per kernel parameter, used by the emitter, the
OpenCL launcher and the simulator alike; and ``clpy.DeviceArray`` for data that stays on a
device between launches."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Constant, Global, Local, float32, int32
from clpy.abi import (
    Buffer,
    LocalBuffer,
    PipeParam,
    StructValue,
    Value,
    kernel_params,
    param_class,
)
from clpy.runtime.devices import RUNTIME, Device
from clpy.sim import SimulationError


@clpy.struct
class Pair:
    a: float32
    b: int32


@clpy.kernel
def mixed(x: Global[float32], c: Constant[float32], tmp: Local[float32], n: int32,
          v: clpy.float4, s: Pair, k: clpy.constexpr, out: Global[float32]):
    i = clpy.get_global_id(0)
    tmp[clpy.get_local_id(0)] = x[i] + c[0] + v.x + s.a
    clpy.barrier()
    if i < n:
        out[i] = tmp[clpy.get_local_id(0)] * k


@clpy.kernel
def twice_plus1(x: Global[float32], y: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    if i < n:
        y[i] = x[i] * 2.0 + 1.0


@clpy.kernel
def oob(x: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    x[i] = 7.0
    x[i + n] = 1.0          # out of bounds for the last work-items


@pytest.fixture(scope="module")
def cldev(cl_device: Any) -> Device:
    return RUNTIME.find(cl_device)


def test_one_object_per_parameter_with_launch_positions() -> None:
    spec = mixed.specialize(k=3)
    params = spec.abi
    assert [type(p) for p in params] == [Buffer, Buffer, LocalBuffer, Value, Value,
                                         StructValue, Buffer]
    # constexpr k is baked into the source: `out` is the 8th launch argument
    assert [(p.name, p.index) for p in params] == [
        ("x", 0), ("c", 1), ("tmp", 2), ("n", 3), ("v", 4), ("s", 5), ("out", 7)]
    assert [p.written for p in params] == [False, False, True, False, False, False, True]
    assert spec.abi is params                      # computed once per specialization
    assert [p.splittable for p in params] == [True, True, False, False, False, False, True]


def test_the_emitter_declares_kernel_parameters_through_the_abi() -> None:
    spec = mixed.specialize(k=3)
    src = spec.source
    for p in spec.abi:
        assert p.c_declaration(p.name) in src, p
    x, c, tmp, n, v, s, out = spec.abi
    assert x.c_declaration("x") == "__global const float* x"
    assert c.c_declaration("c") == "__constant float* c"
    assert tmp.c_declaration("tmp") == "__local float* tmp"
    assert out.c_declaration("out") == "__global float* out"
    assert n.c_declaration("n") == "int n"
    assert v.c_declaration("v") == "float4 v"
    assert s.c_declaration("s") == "Pair s"


def test_header_descriptions_say_how_a_c_host_passes_each_argument() -> None:
    x, c, tmp, n, v, s, out = mixed.specialize(k=3).abi
    assert (x.header_arg().c_type, out.header_arg().c_type) == ("cl_mem", "cl_mem")
    assert "read only" in x.header_arg().note and "written" in out.header_arg().note
    assert n.header_arg().c_type == "cl_int" and n.header_arg().size == "sizeof(cl_int)"
    assert v.header_arg().c_type == "cl_float4"
    assert s.header_arg().c_type == "Pair"
    assert tmp.header_arg().c_type == "NULL" and "bytes" in tmp.header_arg().note


def test_param_class_covers_every_kernel_parameter_kind() -> None:
    assert param_class(Global[float32]) is Buffer
    assert param_class(Local[float32]) is LocalBuffer
    assert param_class(clpy.Pipe[int32]) is PipeParam
    assert param_class(Pair) is StructValue
    assert param_class(clpy.int2) is Value
    with pytest.raises(TypeError, match="not a kernel parameter type"):
        param_class(clpy.void)


def test_kernel_params_of_a_bare_function_uses_positions() -> None:
    fn = twice_plus1.specialize().function
    assert [(p.name, p.index, p.kernel) for p in kernel_params(fn)] == [
        ("x", 0, "twice_plus1"), ("y", 1, "twice_plus1"), ("n", 2, "twice_plus1")]


def test_host_checks_name_the_parameter() -> None:
    x = np.zeros(8, np.float32)
    with pytest.raises(TypeError, match=r"twice_plus1\(\): parameter 'y' \(Global\[float\]\): "
                                        "expected an array of float32"):
        twice_plus1[8, 8](x, np.zeros(8, np.int32), 8, device="sim")
    with pytest.raises(ValueError, match=r"parameter 'n' \(int\): 2147483648 is out of range"):
        twice_plus1[8, 8](x, x.copy(), 2**31, device="sim")


# ----------------------------------------------------------------------------- DeviceArray


def test_device_array_on_the_simulator_is_used_in_place() -> None:
    x = clpy.to_device(np.arange(16, dtype=np.float32), device="sim")
    y = clpy.zeros_like(x)
    assert isinstance(x, clpy.DeviceArray) and str(x.device) == "sim"
    host_y = y.sim_array
    twice_plus1[16, 8](x, y, 16, device="sim")
    assert y.sim_array is host_y                   # no copy in, no copy back
    np.testing.assert_array_equal(y.get(), np.arange(16, dtype=np.float32) * 2 + 1)
    for _ in range(3):                             # a loop of launches stays on the device
        twice_plus1[16, 8](y, x, 16, device="sim")
        x, y = y, x
    expect = np.arange(16, dtype=np.float32)
    for _ in range(4):
        expect = expect * 2 + 1
    np.testing.assert_array_equal(y.get(), expect)
    assert y.get() is not y.sim_array              # get() is a copy


def test_failed_simulation_restores_device_arrays() -> None:
    x = clpy.to_device(np.arange(16, dtype=np.float32), device="sim")
    before = x.get()
    with pytest.raises(SimulationError, match="out-of-bounds"):
        oob[16, 8](x, 4, device="sim")
    np.testing.assert_array_equal(x.get(), before)


def test_device_array_set_copy_and_errors() -> None:
    x = clpy.to_device(np.zeros(4, np.float32), device="sim")
    x.set([1, 2, 3, 4])
    np.testing.assert_array_equal(np.asarray(x), [1, 2, 3, 4])
    c = x.copy()
    c.set(np.zeros(4))
    assert x.get()[0] == 1 and (x.shape, x.dtype, x.nbytes, len(x)) == ((4,), np.float32, 16, 4)
    with pytest.raises(ValueError, match="expected shape"):
        x.set(np.zeros(5))
    with pytest.raises(ValueError, match="at least one dimension"):
        clpy.to_device(3.0, device="sim")
    with pytest.raises(TypeError, match="expected an array of float32"):
        twice_plus1[4, 4](clpy.to_device(np.zeros(4, np.int32), device="sim"), x, 4, device="sim")


def test_unannotated_parameters_infer_from_device_arrays() -> None:
    @clpy.kernel
    def fill(a, v: float32):
        a[clpy.get_global_id(0)] = v

    a = clpy.zeros(8, np.float32, device="sim")
    fill[8, 8](a, 2.5, device="sim")
    assert a.get().tolist() == [2.5] * 8


def test_device_arrays_stay_on_an_opencl_device(cldev: Device) -> None:
    x = clpy.to_device(np.arange(64, dtype=np.float32), device=cldev)
    y = clpy.empty(64, np.float32, device=cldev)
    assert x.cl_array is not None and x.sim_array is None
    for _ in range(5):
        twice_plus1[64, 16](x, y, 64, device=cldev)
        x, y = y, x
    expect = np.arange(64, dtype=np.float32)
    for _ in range(5):
        expect = expect * 2 + 1
    np.testing.assert_array_equal(x.get(), expect)
    # the same kernels on the simulator give the same bits
    xs = clpy.to_device(np.arange(64, dtype=np.float32), device="sim")
    ys = clpy.empty(64, np.float32, device="sim")
    for _ in range(5):
        twice_plus1[64, 16](xs, ys, 64, device="sim")
        xs, ys = ys, xs
    assert xs.get().tobytes() == x.get().tobytes()


def test_a_device_array_runs_only_where_it_lives(cldev: Device) -> None:
    xs = clpy.to_device(np.zeros(8, np.float32), device="sim")
    with pytest.raises(ValueError, match=r"parameter 'x' .*lives on sim"):
        twice_plus1[8, 8](xs, np.zeros(8, np.float32), 8, device=cldev)
    # an OpenCL device array on the simulator is copied there and back
    xc = clpy.to_device(np.ones(8, np.float32), device=cldev)
    yc = clpy.zeros(8, np.float32, device=cldev)
    twice_plus1[8, 8](xc, yc, 8, device="sim")
    assert yc.get().tolist() == [3.0] * 8
