"""The simulator's min/max family and pow give the same bits whether their arguments are
group-uniform (the NumPy engine computes with NumPy scalars) or vary over the lanes (NumPy
arrays), at any global size, lane position, thread count and on either engine.

NumPy's ``np.fmin``/``np.fmax`` choose another operand for equal zeros and for two NaNs in
their scalar loops (a uniform value; the last elements of an array) than in their SIMD loops,
and its ``power`` takes shortcuts for 0-d operands (``pow(-0, 0.5)`` was -0). The
definitions the simulator uses instead (sim/builtins/common.py ``fmin``/``fmax``, math.py
``_pow``; the native engine's prelude.h repeats them): OpenCL C 2.0 §6.13.2 (spec file
§1.13.2) and §2.5 where they pin the result, and where they leave a choice (the sign of
``fmin(+0, -0)``, which NaN of two) the operand PoCL returns: ``y`` for equal arguments, ``x``
for two NaNs. PoCL is checked on the points the spec pins.

Arithmetic: ``-`` and ``/`` are deterministic too; where both operands of ``+`` or ``*`` are
NaN, which NaN comes out depends on NumPy's loop (the spec allows either, §2.5.1), and that
is the one freedom left (docs/simulator.md).
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, double, double4, float4, float32

# outputs per lane: 11 scalar results, then 4 vector results of 4 lanes
K = 27
SCALAR_NAMES = "fmin fmax min max maxmag minmag pow clamp pown1 powr exp10".split()
NAMES = SCALAR_NAMES + [f"{v}.{c}" for v in ("fmin4", "max4s", "clamp4s", "pow4") for c in "xyzw"]
ARITH = 4  # a - b, a / b, a + b, a * b


def _kernels(t: Any, t4: Any) -> tuple[Any, Any, Any, Any]:
    @clpy.kernel
    def varying(a: Global[t], b: Global[t], c: Global[t], o: Global[t]):
        i = clpy.get_global_id(0)
        x = a[i]
        y = b[i]
        z = c[i]
        k = i * 27
        o[k + 0] = clpy.fmin(x, y)
        o[k + 1] = clpy.fmax(x, y)
        o[k + 2] = min(x, y)
        o[k + 3] = max(x, y)
        o[k + 4] = clpy.maxmag(x, y)
        o[k + 5] = clpy.minmag(x, y)
        o[k + 6] = clpy.pow(x, y)
        o[k + 7] = clpy.clamp(x, y, z)
        o[k + 8] = clpy.pown(x, 1)
        o[k + 9] = clpy.powr(x, y)
        o[k + 10] = clpy.exp10(x)
        v1 = clpy.fmin(t4(x, y, z, x), t4(y, x, x, z))
        v2 = clpy.max(t4(x, y, z, x), y)
        v3 = clpy.clamp(t4(x, y, z, x), y, z)
        v4 = clpy.pow(t4(x, y, z, x), t4(y, z, x, x))
        o[k + 11] = v1.x
        o[k + 12] = v1.y
        o[k + 13] = v1.z
        o[k + 14] = v1.w
        o[k + 15] = v2.x
        o[k + 16] = v2.y
        o[k + 17] = v2.z
        o[k + 18] = v2.w
        o[k + 19] = v3.x
        o[k + 20] = v3.y
        o[k + 21] = v3.z
        o[k + 22] = v3.w
        o[k + 23] = v4.x
        o[k + 24] = v4.y
        o[k + 25] = v4.z
        o[k + 26] = v4.w

    @clpy.kernel
    def uniform(x: t, y: t, z: t, o: Global[t]):
        i = clpy.get_global_id(0)
        k = i * 27
        o[k + 0] = clpy.fmin(x, y)
        o[k + 1] = clpy.fmax(x, y)
        o[k + 2] = min(x, y)
        o[k + 3] = max(x, y)
        o[k + 4] = clpy.maxmag(x, y)
        o[k + 5] = clpy.minmag(x, y)
        o[k + 6] = clpy.pow(x, y)
        o[k + 7] = clpy.clamp(x, y, z)
        o[k + 8] = clpy.pown(x, 1)
        o[k + 9] = clpy.powr(x, y)
        o[k + 10] = clpy.exp10(x)
        v1 = clpy.fmin(t4(x, y, z, x), t4(y, x, x, z))
        v2 = clpy.max(t4(x, y, z, x), y)
        v3 = clpy.clamp(t4(x, y, z, x), y, z)
        v4 = clpy.pow(t4(x, y, z, x), t4(y, z, x, x))
        o[k + 11] = v1.x
        o[k + 12] = v1.y
        o[k + 13] = v1.z
        o[k + 14] = v1.w
        o[k + 15] = v2.x
        o[k + 16] = v2.y
        o[k + 17] = v2.z
        o[k + 18] = v2.w
        o[k + 19] = v3.x
        o[k + 20] = v3.y
        o[k + 21] = v3.z
        o[k + 22] = v3.w
        o[k + 23] = v4.x
        o[k + 24] = v4.y
        o[k + 25] = v4.z
        o[k + 26] = v4.w

    @clpy.kernel
    def arith_v(a: Global[t], b: Global[t], o: Global[t]):
        i = clpy.get_global_id(0)
        o[4 * i] = a[i] - b[i]
        o[4 * i + 1] = a[i] / b[i]
        o[4 * i + 2] = a[i] + b[i]
        o[4 * i + 3] = a[i] * b[i]

    @clpy.kernel
    def arith_u(x: t, y: t, o: Global[t]):
        i = clpy.get_global_id(0)
        o[4 * i] = x - y
        o[4 * i + 1] = x / y
        o[4 * i + 2] = x + y
        o[4 * i + 3] = x * y

    return varying, uniform, arith_v, arith_u


KERNELS = {np.float32: _kernels(float32, float4), np.float64: _kernels(double, double4)}
DTYPES = [np.float32, np.float64]


def specials(dt: Any) -> np.ndarray:
    """±0, ±1, ±inf, halves, a denormal and NaNs of both signs and two payloads, and for
    double a signalling NaN (a kernel's float argument arrives quieted)."""
    ut = np.dtype(f"uint{np.dtype(dt).itemsize * 8}")
    q = {np.float32: 0x7FC00000, np.float64: 0x7FF8000000000000}[dt]
    sign = 1 << (ut.itemsize * 8 - 1)
    nans = [q, q | sign, q | 5, q | sign | 5]
    if dt == np.float64:
        nans.append(0x7FF0000000000001)
    nan = np.array(nans, ut).view(dt)
    fi = np.finfo(dt)
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, np.inf, -np.inf, fi.smallest_subnormal]
    return np.concatenate([np.array(vals, dt), nan])


