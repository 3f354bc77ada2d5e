"""Kernels reduced by the differential fuzzer (``python -m clpy.fuzz``), kept as a corpus:
each ran differently (or failed) on the simulator and on PoCL before its fix. Each is run on
both and compared bit for bit.

Here: what clpy itself got wrong (the emitter's C, the simulator) and the PoCL compiler crash
clpy's spelling avoids. The device bugs the fuzzer found are in tests/test_fuzz_pocl_loops.py
(PoCL: private variables after a divergent loop and a barrier), tests/test_fuzz_nan.py (NaN
through saturating conversions and rounding), tests/test_fuzz_nvidia.py (NVIDIA's driver 580)
and tests/test_fuzz_abs.py (abs/abs_diff of INT_MIN, seed 3078)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import clpy
import clpy.vectors as V
from clpy import Global, float32, float64, int16, int32, int64, uint8, uint16
from tests.sim_vs_device import both as _both


@clpy.kernel
def narrow_select(o: Global[int16], u: Global[uint8]):
    # seed 102: C promotes the char/short operands of ?: to int, so min(short, c ? s : s)
    # did not build on PoCL ("call to min is ambiguous") and clz(c ? uc : uc) counted the
    # zeros of an int. The emitter now casts a narrow ?: to its type.
    i = clpy.get_global_id(0)
    v = o[i]
    w = u[i]
    o[i] = min(int16(0), (v if (int16(255) == v) else v)) + min(v, v if v > 0 else v)
    u[i] = clpy.clz(w if w > 1 else w) + clpy.popcount(w if w > 3 else uint8(0))


def test_narrow_select_is_cast_to_its_type(cl_device):
    src = narrow_select.source_for("opencl-c-1.2", line_directives=False)
    assert "(short)(v > 0 ? v : v)" in src and "clz((uchar)(w > 1 ? w : w))" in src
    rng = np.random.default_rng(102)
    o = rng.integers(-(2**15), 2**15, 64).astype(np.int16)
    u = rng.integers(0, 256, 64).astype(np.uint8)
    sim, dev = _both(narrow_select, (64,), (16,), o, u, cl_device=cl_device)
    for a, b in zip(sim, dev):
        np.testing.assert_array_equal(a, b)
    want_u = np.array([8 - int(x).bit_length() for x in u]) + np.array(
        [bin(int(x)).count("1") if x > 3 else 0 for x in u]
    )
    np.testing.assert_array_equal(sim[1], want_u.astype(np.uint8))


@clpy.kernel
def literal_swizzle_and_loop_stop(x: Global[int32], out: Global[int32]):
    # seed 1015: a vector literal is a C cast expression, so `(int16)(7).s1` applied .s1 to
    # the scalar; and `for (...; i > c & 3; ...)` compared before masking. Both now
    # parenthesized.
    i = clpy.get_global_id(0)
    c = x[i]
    acc = V.int4(c, 1, 2, 3).s2 + V.int16(c).s1
    for k in range(6, c & 3, -1):
        acc += k
    out[i] = acc


def test_vector_literal_swizzle_and_masked_loop_stop(cl_device):
    src = literal_swizzle_and_loop_stop.source_for("opencl-c-1.2", line_directives=False)
    # (a swizzle of a broadcast is its scalar: seed 1001511 below)
    assert "((int4)(c, 1, 2, 3)).z + c;" in src
    assert "k > (c & 3)" in src
    x = np.arange(-8, 56, dtype=np.int32)
    sim, dev = _both(
        literal_swizzle_and_loop_stop, (64,), (16,), x, np.zeros(64, np.int32), cl_device=cl_device
    )
    want = [2 + int(c) + sum(range(6, int(c) & 3, -1)) for c in x]
    np.testing.assert_array_equal(sim[1], want)
    np.testing.assert_array_equal(dev[1], want)


@clpy.kernel
def uniform_popcount(x: Global[int16], out: Global[int32]):
    # seed 29: popcount of a uniform (work-item independent) value came back 1-d from the
    # simulator (np.ascontiguousarray of a 0-d array), and an `if` on it crashed.
    i = clpy.get_global_id(0)
    v = clpy.popcount(int16(7))
    out[i] = 0
    if int16(2) <= v:
        out[i] = clpy.popcount(x[i]) + v


def test_popcount_of_a_uniform_value_in_a_condition(cl_device):
    x = np.arange(-32, 32, dtype=np.int16)
    sim, dev = _both(uniform_popcount, (64,), (8,), x, np.zeros(64, np.int32), cl_device=cl_device)
    want = [bin(int(v) & 0xFFFF).count("1") + 3 for v in x]
    np.testing.assert_array_equal(sim[1], want)
    np.testing.assert_array_equal(dev[1], want)


def test_break_in_a_nested_loop_does_not_make_later_collectives_divergent():
    # seed 17: a `break` inside a loop nested in a work-item-dependent `if` only ends that
    # loop; the collective after the `if` is reached by every work-item (no warning).
    @clpy.kernel
    def after_nested_break(x: Global[int32], o: Global[int32]):
        i = clpy.get_global_id(0)
        v = x[i]
        if v > 3:
            w = 0
            while w < 5:
                w += 1
                if v > 7:
                    break
            v = w
        o[i] = clpy.work_group_reduce_add(v)

    @clpy.kernel
    def after_loop_break(x: Global[int32], o: Global[int32]):
        i = clpy.get_global_id(0)
        v = x[i]
        for k in range(4):
            if v > k:
                break  # ends the loop: the reduction inside it after this is divergent
            o[i] = clpy.work_group_reduce_add(v)

    with warnings.catch_warnings():
        warnings.simplefilter("error", clpy.UniformityWarning)
        assert after_nested_break.ir is not None
    with pytest.warns(clpy.UniformityWarning, match="work_group_reduce_add"):
        assert after_loop_break.ir is not None
    x = np.arange(16, dtype=np.int32)
    o = np.zeros(16, np.int32)
    after_nested_break[(16,), (16,)](x, o, device="sim")
    assert (o == sum(int(v) if v <= 3 else (1 if v > 7 else 5) for v in x)).all()


@clpy.kernel
def uniform_fma_bitselect(x: Global[float64], out: Global[int32]):
    # seeds 39, 67 (the CI run): the simulator's correctly rounded fma (and bitselect) of
    # uniform values came back 1-d, and an `if` on it crashed, like popcount above.
    i = clpy.get_global_id(0)
    out[i] = 0
    if clpy.fma(float64(-1.0), float64(-3.25), float64(0.0)) > float64(2.0):
        out[i] = 1
    if clpy.fma(x[i], float64(2.0), float64(1.0)) > float64(2.0):
        out[i] += 2
    if clpy.bitselect(int32(12), int32(3), int32(1)) == int32(13):
        out[i] += 4


def test_fma_and_bitselect_of_uniform_values_in_conditions(cl_device):
    x = np.linspace(-2, 2, 32)
    sim, dev = _both(
        uniform_fma_bitselect, (32,), (8,), x, np.zeros(32, np.int32), cl_device=cl_device
    )
    want = 1 + 2 * (x * 2 + 1 > 2) + 4
    np.testing.assert_array_equal(sim[1], want)
    np.testing.assert_array_equal(dev[1], want)


# ------------------------------------------------------------------ PoCL compiler crash
RAW_CRASH = (
    "__kernel void k(__global ushort* o) {\n"
    "    ushort4 v = (ushort4)((ushort2)((ushort)0), ((ushort4)((ushort)0)).zy);\n"
    "    o[get_global_id(0)] = v.w;\n}"
)


@clpy.kernel
def swizzled_broadcast_in_literal(o: Global[uint16], f: Global[float32]):
    # seed 1001511 (the background sim-vs-PoCL run): PoCL 3.0's compiler segfaults on a
    # vector literal whose later part swizzles a broadcast literal,
    # (ushort4)((ushort2)(0), ((ushort4)(0)).zy). clpy emits such a swizzle as the
    # narrower broadcast, (ushort2)(0): the same value, x evaluated once either way.
    i = clpy.get_global_id(0)
    v8 = V.ushort4(V.ushort2(uint16(i)), V.ushort4(uint16(3)).zy)
    o[i] = v8.w + v8.x + V.ushort4(o[i]).z
    f[i] = V.float4(1).y + V.float8(f[i]).s3


def test_swizzle_of_a_broadcast_is_the_narrower_broadcast(cl_device):
    src = swizzled_broadcast_in_literal.source_for("opencl-c-1.2", line_directives=False)
    assert "(ushort2)(((ushort)3u))" in src and ").zy" not in src and ".s3" not in src
    o = np.arange(8, dtype=np.uint16)
    f = np.linspace(-1, 1, 8).astype(np.float32)
    sim, dev = _both(swizzled_broadcast_in_literal, (8,), (8,), o, f, cl_device=cl_device)
    np.testing.assert_array_equal(sim[0], 3 + np.arange(8) + o)
    np.testing.assert_array_equal(sim[1], 1 + f)
    for a, b in zip(sim, dev):
        np.testing.assert_array_equal(a, b)


@clpy.kernel
def swizzle_of_computed_vector_in_literal(x: Global[int64], o: Global[int64]):
    # seeds 310046, 311478, 311871 (the three-way run): the same PoCL 3.0 crash, wider: a
    # vector literal whose constant vector part, (long2)(5L) or ~(long2)(5L), is followed by
    # a swizzle of a computed vector, (t + t).xw, (t * t).even, convert_long4(..).xw, or one
    # lane of it. clpy parenthesizes such a swizzle, ((t + t).xw), which builds.
    i = clpy.get_global_id(0)
    t = V.long4(x[i])
    a = V.long4(V.long2(int64(5)), (t + t).xw)
    b = V.long4(~V.long2(int64(5)), (t * t).even)
    c = V.long4(V.long2(int64(-(2**63))), clpy.convert_long4_sat_rtz(V.uchar4(uint8(254))).xw)
    d = V.long4(V.long2(int64(5)), (t - V.long4(1)).x, int64(3))
    o[16 * i + 0] = a.x
    o[16 * i + 1] = a.y
    o[16 * i + 2] = a.z
    o[16 * i + 3] = a.w
    o[16 * i + 4] = b.x
    o[16 * i + 5] = b.y
    o[16 * i + 6] = b.z
    o[16 * i + 7] = b.w
    o[16 * i + 8] = c.x
    o[16 * i + 9] = c.y
    o[16 * i + 10] = c.z
    o[16 * i + 11] = c.w
    o[16 * i + 12] = d.x
    o[16 * i + 13] = d.y
    o[16 * i + 14] = d.z
    o[16 * i + 15] = d.w


def test_swizzle_of_a_computed_vector_in_a_literal_is_parenthesized(cl_device):
    src = swizzle_of_computed_vector_in_literal.source_for("opencl-c-1.2", line_directives=False)
    assert "((t + t).xw))" in src and "((t * t).xz))" in src and ").xw))" in src, src
    x = np.array([0, 1, -7, 2**40, -(2**62), 12345, -1, 3], np.int64)
    sim, dev = _both(swizzle_of_computed_vector_in_literal, (8,), (4,), x,
                     np.zeros(128, np.int64), cl_device=cl_device)  # fmt: skip
    with np.errstate(over="ignore"):
        sq = x * x
    want = np.stack(
        [np.full(8, 5), np.full(8, 5), 2 * x, 2 * x, np.full(8, ~5), np.full(8, ~5), sq, sq,
         np.full(8, -(2**63)), np.full(8, -(2**63)), np.full(8, 254), np.full(8, 254),
         np.full(8, 5), np.full(8, 5), x - 1, np.full(8, 3)], axis=1,
    ).astype(np.int64).ravel()  # fmt: skip
    np.testing.assert_array_equal(sim[1], want)
    np.testing.assert_array_equal(dev[1], want)


RAW_CRASH_COMPUTED = (
    "__kernel void k(__global long* o) {\n"
    "    long4 t = (long4)(o[1]);\n"
    "    long4 v = (long4)((long2)(5L), (t + t).xw);\n"
    "    o[0] = v.w;\n}"
)


@pytest.mark.parametrize("raw", [RAW_CRASH, RAW_CRASH_COMPUTED], ids=["broadcast", "computed"])
def test_raw_swizzled_broadcast_in_a_literal(cl_device, raw):
    """The raw forms, built in a child process (a compiler crash would end pytest): PoCL 3.0
    crashes on both, and NVIDIA's driver 580 on the first (the child died with no message on
    the H100, 2026-11-23); a fixed PoCL, or another driver, builds them."""
    import subprocess
    import sys

    code = (
        "import pyopencl as cl, sys\n"
        f"plat = {cl_device.platform.name!r}; name = {cl_device.name!r}\n"
        "d = [d for p in cl.get_platforms() if p.name == plat for d in p.get_devices()"
        " if d.name == name][0]\n"
        f"cl.Program(cl.Context([d]), {raw!r}).build()\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        plat = cl_device.platform.name.lower()
        assert "portable computing language" in plat or "nvidia" in plat, r.stderr[-2000:]
        assert r.returncode < 0, r.stderr[-2000:]  # killed by a signal: the compiler crashed
        who = cl_device.platform.name
        pytest.xfail(f"{who} bug: its compiler crashes (signal {-r.returncode}) on {raw!r}")
