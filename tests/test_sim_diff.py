"""Differential tests, language features: each kernel runs on the simulator and on PoCL with
random inputs; integers must be bit-identical, floats within a few ULP (spec §2)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import clpy
from clpy import Global, Local, float4, float32, float64, int4, int16, int32, int64, uint8, uint32
from tests.test_sim_util import compare, run_sim

RNG = np.random.default_rng(1234)


def rf(n: int, lo: float = -10, hi: float = 10, dt: Any = np.float32) -> np.ndarray:
    return RNG.uniform(lo, hi, n).astype(dt)


def ri(n: int, lo: int = -1000, hi: int = 1000, dt: Any = np.int32) -> np.ndarray:
    return RNG.integers(lo, hi, n).astype(dt)


@clpy.kernel
def k_saxpy(a: float32, x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    y[i] = a * x[i] + y[i]


@clpy.kernel
def k_int_arith(x: Global[int32], y: Global[int32], out: Global[int32], u: Global[uint32]):
    i = clpy.get_global_id(0)
    a = x[i]
    b = y[i]
    out[4 * i] = a * 1000003 + b * 77777
    out[4 * i + 1] = a // b if b != 0 else 0
    out[4 * i + 2] = a % b if b != 0 else 0
    out[4 * i + 3] = (a ^ b) | (a & 0xFF)
    ua = u[i]
    u[i] = ua * uint32(2654435761) + (ua // 7) + (ua % 13)


@clpy.kernel
def k_shifts(x: Global[int32], s: Global[int32], out: Global[int32], lo: Global[int64]):
    i = clpy.get_global_id(0)
    a = x[i]
    k = s[i]
    out[2 * i] = a << k
    out[2 * i + 1] = a >> k
    lo[i] = (lo[i] << k) ^ (lo[i] >> (k + 7))


@clpy.kernel
def k_narrow(x: Global[int32], c: Global[uint8], h: Global[int16]):
    i = clpy.get_global_id(0)
    c[i] = c[i] + x[i]
    h[i] = h[i] * 3 - x[i]


@clpy.kernel
def k_float_ops(x: Global[float32], y: Global[float32], out: Global[float32]):
    i = clpy.get_global_id(0)
    a = x[i]
    b = y[i]
    out[4 * i] = a / b
    out[4 * i + 1] = a // b
    out[4 * i + 2] = a % b
    out[4 * i + 3] = -a * b + 0.5


@clpy.kernel
def k_double(x: Global[float64], out: Global[float64]):
    i = clpy.get_global_id(0)
    a = x[i]
    out[i] = a * a / 3.0 - a + 1e-300


@clpy.kernel
def k_casts(x: Global[float32], out_i: Global[int32], out_f: Global[float32],
            big: Global[int64], out_d: Global[float64]):
    i = clpy.get_global_id(0)
    out_i[i] = int32(x[i] * 1000.0)
    out_f[i] = float32(out_i[i]) / 7.0
    out_d[i] = float64(big[i]) * 0.5
    big[i] = int64(x[i]) * 1000000007


@clpy.kernel
def k_vectors(v: Global[float4], w: Global[float4], out: Global[float4], m: Global[int4]):
    i = clpy.get_global_id(0)
    a = v[i]
    b = w[i]
    c = a * b + a.wzyx - 2.0
    c.y = a.x
    c.zw = b.xy
    out[i] = c
    m[i] = (a < b) + (a.xxyy >= b.zzww)


@clpy.kernel
def k_int_vectors(v: Global[int4], out: Global[int4]):
    i = clpy.get_global_id(0)
    a = v[i]
    b = a * 3 + int4(1, -2, 3, -4)
    out[i] = (b >> 2) ^ (a == b) + a.s3210


@clpy.kernel
def k_control(x: Global[int32], out: Global[int32]):
    i = clpy.get_global_id(0)
    acc = 0
    for k in range(x[i] % 13):
        if k % 3 == 1:
            continue
        for j in range(10, 0, -2):
            if j < k:
                break
            acc += j * k
        if acc > 500:
            break
    out[i] = acc


@clpy.kernel
def k_collatz(x: Global[uint32], steps: Global[int32]):
    i = clpy.get_global_id(0)
    n = x[i]
    s = 0
    while n != 1 and s < 1000:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        s += 1
    steps[i] = s


@clpy.func
def clampi(x: int32, lo: int32, hi: int32) -> int32:
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


@clpy.func
def twice_clamped(x: int32) -> int32:
    return clampi(x, -50, 50) * 2


@clpy.kernel
def k_funcs(x: Global[int32], out: Global[int32]):
    i = clpy.get_global_id(0)
    out[i] = twice_clamped(x[i]) + clampi(x[i], 0, 10)


@clpy.struct
class Particle:
    pos: float32
    vel: float32
    id: int32


@clpy.kernel
def k_struct(p: Global[Particle], dt: float32):
    i = clpy.get_global_id(0)
    q = p[i]
    q.pos = q.pos + q.vel * dt
    q.id = q.id * 2 + 1
    p[i] = q


@clpy.kernel
def k_private_sort(x: Global[int32]):
    i = clpy.get_global_id(0)
    a = clpy.private_array(int32, 8)
    for k in range(8):
        a[k] = x[8 * i + k]
    for p in range(8):
        for k in range(7 - p):
            if a[k] > a[k + 1]:
                t = a[k]
                a[k] = a[k + 1]
                a[k + 1] = t
    for k in range(8):
        x[8 * i + k] = a[k]


@clpy.kernel
def k_reduce(x: Global[float32], out: Global[float32]):
    lid = clpy.get_local_id(0)
    tmp = clpy.local_array(float32, 128)
    tmp[lid] = x[clpy.get_global_id(0)]
    clpy.barrier()
    s = 64
    while s > 0:
        if lid < s:
            tmp[lid] += tmp[lid + s]
        clpy.barrier()
        s //= 2
    if lid == 0:
        out[clpy.get_group_id(0)] = tmp[0]


@clpy.kernel
def k_scan(x: Global[int32], y: Global[int32]):
    lid = clpy.get_local_id(0)
    gid = clpy.get_global_id(0)
    tmp = clpy.local_array(int32, 64)
    tmp[lid] = x[gid]
    clpy.barrier()
    off = 1
    while off < 64:
        v = tmp[lid]
        if lid >= off:
            v += tmp[lid - off]
        clpy.barrier()
        tmp[lid] = v
        clpy.barrier()
        off *= 2
    y[gid] = tmp[lid]


@clpy.kernel
def k_transpose(a: Global[float32], b: Global[float32], n: int32):
    tile = clpy.local_array(float32, (8, 9))
    lx = clpy.get_local_id(0)
    ly = clpy.get_local_id(1)
    gx = clpy.get_global_id(0)
    gy = clpy.get_global_id(1)
    tile[ly][lx] = a[gy * n + gx]
    clpy.barrier()
    ox = clpy.get_group_id(1) * 8 + lx
    oy = clpy.get_group_id(0) * 8 + ly
    b[oy * n + ox] = tile[lx][ly]


@clpy.kernel
def k_ids3d(out: Global[int32]):
    i = clpy.get_global_linear_id()
    out[4 * i] = clpy.get_local_id(0) + 10 * clpy.get_local_id(1) + 100 * clpy.get_local_id(2)
    out[4 * i + 1] = clpy.get_group_id(0) + 10 * clpy.get_group_id(1) + 100 * \
        clpy.get_group_id(2)
    out[4 * i + 2] = clpy.get_global_id(2) * 1000 + clpy.get_local_linear_id()
    out[4 * i + 3] = clpy.get_num_groups(1) + 10 * clpy.get_local_size(2) + \
        100 * clpy.get_work_dim()


@clpy.kernel
def k_guarded(x: Global[float32], y: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    v = x[i] if i < n else 0.0
    if i < n and x[i] > 0.0:
        v = v * 2.0
    if i >= n or x[i] < -5.0:
        v = -1.0
    if i < n:
        y[i] = v


@clpy.kernel
def k_long(x: Global[int64], out: Global[int64]):
    i = clpy.get_global_id(0)
    a = x[i]
    out[3 * i] = a * 6364136223846793005 + 1442695040888963407
    out[3 * i + 1] = a // 7 + a % 1000
    out[3 * i + 2] = (a >> 13) ^ (a << 29)


@clpy.kernel
def k_local_param(x: Global[float32], out: Global[float32], scratch: Local[float32]):
    lid = clpy.get_local_id(0)
    n = clpy.get_local_size(0)
    scratch[lid] = x[clpy.get_global_id(0)]
    clpy.barrier()
    out[clpy.get_global_id(0)] = scratch[n - 1 - lid]


# ----------------------------------------------------------------------------- cases

N = 256


def _cases() -> list[tuple[str, Any, tuple[int, ...], tuple[int, ...], Any]]:
    return [
        ("saxpy", k_saxpy, (N,), (32,), lambda: [np.float32(1.5), rf(N), rf(N)]),
        ("int_arith", k_int_arith, (N,), (64,),
         lambda: [ri(N, -2**31, 2**31 - 1), ri(N, -50, 50), np.zeros(4 * N, np.int32),
                  ri(N, 0, 2**32 - 1, np.uint32)]),
        ("shifts", k_shifts, (N,), (64,),
         lambda: [ri(N, -2**31, 2**31 - 1), ri(N, 0, 70), np.zeros(2 * N, np.int32),
                  ri(N, -2**62, 2**62, np.int64)]),
        ("narrow", k_narrow, (N,), (64,),
         lambda: [ri(N, -1000, 1000), ri(N, 0, 255, np.uint8), ri(N, -30000, 30000,
                                                                  np.int16)]),
        ("float_ops", k_float_ops, (N,), (64,),
         lambda: [rf(N, -100, 100), rf(N, 0.5, 10) * np.where(ri(N, 0, 2) == 0, -1, 1)
                  .astype(np.float32), np.zeros(4 * N, np.float32)]),
        ("double", k_double, (N,), (64,), lambda: [rf(N, -1e3, 1e3, np.float64),
                                                   np.zeros(N, np.float64)]),
        ("casts", k_casts, (N,), (64,),
         lambda: [rf(N, -1e5, 1e5), np.zeros(N, np.int32), np.zeros(N, np.float32),
                  ri(N, -2**40, 2**40, np.int64), np.zeros(N, np.float64)]),
        ("vectors", k_vectors, (N,), (32,),
         lambda: [rf(4 * N).reshape(N, 4), rf(4 * N).reshape(N, 4),
                  np.zeros((N, 4), np.float32), np.zeros((N, 4), np.int32)]),
        ("int_vectors", k_int_vectors, (N,), (32,),
         lambda: [ri(4 * N).reshape(N, 4), np.zeros((N, 4), np.int32)]),
        ("control", k_control, (N,), (64,), lambda: [ri(N, 0, 1000), np.zeros(N, np.int32)]),
        ("collatz", k_collatz, (N,), (64,), lambda: [ri(N, 1, 100000, np.uint32),
                                                     np.zeros(N, np.int32)]),
        ("funcs", k_funcs, (N,), (64,), lambda: [ri(N, -100, 100), np.zeros(N, np.int32)]),
        ("struct", k_struct, (N,), (64,), lambda: [_particles(N), np.float32(0.25)]),
        ("private_sort", k_private_sort, (N // 8,), (8,), lambda: [ri(N, -99, 99)]),
        ("reduce", k_reduce, (N * 4,), (128,), lambda: [rf(N * 4), np.zeros(8, np.float32)]),
        ("scan", k_scan, (N,), (64,), lambda: [ri(N, -100, 100), np.zeros(N, np.int32)]),
        ("transpose", k_transpose, (32, 32), (8, 8),
         lambda: [rf(32 * 32), np.zeros(32 * 32, np.float32), np.int32(32)]),
        ("ids3d", k_ids3d, (4, 6, 4), (2, 3, 2), lambda: [np.zeros(4 * 96, np.int32)]),
        ("guarded", k_guarded, (N,), (64,), lambda: [rf(N - 17), np.zeros(N - 17, np.float32),
                                                     np.int32(N - 17)]),
        ("long", k_long, (N,), (64,), lambda: [ri(N, -2**62, 2**62, np.int64),
                                               np.zeros(3 * N, np.int64)]),
        ("local_param", k_local_param, (N,), (64,),
         lambda: [rf(N), np.zeros(N, np.float32), clpy.LocalMemory(64)]),
    ]


def _particles(n: int) -> np.ndarray:
    p = np.zeros(n, Particle.dtype)
    p["pos"] = rf(n)
    p["vel"] = rf(n)
    p["id"] = ri(n)
    return p


CASES = _cases()


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_feature_matches_pocl(cl_context: Any, case: Any) -> None:
    _, kern, g, l_, make = case
    compare(cl_context, kern, g, l_, make())


def test_reduce_result_is_right() -> None:
    x = rf(1024)
    out = run_sim(k_reduce.specialize().function, (1024,), (128,), [x, np.zeros(8, np.float32)])
    np.testing.assert_allclose(out[1], x.reshape(8, 128).sum(axis=1), rtol=1e-4)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(groups=st.integers(1, 9), lsize=st.sampled_from([1, 2, 4, 8, 16, 32, 64]))
def test_hypothesis_local_reverse(cl_context: Any, groups: int, lsize: int) -> None:
    n = groups * lsize
    compare(cl_context, k_local_param, (n,), (lsize,),
            [rf(n), np.zeros(n, np.float32), clpy.LocalMemory(lsize)])


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(gx=st.integers(1, 4), gy=st.integers(1, 4), lx=st.sampled_from([1, 2, 4]),
       ly=st.sampled_from([1, 3]), gz=st.integers(1, 3), lz=st.sampled_from([1, 2]))
def test_hypothesis_ids3d(cl_context: Any, gx: int, gy: int, lx: int, ly: int, gz: int,
                          lz: int) -> None:
    g = (gx * lx, gy * ly, gz * lz)
    total = g[0] * g[1] * g[2]
    compare(cl_context, k_ids3d, g, (lx, ly, lz), [np.zeros(4 * total, np.int32)])


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(n=st.integers(1, 300), lsize=st.sampled_from([1, 8, 32, 64]),
       max_lanes=st.sampled_from([1, 64, 1 << 18]))
def test_hypothesis_guarded_sizes_and_batches(cl_context: Any, n: int, lsize: int,
                                              max_lanes: int) -> None:
    import clpy_sim as sim

    g = ((n + lsize - 1) // lsize) * lsize
    args = [rf(n), np.zeros(n, np.float32), np.int32(n)]
    with sim.config(max_lanes=max_lanes):
        compare(cl_context, k_guarded, (g,), (lsize,), args)