def triples(dt: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair (x, y) of specials, z cycling through them."""
    s = specials(dt)
    k = len(s)
    x, y = np.repeat(s, k), np.tile(s, k)
    z = s[(np.arange(k * k) * 7) % k]
    return x, y, z


def bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.dtype(f"uint{a.dtype.itemsize * 8}"))


def _uniform_results(dt: Any, engine: str) -> np.ndarray:
    """(pairs, K): one launch of 4 work-items per triple with the values as kernel
    arguments; every work-item's results must be the same."""
    _, uniform, _, _ = KERNELS[dt]
    x, y, z = triples(dt)
    out = np.zeros((len(x), K), dt)
    o = np.zeros(4 * K, dt)
    with clpy.sim.config(checks=False, engine=engine):
        for j in range(len(x)):
            uniform[(4,), (4,)](dt(x[j]), dt(y[j]), dt(z[j]), o, device="sim")
            lanes = bits(o).reshape(4, K)
            assert (lanes == lanes[0]).all(), (j, NAMES)
            out[j] = o[:K]
    return out


def _varying_results(dt: Any, n: int, local: int, engine: str, threads: int | None = None):
    """(n, K) for lane i computing on triple ``(i * 5 + 3) % pairs``: every triple at many
    positions in the arrays (SIMD bodies and tails) and in the work-groups."""
    varying, _, _, _ = KERNELS[dt]
    x, y, z = triples(dt)
    pick = (np.arange(n) * 5 + 3) % len(x)
    o = np.zeros(n * K, dt)
    with clpy.sim.config(checks=False, engine=engine, threads=threads):
        varying[(n,), (local,)](x[pick], y[pick], z[pick], o, device="sim")
    return pick, o.reshape(n, K)


def _differences(got: np.ndarray, want: np.ndarray, pick: np.ndarray, dt: Any) -> list[str]:
    x, y, z = triples(dt)
    bad = bits(got) != bits(want)
    out = []
    for i, j in zip(*np.nonzero(bad)):
        p = pick[i]
        args = ", ".join(f"{v!r}={int(bits(np.array([v]))[0]):#x}" for v in (x[p], y[p], z[p]))
        out.append(
            f"{NAMES[j]}({args}) lane {i}: {int(bits(got[i : i + 1, j])[0]):#x} "
            f"vs uniform {int(bits(want[i : i + 1, j])[0]):#x}"
        )
    return out


@pytest.fixture(scope="module")
def reference() -> dict[Any, np.ndarray]:
    """The NumPy engine's results for uniform arguments, per dtype."""
    return {dt: _uniform_results(dt, "numpy") for dt in DTYPES}


@pytest.mark.parametrize("dt", DTYPES, ids=["float", "double"])
@pytest.mark.parametrize("n, local", [(196, 4), (203, 7), (4096, 64), (65536, 256)])
def test_varying_equals_uniform_numpy_engine(
    reference: dict[Any, np.ndarray], dt: Any, n: int, local: int
) -> None:
    pick, got = _varying_results(dt, n, local, "numpy")
    diffs = _differences(got, reference[dt][pick], pick, dt)
    assert not diffs, f"{len(diffs)} results differ:\n" + "\n".join(diffs[:30])


@pytest.mark.parametrize("dt", DTYPES, ids=["float", "double"])
def test_thread_counts_agree(reference: dict[Any, np.ndarray], dt: Any) -> None:
    for threads in (1, 2):
        pick, got = _varying_results(dt, 65536, 64, "numpy", threads)
        diffs = _differences(got, reference[dt][pick], pick, dt)
        assert not diffs, f"threads={threads}:\n" + "\n".join(diffs[:30])


def _need_native() -> None:
    if not any(shutil.which(c) for c in ("cc", "gcc", "clang")):
        if os.environ.get("CI") == "true":
            pytest.fail("no C compiler on a CI machine: the native engine needs one")
        pytest.skip("no C compiler for the native engine")


@pytest.mark.parametrize("dt", DTYPES, ids=["float", "double"])
def test_native_engine_equals_numpy_engine(reference: dict[Any, np.ndarray], dt: Any) -> None:
    _need_native()
    for n, local in ((203, 7), (4096, 64)):
        pick, got = _varying_results(dt, n, local, "native")
        diffs = _differences(got, reference[dt][pick], pick, dt)
        assert not diffs, f"native, {n} lanes:\n" + "\n".join(diffs[:30])
    got_u = _uniform_results(dt, "native")
    every = np.arange(len(got_u))
    diffs = _differences(got_u, reference[dt], every, dt)
    assert not diffs, "native, uniform:\n" + "\n".join(diffs[:30])


# ----------------------------------------------------------------------------- what is chosen


@pytest.mark.parametrize("dt", DTYPES, ids=["float", "double"])
def test_the_chosen_operands(reference: dict[Any, np.ndarray], dt: Any) -> None:
    """fmin/fmax/min/max: a NaN argument is ignored, two NaNs give x's, equal arguments y
    (fmin(+0, -0) is -0 and fmin(-0, +0) is +0, as on PoCL); pow: a NaN argument x's
    before y's, except pow(x, 0) = pow(1, y) = 1; pown(x, 1) is pow(x, 1)."""
    x, y, _ = triples(dt)
    r = reference[dt]
    col = {name: r[:, j] for j, name in enumerate(NAMES)}
    with np.errstate(all="ignore"):
        for name, less in (("fmin", x < y), ("fmax", x > y), ("min", x < y), ("max", x > y)):
            want = np.where(np.isnan(y) | less, x, y)
            assert (bits(col[name]) == bits(want)).all(), name
        nx, ny = np.isnan(x), np.isnan(y)
        one = (y == 0) | (x == 1)
        want = np.where(one, dt(1), np.where(nx, x + x, np.where(ny, y + y, col["pow"])))
        assert (bits(col["pow"]) == bits(want)).all()
        assert (
            bits(col["pown1"]) == bits(np.where(nx, x + x, x))
        ).all()  # x; a NaN quieted, its sign kept


def test_fract_of_nan_is_the_nan() -> None:
    """§2.5.1: fract(NaN, iptr) returns the NaN and NaN in iptr (the composition with fmin of
    §6.13.2 gave 0x1.fffffep-1), uniform and varying. (The native engine's fract is checked
    by tests/test_sim_native_builtins.py; kernels passing a pointer to it run on NumPy.)"""

    @clpy.kernel
    def fr(a: Global[float32], u: float32, o: Global[float32], p: Global[float32]):
        i = clpy.get_global_id(0)
        ip = clpy.private_array(float32, 2)
        o[2 * i] = clpy.fract(a[i], ip)
        o[2 * i + 1] = clpy.fract(u, ip + 1)
        p[2 * i] = ip[0]
        p[2 * i + 1] = ip[1]

    nan = np.array([0x7FC00000, 0xFFC00005], np.uint32).view(np.float32)
    o = np.zeros(4, np.float32)
    p = np.zeros(4, np.float32)
    with clpy.sim.config(checks=False, engine="numpy"):
        fr[(2,), (2,)](nan, np.float32(nan[1]), o, p, device="sim")
    assert (bits(o) == bits(nan[[0, 1, 1, 1]])).all(), [hex(v) for v in bits(o)]
    assert np.isnan(p).all()


# ----------------------------------------------------------------------------- arithmetic


@pytest.mark.parametrize("dt", DTYPES, ids=["float", "double"])
def test_arithmetic_differs_only_in_which_of_two_nans(dt: Any) -> None:
    """``-`` and ``/`` give the same bits uniform and varying; ``+`` and ``*`` too except
    where both operands are NaN (then a NaN, with either operand's bits)."""
    _, _, arith_v, arith_u = KERNELS[dt]
    x, y, _ = triples(dt)
    ref = np.zeros((len(x), ARITH), dt)
    o = np.zeros(ARITH, dt)
    with clpy.sim.config(checks=False, engine="numpy"), np.errstate(invalid="ignore"):
        for j in range(len(x)):
            arith_u[(1,), (1,)](dt(x[j]), dt(y[j]), o, device="sim")
            ref[j] = o
        for n in (196, 203, 4096):
            pick = (np.arange(n) * 5 + 3) % len(x)
            got = np.zeros(n * ARITH, dt)
            arith_v[(n,), (1,)](x[pick], y[pick], got, device="sim")
            got = got.reshape(n, ARITH)
            bad = bits(got) != bits(ref[pick])
            both = (np.isnan(x) & np.isnan(y))[pick]
            assert not bad[:, :2].any(), n
            assert not (bad[:, 2:] & ~both[:, None]).any(), n
            operands = np.stack([bits(x[pick] + x[pick]), bits(y[pick] + y[pick])], 1)
            for col in (2, 3):  # which NaN is free: one of the operands' (quieted)
                assert np.isin(bits(got[both, col]), operands[both]).all()


# ----------------------------------------------------------------------------- PoCL


@pytest.mark.parametrize("dt", DTYPES, ids=["float", "double"])
def test_pinned_points_agree_with_pocl(
    reference: dict[Any, np.ndarray], dt: Any, cl_device: Any
) -> None:
    """Where §6.13.2 and §2.5 pin the result the simulator and PoCL agree bit for bit: fmin,
    fmax, maxmag, minmag with exactly one NaN argument (the other argument) or unequal
    arguments, and pow at its C99 F.9.4.4 points (pow(x, ±0), pow(1, y), pow(±0, y),
    pow(-inf, y)); a NaN result is a NaN on both."""
    x, y, z = triples(dt)
    n = len(x)
    dev = clpy.get_device(cl_device)
    varying = KERNELS[dt][0]
    o = np.zeros(n * K, dt)
    varying[(n,), (1,)](x, y, z, o, device=dev)
    got = o.reshape(n, K)
    sim = reference[dt]
    with np.errstate(all="ignore"):
        one_nan = np.isnan(x) != np.isnan(y)
        unequal = ~np.isnan(x) & ~np.isnan(y) & (x != y)
        ordered = one_nan | unequal
        pow_pinned = (y == 0) | (x == 1) | (x == 0) | np.isinf(x) | np.isinf(y)
        pow_pinned &= ~(np.isnan(x) & ~(y == 0)) & ~(np.isnan(y) & ~(x == 1))
    checks = {name: ordered for name in ("fmin", "fmax", "maxmag", "minmag")}
    checks["pow"] = pow_pinned
    for name, where in checks.items():
        j = NAMES.index(name)
        s, d = sim[where, j], got[where, j]
        assert (bits(s) == bits(d)).all(), (name, x[where][bits(s) != bits(d)])
    j = NAMES.index("pow")
    assert (np.isnan(sim[:, j]) == np.isnan(got[:, j])).all()
