"""Launch argument checks (each error names the parameter), work sizes, copy-back only for
written pointers, and the caller's arrays left bit-identical when a launch fails."""

from __future__ import annotations

import sys
import types
from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Constant, Global, Local, float32, int32
from clpy.runtime.api import get_device
from clpy.runtime.devices import Device
from clpy.runtime.launch import LaunchError


@pytest.fixture(scope="module")
def dev(cl_device: Any) -> Device:
    return get_device(cl_device)


@clpy.kernel
def saxpy(a: float32, x: Global[float32], y: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    if i < n:
        y[i] = a * x[i] + y[i]


@clpy.kernel
def sums(x: Global[float32], out: Global[float32], tmp: Local[float32], B: clpy.constexpr):
    lid = clpy.get_local_id(0)
    tmp[lid] = x[clpy.get_global_id(0)]
    clpy.barrier()
    if lid == 0:
        s = 0.0
        for j in range(B):
            s += tmp[j]
        out[clpy.get_group_id(0)] = s


@clpy.kernel
def vec4(v: Global[clpy.float4], s: clpy.float4, out: Global[clpy.float4]):
    i = clpy.get_global_id(0)
    out[i] = v[i] * s


@clpy.kernel
def vec3(v: Global[clpy.float3], iv: clpy.int2, out: Global[float32]):
    i = clpy.get_global_id(0)
    out[i] = v[i].x + float(iv.x)


@clpy.struct
class Pair:
    a: float32
    b: int32


@clpy.kernel
def pairs(ps: Global[Pair], p: Pair, out: Global[float32]):
    i = clpy.get_global_id(0)
    out[i] = ps[i].a + p.a


@clpy.kernel
def uints(out: Global[clpy.uint32], u: clpy.uint32, c: Constant[float32]):
    i = clpy.get_global_id(0)
    out[i] = u + clpy.uint32(c[0])


@clpy.kernel
def inferred(x, y):
    i = clpy.get_global_id(0)
    y[i] = x[i]


def _xy(n: int = 16) -> tuple[np.ndarray, np.ndarray]:
    return np.arange(n, dtype=np.float32), np.zeros(n, np.float32)


x0, y0 = _xy()

# (kernel, sizes, args, kwargs, exception, parameter named in the message, message fragment)
CASES: list[tuple[str, Any, Any, tuple[Any, ...], dict[str, Any], type, str, str]] = [
    ("dtype", saxpy, 16, (1.0, x0.astype(np.float64), y0, 16), {}, TypeError, "'x'", "float32"),
    ("dtype_out", saxpy, 16, (1.0, x0, y0.astype(np.int32), 16), {}, TypeError, "'y'", "int32"),
    ("zero_dim", saxpy, 16, (1.0, np.float32(1.0) * np.ones(()), y0, 16), {}, TypeError, "'x'",
     ""),
    ("non_contiguous", saxpy, 8, (1.0, np.arange(16, dtype=np.float32)[::2], y0, 8), {},
     ValueError, "'x'", "C-contiguous"),
    ("fortran_order", saxpy, 16, (1.0, np.asfortranarray(np.ones((4, 4), np.float32)), y0, 16),
     {}, ValueError, "'x'", "C-contiguous"),
    ("read_only_written", saxpy, 16, (1.0, x0, np.zeros(16, np.float32), 16), {"ro": "y"},
     ValueError, "'y'", "read-only"),
    ("too_few", saxpy, 16, (1.0, x0, y0), {}, TypeError, "'n'", "missing"),
    ("too_many", saxpy, 16, (1.0, x0, y0, 16, 5), {}, TypeError, "4 argument", "got 5"),
    ("float_for_int", saxpy, 16, (1.0, x0, y0, 2.5), {}, TypeError, "'n'", "integer"),
    ("int_overflow", saxpy, 16, (1.0, x0, y0, 2**31), {}, ValueError, "'n'", "out of range"),
    ("uint_negative", uints, 4, (np.zeros(4, np.uint32), -1, np.ones(1, np.float32)), {},
     ValueError, "'u'", "out of range"),
    ("float32_overflow", saxpy, 16, (1e39, x0, y0, 16), {}, ValueError, "'a'", "out of range"),
    ("str_for_float", saxpy, 16, ("2", x0, y0, 16), {}, TypeError, "'a'", "number"),
    ("array_for_float", saxpy, 16, (x0, x0, y0, 16), {}, TypeError, "'a'", "number"),
    ("list_for_pointer", saxpy, 16, (1.0, [1.0] * 16, y0, 16), {}, TypeError, "'x'", "list"),
    ("scalar_for_pointer", saxpy, 16, (1.0, 3.0, y0, 16), {}, TypeError, "'x'", "float"),
    ("array_for_local", sums, (16, 4), (x0, np.zeros(4, np.float32), np.zeros(4, np.float32),
                                        4), {}, TypeError, "'tmp'", "LocalMemory"),
    ("local_too_big", sums, (16, 4), (x0, np.zeros(4, np.float32), clpy.LocalMemory(2**40), 4),
     {}, ValueError, "'tmp'", "bytes"),
    ("localmemory_for_global", saxpy, 16, (1.0, clpy.LocalMemory(16), y0, 16), {}, TypeError,
     "'x'", "Local"),
    ("vector_lanes", vec4, 8, (np.zeros((8, 3), np.float32), (1, 2, 3, 4),
                               np.zeros((8, 4), np.float32)), {}, ValueError, "'v'", "(count, 4)"),
    ("vector_flat", vec4, 8, (np.zeros(32, np.float32), (1, 2, 3, 4),
                              np.zeros((8, 4), np.float32)), {}, ValueError, "'v'", "shape"),
    ("float3_unpadded", vec3, 5, (np.zeros((5, 3), np.float32), (1, 2), np.zeros(5, np.float32)),
     {}, ValueError, "'v'", "padded to 4 lanes"),
    ("vector_scalar_lanes", vec4, 8, (np.zeros((8, 4), np.float32), (1, 2, 3),
                                      np.zeros((8, 4), np.float32)), {}, ValueError, "'s'",
     "4 lanes"),
    ("int_vector_float_lanes", vec3, 5, (np.zeros((5, 4), np.float32), (1.5, 2.0),
                                         np.zeros(5, np.float32)), {}, TypeError, "'iv'",
     "integer"),
    ("int_vector_range", vec3, 5, (np.zeros((5, 4), np.float32), (2**40, 2),
                                   np.zeros(5, np.float32)), {}, ValueError, "'iv'", "range"),
    ("struct_as_tuple", pairs, 4, (np.zeros(4, Pair.dtype), (1.0, 2), np.zeros(4, np.float32)),
     {}, TypeError, "'p'", "Pair"),
    ("struct_array_dtype", pairs, 4, (np.zeros(4, np.float32), Pair(1.0, 2),
                                      np.zeros(4, np.float32)), {}, TypeError, "'ps'",
     "Pair.dtype"),
    ("constexpr_not_number", sums, (16, 4), (x0, np.zeros(4, np.float32), clpy.LocalMemory(4),
                                             x0), {}, TypeError, "'B'", "constexpr"),
    ("unannotated_str", inferred, 4, ("abc", np.zeros(4, np.float32)), {}, TypeError, "'x'",
     "annotate"),
    ("unknown_keyword", saxpy, 16, (1.0, x0, y0), {"kw": {"m": 3}}, TypeError, "'m'",
     "no parameter"),
    ("keyword_twice", saxpy, 16, (1.0, x0, y0, 16), {"kw": {"x": x0}}, TypeError, "'x'",
     "twice"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_argument_errors_name_the_parameter(dev: Device, case: Any) -> None:
    _, k, sizes, args, extra, exc, param, fragment = case
    args = list(args)
    if "ro" in extra:
        args[2] = args[2].copy()
        args[2].flags.writeable = False
    snapshot = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with pytest.raises(exc) as info:
        k[sizes](*args, device=dev, **extra.get("kw", {}))
    msg = str(info.value)
    assert param in msg, msg
    assert fragment in msg, msg
    for a, b in zip(args, snapshot):
        if isinstance(a, np.ndarray):
            assert a.tobytes() == b.tobytes()


def test_read_only_input_is_fine(dev: Device) -> None:
    x = np.arange(8, dtype=np.float32)
    x.flags.writeable = False
    y = np.zeros(8, np.float32)
    saxpy[8](1.0, x, y, 8, device=dev)
    np.testing.assert_array_equal(y, x)


def test_buffer_size_must_match_the_element(dev: Device) -> None:
    import pyopencl as cl

    buf = cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, 10)
    with pytest.raises(ValueError, match="'y'.*multiple"):
        saxpy[2](1.0, np.zeros(2, np.float32), buf, 2, device=dev)


def test_constant_buffer_limit(dev: Device) -> None:
    big = np.zeros(dev.info.max_constant_buffer_size // 4 + 1, np.float32)  # type: ignore
    with pytest.raises(ValueError, match="'c'.*constant buffer"):
        uints[4](np.zeros(4, np.uint32), 1, big, device=dev)


def test_nothing_is_sent_before_every_argument_is_checked(dev: Device,
                                                          monkeypatch: Any) -> None:
    import pyopencl as cl

    @clpy.kernel
    def fresh(a: Global[float32], b: Global[float32], n: int32):
        b[clpy.get_global_id(0)] = a[clpy.get_global_id(0)] + float(n)

    made: list[Any] = []
    real = cl.Buffer

    class Spy(real):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            made.append(args)
            super().__init__(*args, **kwargs)

    real_copy = cl.enqueue_copy
    writes: list[Any] = []

    def copy_spy(queue: Any, dest: Any, src: Any, **kw: Any) -> Any:
        if isinstance(dest, real) and isinstance(src, np.ndarray):
            writes.append(src)  # an upload into a pooled buffer (clpy/runtime/transfers.py)
        return real_copy(queue, dest, src, **kw)

    monkeypatch.setattr(cl, "Buffer", Spy)
    monkeypatch.setattr(cl, "enqueue_copy", copy_spy)
    with pytest.raises(ValueError, match="'n'"):
        fresh[4](np.ones(4, np.float32), np.zeros(4, np.float32), 2**40, device=dev)
    assert made == [] and writes == []
    fresh[4](np.ones(4, np.float32), np.zeros(4, np.float32), 1, device=dev)
    assert len(writes) == 2  # both arrays, once every argument passed


# ----------------------------------------------------------------------------- copy-back


def test_copy_back_only_for_written_pointers(dev: Device, monkeypatch: Any) -> None:
    import pyopencl as cl

    copied: list[Any] = []
    real = cl.enqueue_copy

    def spy(queue: Any, dest: Any, src: Any, **kw: Any) -> Any:
        if isinstance(dest, np.ndarray):  # device -> host (uploads go the other way)
            copied.append(dest)
        return real(queue, dest, src, **kw)

    monkeypatch.setattr(cl, "enqueue_copy", spy)
    x, y = _xy(8)
    saxpy[8](1.0, x, y, 8, device=dev)
    assert len(copied) == 1 and copied[0] is y
    assert saxpy.specialize().function.written == frozenset({"y"})
    assert "__global const float* x" in saxpy.source_for(dev.target)


# ----------------------------------------------------------------------------- failures


def test_failed_kernel_leaves_arrays_bit_identical(dev: Device, monkeypatch: Any) -> None:
    import pyopencl as cl

    real = cl.enqueue_nd_range_kernel

    class Failed:
        command_execution_status = -5           # CL_OUT_OF_RESOURCES, reported at wait

        def __init__(self, evt: Any) -> None:
            self.evt = evt

        def wait(self) -> None:
            self.evt.wait()                      # the kernel really ran on the device copy

    monkeypatch.setattr(cl, "enqueue_nd_range_kernel", lambda *a, **k: Failed(real(*a, **k)))
    x = np.arange(16, dtype=np.float32)
    y = np.full(16, np.nan, np.float32)
    y[3] = -0.0
    before = y.tobytes()
    with pytest.raises(LaunchError, match="untouched"):
        saxpy[16](2.0, x, y, 16, device=dev)
    assert y.tobytes() == before


def test_failed_build_leaves_arrays_bit_identical(dev: Device) -> None:
    from clpy.errors import BuildError

    bad = dev.variant(build_options="-Dn=)")
    x, y = _xy(8)
    y[:] = 5
    before = y.tobytes()
    with pytest.raises(BuildError):
        saxpy[8](1.0, x, y, 8, device=bad)
    assert y.tobytes() == before


def test_failed_simulation_leaves_arrays_bit_identical(monkeypatch: Any) -> None:
    """The runtime hands the simulator copies and copies back only after it returned."""
    fake = types.ModuleType("clpy_sim")

    class SimulationError(Exception):
        pass

    def launch(fn: Any, g: Any, l: Any, args: list[Any], offset: Any = None,
               params: Any = None) -> None:
        for a in args:
            if isinstance(a, np.ndarray):
                a[...] = 123                  # the simulator wrote, then found a bug
        raise SimulationError("out-of-bounds access")

    fake.launch = launch  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "clpy_sim", fake)
    x, y = _xy(8)
    before = (x.tobytes(), y.tobytes())
    with pytest.raises(SimulationError):
        saxpy[8](1.0, x, y, 8, device="sim")
    assert (x.tobytes(), y.tobytes()) == before


def test_sim_receives_the_documented_arguments(monkeypatch: Any) -> None:
    seen: dict[str, Any] = {}
    fake = types.ModuleType("clpy_sim")

    def launch(fn: Any, g: Any, l: Any, args: list[Any], offset: Any = None,
               params: Any = None) -> None:
        seen.update(fn=fn, g=g, l=l, args=args, offset=offset,
                    given=[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        for a in args:
            if isinstance(a, np.ndarray) and a.ndim:
                a[...] = 7                    # the "simulator" writes every array it got

    fake.launch = launch  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "clpy_sim", fake)
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(4, np.float32)
    sums[16](x, out, clpy.LocalMemory(4), 4, device="sim")
    assert seen["g"] == (16,) and seen["l"] == (16,)          # concrete local size picked
    assert [p.name for p in seen["fn"].params] == ["x", "out", "tmp"]
    assert isinstance(seen["args"][2], clpy.LocalMemory)
    assert seen["args"][0] is not x and seen["args"][0].dtype == np.float32
    np.testing.assert_array_equal(out, 7)       # written by the kernel: copied back
    np.testing.assert_array_equal(x, np.arange(16))   # read-only in the kernel: not
    y = np.zeros(4, np.float32)
    saxpy[4](np.float64(2.0), np.ones(4, np.float32), y, 4, device="sim")
    assert type(seen["args"][0]) is np.float32 and type(seen["args"][3]) is np.int32
    np.testing.assert_array_equal(y, 7)
    v = vec4  # by-value vectors reach the simulator as their lanes
    vec = np.zeros((2, 4), np.float32)
    v[2](vec, (1, 2, 3, 4), vec.copy(), device="sim")
    np.testing.assert_array_equal(seen["given"][1], [1, 2, 3, 4])


# ----------------------------------------------------------------------------- sizes


def test_non_uniform_work_groups_need_device_support(dev: Device) -> None:
    x, y = _xy(1000)
    if dev.target.info["non_uniform_work_groups"]:  # type: ignore[union-attr]
        saxpy[1000, 256](1.0, x, y, 1000, device=dev)
        np.testing.assert_array_equal(y, x)
        return
    with pytest.raises(ValueError, match=r"pad the global size to 1024"):
        saxpy[1000, 256](1.0, x, y, 1000, device=dev)


def test_size_errors(dev: Device) -> None:
    x, y = _xy(16)
    with pytest.raises(ValueError, match="different numbers of dimensions"):
        saxpy[(16,), (4, 4)](1.0, x, y, 16, device=dev)
    with pytest.raises(TypeError, match="global_size must be an int"):
        saxpy[16.0](1.0, x, y, 16, device=dev)
    with pytest.raises(TypeError, match=r"\[\(4, 4, 1\), None\]"):
        saxpy[4, 4, 1](1.0, x, y, 16, device=dev)
    with pytest.raises(ValueError, match="exceeds the maximum"):
        saxpy[2**20, 2**20](1.0, x, y, 16, device=dev)
    with pytest.raises(ValueError, match="zero entry"):
        saxpy[16, 0](1.0, x, y, 16, device=dev)
