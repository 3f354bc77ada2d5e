"""Kernels launched through ``k[global, local](*args)`` on a real OpenCL device (PoCL in CI;
CLPY_TEST_PLATFORM picks another) and on the simulator, checked against NumPy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Constant, Global, Local, float32, int32
from clpy.runtime.api import get_device
from clpy.runtime.devices import Device
from clpy.runtime.launch import LaunchHandle


@pytest.fixture(scope="module")
def cldev(cl_device: Any) -> Device:
    return get_device(cl_device)


# ----------------------------------------------------------------------------- kernels


@clpy.kernel
def saxpy(a: float32, x: Global[float32], y: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    if i < n:
        y[i] = a * x[i] + y[i]


@clpy.kernel
def twice(x, y, n):
    i = clpy.get_global_id(0)
    if i < n:
        y[i] = x[i] * 2


@clpy.kernel
def group_sums(x: Global[float32], out: Global[float32], tmp: Local[float32],
               B: clpy.constexpr):
    lid = clpy.get_local_id(0)
    tmp[lid] = x[clpy.get_global_id(0)]
    clpy.barrier()
    if lid == 0:
        s = 0.0
        for j in range(B):
            s += tmp[j]
        out[clpy.get_group_id(0)] = s


@clpy.kernel
def tile_sums(x: Global[float32], out: Global[float32], T: clpy.constexpr):
    tile = clpy.local_array(float32, T)
    lid = clpy.get_local_id(0)
    tile[lid] = x[clpy.get_global_id(0)]
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    step = T // 2
    while step > 0:
        if lid < step:
            tile[lid] += tile[lid + step]
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
        step //= 2
    if lid == 0:
        out[clpy.get_group_id(0)] = tile[0]


@clpy.kernel
def transpose(a: Global[float32], b: Global[float32], w: int32, h: int32):
    x = clpy.get_global_id(0)
    y = clpy.get_global_id(1)
    if x < w and y < h:
        b[x * h + y] = a[y * w + x]


@clpy.kernel
def floor_ops(a: Global[int32], b: Global[int32], q: Global[int32], r: Global[int32]):
    i = clpy.get_global_id(0)
    q[i] = a[i] // b[i]
    r[i] = a[i] % b[i]


@clpy.kernel
def vec_scale(v: Global[clpy.float4], s: clpy.float4, out: Global[clpy.float4]):
    i = clpy.get_global_id(0)
    out[i] = v[i] * s


@clpy.kernel
def vec3_len(v: Global[clpy.float3], out: Global[float32]):
    i = clpy.get_global_id(0)
    p = v[i]
    out[i] = clpy.sqrt(p.x * p.x + p.y * p.y + p.z * p.z)


@clpy.struct
class Particle:
    pos: clpy.float2
    mass: float32
    id: int32


@clpy.kernel
def move(ps: Global[Particle], shift: Particle, masses: Global[float32]):
    i = clpy.get_global_id(0)
    ps[i].pos = ps[i].pos + shift.pos
    masses[i] = ps[i].mass * shift.mass


@clpy.func
def clamp01(v: float32) -> float32:
    return min(max(v, 0.0), 1.0)


@clpy.kernel
def clamp_all(x: Global[float32], c: Constant[float32]):
    i = clpy.get_global_id(0)
    x[i] = clamp01(x[i] * c[0])


@clpy.kernel
def f64_poly(x: Global[clpy.float64], out: Global[clpy.float64], k: clpy.float64):
    i = clpy.get_global_id(0)
    out[i] = x[i] * x[i] * k + 1.0


@clpy.kernel
def ids_3d(out: Global[int32]):
    x = clpy.get_global_id(0)
    y = clpy.get_global_id(1)
    z = clpy.get_global_id(2)
    nx = clpy.get_global_size(0)
    ny = clpy.get_global_size(1)
    out[(z * ny + y) * nx + x] = x + 10 * y + 100 * z


@clpy.kernel
def wide_ints(x: Global[clpy.int64], out: Global[clpy.uint64], add: clpy.uint64):
    i = clpy.get_global_id(0)
    out[i] = clpy.uint64(x[i]) + add


@clpy.kernel
def offset_ids(out: Global[int32]):
    i = clpy.get_global_id(0)
    out[i - clpy.get_global_offset(0)] = i


# ----------------------------------------------------------------------------- tests


def test_saxpy(dev: Device) -> None:
    n = 1000
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, np.float32)
    saxpy[(1024,), (256,)](2.0, x, y, n, device=dev)
    np.testing.assert_array_equal(y, 2 * x + 1)


def test_unannotated_params_specialize_per_argument_types(dev: Device) -> None:
    n = 100
    for dt in (np.float32, np.int32, np.float64, np.int16):
        x = np.arange(n).astype(dt)
        y = np.zeros(n, dt)
        twice[n](x, y, n, device=dev)
        np.testing.assert_array_equal(y, (x * 2).astype(dt))
        assert y.dtype == dt
    assert len(twice._cache) == 4


def test_constexpr_and_local_memory(dev: Device) -> None:
    x = np.arange(64, dtype=np.float32)
    for b in (4, 8):
        out = np.zeros(64 // b, np.float32)
        group_sums[64, b](x, out, clpy.LocalMemory(b), b, device=dev)
        np.testing.assert_array_equal(out, x.reshape(-1, b).sum(axis=1))


def test_local_array_tree_reduction(dev: Device) -> None:
    rng = np.random.default_rng(1)
    x = rng.integers(0, 100, 512).astype(np.float32)
    out = np.zeros(4, np.float32)
    tile_sums[(512,), (128,)](x, out, 128, device=dev)
    np.testing.assert_array_equal(out, x.reshape(4, 128).sum(axis=1))


def test_2d_launch(dev: Device) -> None:
    h, w = 24, 40
    a = np.arange(h * w, dtype=np.float32).reshape(h, w)
    b = np.zeros((w, h), np.float32)
    transpose[(w, h), (8, 8)](a, b, w, h, device=dev)
    np.testing.assert_array_equal(b, a.T)
    b2 = np.zeros((w, h), np.float32)
    transpose[(w, h), None](a, b2, w, h, device=dev)
    np.testing.assert_array_equal(b2, a.T)


def test_3d_launch(dev: Device) -> None:
    out = np.zeros((3, 4, 8), np.int32)
    ids_3d[(8, 4, 3), (4, 2, 1)](out, device=dev)
    z, y, x = np.indices((3, 4, 8))
    np.testing.assert_array_equal(out, x + 10 * y + 100 * z)


def test_python_floor_division_semantics(dev: Device) -> None:
    a = np.array([7, -7, 7, -7, 0, -1], np.int32)
    b = np.array([2, 2, -2, -2, 3, 5], np.int32)
    q = np.zeros_like(a)
    r = np.zeros_like(a)
    floor_ops[6](a, b, q, r, device=dev)
    np.testing.assert_array_equal(q, a // b)
    np.testing.assert_array_equal(r, a % b)


def test_vector_arrays_and_vector_scalar(dev: Device) -> None:
    v = np.arange(32, dtype=np.float32).reshape(8, 4)
    out = np.zeros_like(v)
    vec_scale[8](v, (1, 2, 3, 4), out, device=dev)
    np.testing.assert_array_equal(out, v * np.array([1, 2, 3, 4], np.float32))


def test_float3_arrays_are_padded_to_four_lanes(dev: Device) -> None:
    v = np.zeros((5, 4), np.float32)
    v[:, :3] = np.arange(15, dtype=np.float32).reshape(5, 3)
    v[:, 3] = 1000.0                     # padding lane: must be ignored
    out = np.zeros(5, np.float32)
    vec3_len[5](v, out, device=dev)
    np.testing.assert_allclose(out, np.linalg.norm(v[:, :3], axis=1), rtol=1e-6)


def test_struct_array_and_struct_by_value(dev: Device) -> None:
    ps = np.zeros(6, Particle.dtype)
    ps["pos"] = np.arange(12, dtype=np.float32).reshape(6, 2)
    ps["mass"] = np.arange(6, dtype=np.float32) + 1
    ps["id"] = np.arange(6)
    before = ps.copy()
    masses = np.zeros(6, np.float32)
    move[6](ps, Particle((10.0, 20.0), 2.0, 0), masses, device=dev)
    np.testing.assert_array_equal(ps["pos"], before["pos"] + [10.0, 20.0])
    np.testing.assert_array_equal(ps["id"], before["id"])
    np.testing.assert_array_equal(masses, before["mass"] * 2)


def test_device_function_and_constant_pointer(dev: Device) -> None:
    x = np.linspace(-1, 2, 16, dtype=np.float32)
    c = np.array([0.5], np.float32)
    expected = np.clip(x * 0.5, 0, 1)
    clamp_all[16](x, c, device=dev)
    np.testing.assert_array_equal(x, expected)


def test_double_precision(dev: Device) -> None:
    if dev.info is not None and "cl_khr_fp64" not in dev.info.extensions:
        pytest.skip("device has no fp64")
    x = np.linspace(0, 1, 32)
    out = np.zeros_like(x)
    f64_poly[32](x, out, 1.0 / 3.0, device=dev)
    np.testing.assert_allclose(out, x * x / 3.0 + 1.0, rtol=1e-15)


def test_64_bit_integers(dev: Device) -> None:
    x = np.array([-1, 0, 2**40, 2**62], np.int64)
    out = np.zeros(4, np.uint64)
    wide_ints[4](x, out, 2**63, device=dev)
    np.testing.assert_array_equal(out, x.astype(np.uint64) + np.uint64(2**63))


def test_global_offset(dev: Device) -> None:
    out = np.zeros(8, np.int32)
    offset_ids[8](out, device=dev, offset=(5,))
    np.testing.assert_array_equal(out, np.arange(5, 13))


def test_keyword_arguments(dev: Device) -> None:
    x = np.arange(4, dtype=np.float32)
    y = np.zeros(4, np.float32)
    saxpy[4](3.0, x, n=4, y=y, device=dev)
    np.testing.assert_array_equal(y, 3 * x)


def test_pyopencl_array_and_buffer_used_in_place(cldev: Device, cl_queue: Any) -> None:
    import pyopencl as cl
    import pyopencl.array as cla

    n = 64
    x = cla.to_device(cl_queue, np.arange(n, dtype=np.float32))
    y = cla.zeros(cl_queue, n, np.float32)
    saxpy[n](2.0, x, y, n, device=cldev)              # arrays from the fixture's context
    np.testing.assert_array_equal(y.get(), 2 * np.arange(n))
    ctx = cldev.context
    host = np.ones(n, np.float32)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
    saxpy[n](1.0, np.arange(n, dtype=np.float32), buf, n, device=cldev)
    back = np.empty(n, np.float32)
    cl.enqueue_copy(cldev.queue, back, buf)
    np.testing.assert_array_equal(back, np.arange(n) + 1)
    assert host[0] == 1.0                      # the buffer was used, not the host array


def test_launch_on_a_user_queue(cldev: Device, cl_queue: Any) -> None:
    import pyopencl.array as cla

    y = cla.zeros(cl_queue, 16, np.float32)
    saxpy[16](1.0, np.ones(16, np.float32), y, 16, device=cl_queue)
    np.testing.assert_array_equal(y.get(), np.ones(16))


def test_svm_pointer(cldev: Device) -> None:
    import pyopencl as cl

    if not cldev.info or not cldev.info.svm_capabilities:  # type: ignore[union-attr]
        pytest.skip("no SVM")
    ctx = cldev.context
    queue = cldev.queue
    svm = cl.SVM(cl.svm_empty(ctx, cl.svm_mem_flags.READ_WRITE, 8, np.float32))
    with svm.map_rw(queue) as view:          # coarse-grained SVM: touch it only mapped
        view[:] = 0
    saxpy[8](1.0, np.arange(8, dtype=np.float32), svm, 8, device=cldev)
    with svm.map_ro(queue) as view:
        np.testing.assert_array_equal(view, np.arange(8))


def test_wait_false_returns_a_handle(cldev: Device) -> None:
    x = np.arange(256, dtype=np.float32)
    y = np.zeros(256, np.float32)
    h = saxpy[256, 64](1.0, x, y, 256, device=cldev, wait=False)
    assert isinstance(h, LaunchHandle)
    h.wait()
    assert h.done
    np.testing.assert_array_equal(y, x)
    assert h.event is not None


def test_empty_launch_does_nothing(dev: Device) -> None:
    y = np.full(4, 7.0, np.float32)
    saxpy[0](1.0, np.zeros(0, np.float32), y, 0, device=dev)
    np.testing.assert_array_equal(y, 7.0)


def test_repeated_launches_reuse_the_plan(cldev: Device) -> None:
    x = np.ones(32, np.float32)
    y = np.zeros(32, np.float32)
    for k in range(5):
        saxpy[32, 8](float(k), x, y, 32, device=cldev)
    np.testing.assert_array_equal(y, np.full(32, 0 + 1 + 2 + 3 + 4, np.float32))
    plans = [key for key in saxpy.launches.plans if key[1] is cldev and key[2] is None]
    assert len(plans) == 1


def test_scalar_argument_changes_between_launches(cldev: Device) -> None:
    # Arguments equal to the previous launch's are not re-sent; -0.0 must not pass for 0.0.
    import pyopencl.array as cla

    q = cldev.queue
    x = cla.to_device(q, np.ones(4, np.float32))
    y = cla.zeros(q, 4, np.float32)
    saxpy[4](0.0, x, y, 4, device=cldev)
    saxpy[4](-0.0, x, y, 4, device=cldev)
    assert np.signbit(y.get()).tolist() == [False] * 4
    saxpy[4](-1.0, x, y, 4, device=cldev)
    saxpy[4](-1.0, x, y, 3, device=cldev)
    np.testing.assert_array_equal(y.get(), [-2, -2, -2, -1])


def test_pyopencl_memory_on_the_simulator(cl_queue: Any) -> None:
    import pyopencl as cl
    import pyopencl.array as cla

    n = 16
    x = cla.to_device(cl_queue, np.arange(n, dtype=np.float32))
    y = cla.zeros(cl_queue, n, np.float32)
    saxpy[n, 4](2.0, x, y, n, device="sim")
    np.testing.assert_array_equal(y.get(), 2 * np.arange(n))
    buf = cl.Buffer(cl_queue.context, cl.mem_flags.READ_WRITE, n * 4)
    cl.enqueue_copy(cl_queue, buf, np.ones(n, np.float32))
    saxpy[n, 4](1.0, x, buf, n, device="sim")
    back = np.empty(n, np.float32)
    cl.enqueue_copy(cl_queue, back, buf)
    np.testing.assert_array_equal(back, np.arange(n) + 1)


def test_temporary_device_copies_are_not_kept(cldev: Device) -> None:
    x = np.ones(8, np.float32)
    y = np.zeros(8, np.float32)
    saxpy[8](1.0, x, y, 8, device=cldev)
    plan = next(p for key, p in saxpy.launches.plans.items()
                if key[1] is cldev and key[2] is None)
    assert plan._last[1] is None and plan._last[2] is None    # x, y buffers released
    saxpy[8](1.0, x, y, 8, device=cldev)                      # and set again next time
    np.testing.assert_array_equal(y, 2)
