"""C's array-pointer idioms (clpy/frontend/pointers.py, sim/privmem.py): an array used as a
value is a pointer to its first element in the array's address space, annotated pointer
locals, ``clpy.addr(a[i])``; on the simulator (pointers into private arrays through device
functions, bounds-checked) and on the device, with the same results."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import clpy
import clpy_sim as sim
from clpy import Constant, Global, Local, Private, float4, float32, int32
from tests.test_sim_util import assert_same, run_cl, run_sim

RNG = np.random.default_rng(12)
N = 256


@clpy.kernel
def k_hist(x: Global[int32], out: Global[int32]):
    local_hist = clpy.local_array(int32, 64)
    lid = clpy.get_local_id(0)
    local_hist[lid] = 0
    clpy.barrier()
    clpy.atomic_inc(local_hist + x[clpy.get_global_id(0)])
    clpy.barrier()
    clpy.atomic_add(clpy.addr(out[lid]), local_hist[lid])


@clpy.kernel
def k_out_pointers(x: Global[float32], out: Global[float32], q: Global[int32]):
    i = clpy.get_global_id(0)
    qq = clpy.private_array(int32, 2)
    ip = clpy.private_array(float32, 3)
    qq[1] = 7
    ip[1] = 0.0
    out[3 * i] = clpy.remquo(x[i], 0.7, qq)  # the array itself: its first element
    out[3 * i + 1] = clpy.fract(x[i], clpy.addr(ip[2])) + ip[2]
    if i % 3 == 0:  # written through a pointer in a branch
        out[3 * i + 2] = clpy.modf(x[i], ip + 1)
    q[2 * i] = qq[0]
    q[2 * i + 1] = qq[1] + int32(ip[1])


@clpy.func
def sum_n(p: Private[float32], n: int32) -> float32:
    s = float32(0)
    for j in range(n):
        s += p[j]
    return s


@clpy.func
def scale_into(dst: Private[float32], src: Local[float32], n: int32, f: float32):
    for j in range(n):
        dst[j] = src[j] * f


@clpy.func
def bump(p: Private[float32]):
    p[0] += 1.0
    p += 1  # pointer arithmetic in the callee
    p[0] += 10.0


@clpy.kernel
def k_funcs(x: Global[float32], out: Global[float32]):
    i = clpy.get_global_id(0)
    lid = clpy.get_local_id(0)
    t = clpy.local_array(float32, 64)
    t[lid] = x[i]
    clpy.barrier()
    a = clpy.private_array(float32, 4)
    for j in range(4):
        a[j] = x[i] * float32(j)
    row = clpy.private_array(float32, (2, 4))
    row[0][3] = 1.0
    if lid % 2 == 1:  # a device function writes the caller's private array, divergently
        scale_into(a, t, 2, 3.0)
        bump(a + 2)
    scale_into(row[1], t + 4 * (lid // 4), 4, 0.5)
    out[2 * i] = sum_n(a, 4) + sum_n(a + 1, 3)
    out[2 * i + 1] = sum_n(row[1], 4) + row[0][3]


@clpy.kernel
def k_pointer_locals(x: Global[float32], c: Constant[float32], out: Global[float32], off: int32):
    i = clpy.get_global_id(0)
    p: Global[float32] = x + off
    q: Constant[float32] = clpy.addr(c[1])
    a = clpy.private_array(float4, 2)
    a[0] = float4(x[i], 1.0, 2.0, 3.0)
    a[1] = a[0] * 2.0
    pa: Private[float4] = a
    pa += 1
    t = clpy.local_array(float32, (4, 8))
    lid = clpy.get_local_id(0)
    t[lid // 8][lid % 8] = x[i]
    clpy.barrier()
    r: Local[float32] = t[lid // 8]
    out[i] = p[i] + q[i % 4] + pa[0].y + clpy.addr(t[3][0])[lid % 8] + r[(lid + 1) % 8]


@clpy.func
def count_until(p: Private[float32], end: Private[float32]) -> int32:
    n = 0
    while p != end:
        p += 1
        n += 1
    return n


@clpy.kernel
def k_compare(out: Global[int32]):
    i = clpy.get_global_id(0)
    a = clpy.private_array(float32, 8)
    q: Private[float32] = a + 2
    out[i] = count_until(q, a + 7) + (10 if q > a else 0) + (100 if a == q - 2 else 0)


CASES = [
    ("hist", k_hist, (N,), (64,),
     lambda: [RNG.integers(0, 64, N).astype(np.int32), np.zeros(64, np.int32)]),
    ("out_pointers", k_out_pointers, (N,), (32,),
     lambda: [RNG.uniform(-9, 9, N).astype(np.float32), np.zeros(3 * N, np.float32),
              np.zeros(2 * N, np.int32)]),
    ("funcs", k_funcs, (N,), (64,),
     lambda: [RNG.uniform(-9, 9, N).astype(np.float32), np.zeros(2 * N, np.float32)]),
    ("compare", k_compare, (16,), (8,), lambda: [np.zeros(16, np.int32)]),
    ("pointer_locals", k_pointer_locals, (32,), (32,),
     lambda: [RNG.uniform(-9, 9, 64).astype(np.float32), RNG.uniform(-9, 9, 8).astype(np.float32),
              np.zeros(32, np.float32), np.int32(5)]),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_idioms_match_device(cl_context: Any, case: Any) -> None:
    _, kern, g, l_, make = case
    fn = kern.specialize().function
    args = make()
    got, want = run_sim(fn, g, l_, args), run_cl(cl_context, fn, g, l_, args)
    assert_same(got, want, 0.0, [p.name for p in fn.params])


def test_idioms_results() -> None:
    """The simulator's answers, from NumPy."""
    x = RNG.integers(0, 64, N).astype(np.int32)
    got = run_sim(k_hist.specialize().function, (N,), (64,), [x, np.zeros(64, np.int32)])
    assert (got[1] == np.bincount(x, minlength=64)).all()
    got = run_sim(k_compare.specialize().function, (16,), (8,), [np.zeros(16, np.int32)])
    assert (got[0] == 115).all()
    x = RNG.uniform(-9, 9, N).astype(np.float32)
    fn = k_funcs.specialize().function
    out = run_sim(fn, (N,), (64,), [x, np.zeros(2 * N, np.float32)])[1]
    lid = np.arange(N) % 64
    a = x[:, None] * np.arange(4, dtype=np.float32)
    odd = lid % 2 == 1
    tgroup = x.reshape(-1, 64)[np.arange(N) // 64]
    a[odd, 0:2] = tgroup[odd, 0:2] * np.float32(3)
    a[odd, 2] += 1
    a[odd, 3] += 10
    want0 = a.sum(axis=1, dtype=np.float32) + a[:, 1:].sum(axis=1, dtype=np.float32)
    np.testing.assert_allclose(out[0::2], want0, rtol=1e-5)
    base = 4 * (lid // 4)
    row = tgroup[np.arange(N)[:, None], base[:, None] + np.arange(4)] * np.float32(0.5)
    np.testing.assert_allclose(out[1::2], row.sum(axis=1) + 1, rtol=1e-5)


def test_emitted_text() -> None:
    src = k_hist.source_for("opencl-c-1.2", line_directives=False)
    assert "atomic_inc((volatile __local int*)(local_hist + x[" in src
    assert "__global const int* x" in src  # x[...] inside hist + x[i] is read, not written
    src = k_out_pointers.source_for("opencl-c-1.2", line_directives=False)
    assert "remquo(x[i], 0.7f, qq)" in src and "fract(x[i], ip + 2)" in src
    src = k_funcs.source_for("opencl-c-1.2", line_directives=False)
    assert "float sum_n(__private const float* p, int n)" in src
    assert "sum_n(a, 4) + sum_n(a + 1, 3)" in src and "scale_into(row[1], t + " in src
    src = k_pointer_locals.source_for("opencl-c-1.2", line_directives=False)
    for line in ("__global const float* p = x + off;", "__constant float* q = c + 1;",
                 "__private const float4* pa = a;",
                 "__local const float* r = t[lid / 8];", "(t[3] + 0)[lid % 8]"):
        assert line in src, (line, src)


@clpy.func
def walk_off(p: Private[float32], n: int32) -> float32:
    return p[n]


@clpy.kernel
def k_walk_off(out: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    a = clpy.private_array(float32, 4)
    b = clpy.private_array(float32, 4)
    b[0] = 1.0
    a[3] = 2.0
    out[i] = walk_off(a, n) + walk_off(b + 2, 1)


def test_bounds_checker_follows_pointers() -> None:
    """Each work-item's private array is its own: a pointer past its end (into what would be
    the next work-item's array) is reported at the device function's line, naming it."""
    fn = k_walk_off.specialize().function
    out = run_sim(fn, (8,), (8,), [np.zeros(8, np.float32), np.int32(3)])[0]
    assert (out == 2.0).all()
    with pytest.raises(sim.SimulationError) as ei:
        run_sim(fn, (8,), (8,), [np.zeros(8, np.float32), np.int32(4)])
    msg = str(ei.value)
    assert "out-of-bounds" in msg and "private array `a`" in msg and "(it has 4 elements)" in msg
    assert "return p[n]" in msg and "memory: a[4]" in msg  # the callee's line, a's element


def _fails(src_fn: Any, match: str) -> None:
    with pytest.raises(clpy.CompileError, match=match):
        clpy.kernel(src_fn).specialize()


def test_errors() -> None:
    def wrong_space(x: Global[float32]):
        t = clpy.local_array(float32, 8)
        x[0] = sum_n(t, 8)

    _fails(wrong_space, r"cannot convert __local float\* to __private float\*")

    def two_d(x: Global[float32]):
        t = clpy.local_array(float32, (4, 4))
        p: Local[float32] = t
        x[0] = p[0]

    _fails(two_d, "index it down to one row first")

    def scalar_addr(x: Global[float32]):
        v = x[0]
        x[1] = clpy.fract(v, clpy.addr(v))

    _fails(scalar_addr, "scalars and fields have no address")

    def copy(x: Global[float32]):
        a = clpy.private_array(float32, 2)
        b = a
        x[0] = b[0]

    _fails(copy, r"arrays cannot be copied.*b: Private\[T\]")
