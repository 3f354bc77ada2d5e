"""Golden kernels run on PoCL through raw pyopencl (not clpy.runtime), results checked
against NumPy/Python: the emitted C means what the Python means."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from golden_kernels import arrays, control, funcs, semantics, structs, vectors  # noqa: E402


def run(ctx: Any, queue: Any, kernel: Any, n: int, *args: Any, local: int | None = None
        ) -> None:
    """Build ``kernel``'s OpenCL C 2.0 source and launch it over ``n`` work-items; NumPy
    array arguments are copied in and back."""
    import pyopencl as cl

    spec = kernel if hasattr(kernel, "function") else kernel.specialize()
    prg = cl.Program(ctx, spec.source_for("opencl-c-2.0")).build(options=["-cl-std=CL2.0"])
    knl = getattr(prg, spec.function.name)
    mf = cl.mem_flags
    bufs: list[tuple[Any, np.ndarray]] = []
    cl_args: list[Any] = []
    for a in args:
        if isinstance(a, np.ndarray):
            b = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a)
            bufs.append((b, a))
            cl_args.append(b)
        elif isinstance(a, cl.LocalMemory):
            cl_args.append(a)
        else:
            cl_args.append(a)
    knl(queue, (n,), None if local is None else (local,), *cl_args)
    for b, a in bufs:
        cl.enqueue_copy(queue, a, b)
    queue.finish()


def test_floor_division_and_modulo(cl_context: Any, cl_queue: Any) -> None:
    rng = np.random.default_rng(1)
    n = 256
    a = rng.integers(-1000, 1000, n).astype(np.int32)
    b = rng.integers(-9, 10, n).astype(np.int32)
    b[b == 0] = 3
    q = np.zeros(n, np.int32)
    r = np.zeros(n, np.int32)
    u = rng.integers(0, 2**32 - 1, n, dtype=np.uint64).astype(np.uint32)
    u0 = u.copy()
    run(cl_context, cl_queue, semantics.sem_floor_div, n, a, b, q, r, u)
    i = np.arange(n)
    np.testing.assert_array_equal(q, a // b + (i // 2 + i % 4))
    np.testing.assert_array_equal(r, a % b + a % 4 + 7 // 2 - 7 % -3)
    np.testing.assert_array_equal(u, u0 // 3 + u0 % 5)


def test_float_floor_division(cl_context: Any, cl_queue: Any) -> None:
    x = np.array([-7.5, -3.0, -0.5, 0.0, 0.5, 3.0, 7.5, 100.25], np.float32)
    y = np.zeros_like(x)
    run(cl_context, cl_queue, semantics.sem_float_floor, x.size, x, y)
    np.testing.assert_allclose(y, x // 2.0 + x % 3.0, rtol=1e-6)


def test_true_division_and_pow(cl_context: Any, cl_queue: Any) -> None:
    a = np.array([1, 2, 3, 7, -5, 9, 10, 4, 1], np.int32)
    out = np.zeros(8, np.float32)
    run(cl_context, cl_queue, semantics.sem_true_div, 8, a, out)
    np.testing.assert_allclose(out, a[:8] / 2 + a[:8] / a[1:] + 3.5, rtol=1e-6)
    x = np.array([0.5, 1.5, 2.0, 3.0], np.float32)
    k = np.array([2, 3, 0, 1], np.int32)
    x0, k0 = x.copy(), k.copy()
    run(cl_context, cl_queue, semantics.sem_pow, 4, x, k)
    np.testing.assert_allclose(x, x0**2 + x0**0.5 + x0**k0 + x0**x0, rtol=1e-5)
    np.testing.assert_array_equal(k, k0**3 + 1 + 1024)


def test_shifts_wrap_and_mask(cl_context: Any, cl_queue: Any) -> None:
    a = np.array([1, -8, 123456, 2**30], np.int32)
    b = np.array([1, 2**31, 7, 0xFFFFFFFF], np.uint32)
    c = np.array([1, 128, 255, 64], np.uint8)
    a0, b0, c0 = a.copy(), b.copy(), c.copy()
    n = 3
    run(cl_context, cl_queue, semantics.sem_shifts, 4, a, b, c, np.int32(n))
    with np.errstate(over="ignore"):
        exp_a = (((a0 << n) | (a0 >> 3)) << 2).astype(np.int32)
    np.testing.assert_array_equal(a, exp_a)
    np.testing.assert_array_equal(b, (b0 >> n) ^ np.uint32(2**31))
    np.testing.assert_array_equal(c, (c0.astype(np.int32) << 1).astype(np.uint8))


def _for_ranges_expected(n: int, step: int) -> int:
    acc = 0
    for a in range(n):
        acc += a
    for b in range(2, n):
        acc += b
    for c in range(n, 0, -1):
        acc -= c
    for d in range(10, -10, -3):
        acc += d
    for e in range(0, n, step):
        acc += e
    for f in range(0, 100, 4):
        if f > n:
            break
        if f % 8 == 0:
            continue
        acc += f
    return acc + f


@pytest.mark.parametrize(("n", "step"), [(10, 3), (37, 5), (7, -2), (-4, -1), (0, 1)])
def test_for_ranges_python_semantics(cl_context: Any, cl_queue: Any, n: int, step: int
                                     ) -> None:
    out = np.zeros(1, np.int32)
    run(cl_context, cl_queue, control.ctl_for_ranges, 1, out, np.int32(n), np.int32(step))
    assert out[0] == _for_ranges_expected(n, step)


def test_loop_variable_after_loop(cl_context: Any, cl_queue: Any) -> None:
    """After ``for k in range(3)``, k is 2 (Python), not 3 (C)."""
    n = 8
    x = np.arange(n, dtype=np.float32)
    x0 = x.copy()
    run(cl_context, cl_queue, control.ctl_hoist, n, x, np.int32(5))
    y = np.where(np.arange(n) < 5, x0 * 2.0, 0.0)
    z = np.where(np.arange(n) < 5, 1, 2)
    w = y + 2
    np.testing.assert_allclose(x, y + z + w + 2)


def test_collatz_while(cl_context: Any, cl_queue: Any) -> None:
    x = np.array([1, 2, 3, 6, 7, 27], np.int32)

    def steps(v: int) -> int:
        s = 0
        while v != 1 and s < 1000:
            v = v // 2 if v % 2 == 0 else 3 * v + 1
            s += 1
        return s

    expected = [steps(int(v)) for v in x]
    run(cl_context, cl_queue, control.ctl_while, x.size, x)
    assert x.tolist() == expected


def test_vector_swizzles(cl_context: Any, cl_queue: Any) -> None:
    n = 4
    v4 = np.arange(n * 4, dtype=np.float32).reshape(n, 4)
    v16 = np.arange(n * 16, dtype=np.uint8).reshape(n, 16)
    v16_0 = v16.copy()
    out = np.zeros((n, 4), np.float32)  # float3 is stored as 4 lanes
    run(cl_context, cl_queue, vectors.vec_components, n, v4, v16, out)
    for i in range(n):
        v = v4[i]
        t = v[[3, 2, 1, 0]].copy()
        t[0:2] = v[2:4]
        t[3] = v[0] + v[1]
        s = v[0:2] + v[2:4] + v[[0, 2]] + v[[1, 3]]
        c = v16_0[i].copy()
        c[[0, 15]] = c[[15, 0]]
        c[0:8] = c[8:16].copy()
        c[8] = c[10]
        np.testing.assert_array_equal(v16[i], c)
        np.testing.assert_allclose(out[i, :3], [s[0], c[14], t[2]])


def test_struct_layout_matches_device(cl_context: Any, cl_queue: Any) -> None:
    P = structs.Particle
    n = 5
    ps = np.zeros(n, dtype=P.dtype)
    ps["pos"] = np.arange(n * 4, dtype=np.float32).reshape(n, 4)
    ps["vel"] = 1.0
    ps["mass"] = np.arange(n) + 1.0
    ps["id"] = np.arange(n) * 10
    before = ps.copy()
    run(cl_context, cl_queue, structs.struct_step, n, ps, np.float32(0.5))
    np.testing.assert_allclose(ps["pos"][:, :3], before["pos"][:, :3] + 0.5)
    np.testing.assert_allclose(ps["pos"][:, 3], before["pos"][:, 3])
    np.testing.assert_allclose(ps["mass"], before["mass"] * 0.5)
    np.testing.assert_array_equal(ps["id"], before["id"])
    np.testing.assert_array_equal(ps["flags"], 1)


def test_struct_values_and_funcs(cl_context: Any, cl_queue: Any) -> None:
    V = structs.ValIdx
    x = np.array([-1.0, 2.0, 0.5, -3.0], np.float32)
    out = np.zeros(4, V.dtype)
    pairs = np.zeros(4, structs.Pair.dtype)
    pairs["count"] = 65535
    pairs["total"] = 1.5
    run(cl_context, cl_queue, structs.struct_values, 4, x, out, pairs)
    best_val = np.where(x > 0.0, x, 0.0)
    np.testing.assert_allclose(out["val"], best_val)
    np.testing.assert_array_equal(out["idx"], np.where(x > 0.0, np.arange(4), -1))
    np.testing.assert_array_equal(pairs["count"], 0)  # ushort wraps
    np.testing.assert_allclose(pairs["total"], 1.5)
    np.testing.assert_allclose(pairs["best"]["val"], best_val)


def test_device_function_specializations(cl_context: Any, cl_queue: Any) -> None:
    xf = np.array([1.0, 2.0, -1.5], np.float32)
    xi = np.array([3, -4, 5], np.int32)
    run(cl_context, cl_queue, funcs.func_specializations, 3, xf, xi)
    np.testing.assert_allclose(xf, 0.0)  # store() overwrote them last
    np.testing.assert_array_equal(xi, np.array([3, -4, 5]) ** 2 + np.arange(3) ** 2)


def test_constexpr_local_array(cl_context: Any, cl_queue: Any) -> None:
    x = np.arange(128, dtype=np.float32)
    x0 = x.copy()
    run(cl_context, cl_queue, arrays.constexpr_block.specialize(block=64, unroll=2), 128, x,
        local=64)
    lid = np.arange(128) % 64
    base = np.arange(128) - lid
    expected = x0[base + lid] + x0[base + (lid + 1) % 64]
    np.testing.assert_allclose(x, expected)



def test_loop_carried_variable(cl_context: Any, cl_queue: Any) -> None:
    """A variable first assigned in a branch inside a loop keeps its value across
    iterations (declared outside the loops, as Python's function scope implies)."""
    n = 4
    x = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    out = np.zeros(n + 2, np.float32)
    run(cl_context, cl_queue, control.ctl_loop_carried, 1, x, out, np.int32(n))
    acc = 0.0
    expected = []
    for i in range(2):
        for k in range(n):
            acc = x[0] if (k == 0 and i == 0) else acc + x[k]
        expected.append(acc)
    np.testing.assert_allclose(out, expected + list(x * 2.0))


def test_unsigned_count_down_to_zero(cl_context: Any, cl_queue: Any) -> None:
    """range(n - 1, -1, -1) with n a size_t reaches 0 (the counter is signed). Every
    work-item writes the same values."""
    x = np.zeros(5, np.int32)
    run(cl_context, cl_queue, control.ctl_count_down, 5, x)
    np.testing.assert_array_equal(x, [5, 4, 3, 2, 1])
