"""The same float bits on the simulator and on devices (DESIGN.md "Semantics", floats).

- The simulator's ``fma`` is correctly rounded (sim/fpexact.py), checked against exact rational
  arithmetic on values chosen to expose double rounding.
- The emitted C says ``#pragma OPENCL FP_CONTRACT OFF``; ``fp_contract=True`` fuses ``a*b + c``
  into explicit ``fma`` in the IR by the rule of clpy/ir/contract.py.
- Kernels using only ``+ - * / sqrt fma``, conversions, comparisons and integer operations give
  bit-identical results on the simulator and the device, in both contraction modes: targeted
  kernels with nearly cancelling inputs, and every such kernel of the differential corpus
  (tests/test_sim_diff*.py). On a device that does not report correctly rounded ``/`` and
  ``sqrt`` those two may differ by the spec's bound (2.5 and 3 ulp, spec §2.4, table 36).
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import clpy
from benchmarks.fp_contract import matmul
from clpy import Global, float2, float4, float32, float64, int32
from clpy.ir.contract import contract_function
from clpy.ir.nodes import CallBuiltin, Function
from clpy.ir.walk import walk
from clpy.runtime.quirks import fp_build_options
from clpy.types.core import ScalarType, VectorType, element_of
from clpy_sim.fpexact import fma
from tests import test_sim_diff, test_sim_diff_builtins, test_sim_diff_more
from tests.test_sim_util import assert_same, fp_options, run_cl, run_sim

RNG = np.random.default_rng(20261123)


# ----------------------------------------------------------------------------- exact fma


def _exact(a: float, b: float, c: float) -> Fraction:
    return Fraction(a) * Fraction(b) + Fraction(c)


def _round_narrow(x: Fraction, dt: Any) -> Any:
    """Round ``x`` to nearest-even in ``dt`` by comparing the neighbours exactly."""
    try:
        d = float(x)
    except OverflowError:
        d = float("inf") if x > 0 else float("-inf")
    r = dt(d)
    if not np.isfinite(r):
        fmax = Fraction(float(np.finfo(dt).max))
        below = Fraction(float(np.nextafter(np.finfo(dt).max, dt(0))))
        return r if abs(x) >= fmax + (fmax - below) / 2 else dt(np.copysign(np.finfo(dt).max, d))
    best = None
    for cand in (np.nextafter(r, dt(-np.inf)), r, np.nextafter(r, dt(np.inf))):
        if not np.isfinite(cand):
            continue
        err = abs(Fraction(float(cand)) - x)
        odd = int(np.array(cand).view(np.uint32 if dt is np.float32 else np.uint16)) & 1
        if best is None or err < best[0] or (err == best[0] and not odd):
            best = (err, cand)
    assert best is not None
    return best[1]


def _oracle(a: np.ndarray, b: np.ndarray, c: np.ndarray, dt: Any) -> np.ndarray:
    out = []
    for x, y, z in zip(a.tolist(), b.tolist(), c.tolist()):
        ex = _exact(x, y, z)
        if ex == 0:
            out.append(dt(np.float64(x) * np.float64(y) + np.float64(z)))
        elif dt is np.float64:
            try:
                out.append(float(ex))
            except OverflowError:
                out.append(float("inf") if ex > 0 else float("-inf"))
        else:
            out.append(_round_narrow(ex, dt))
    return np.array(out, dtype=dt)


def _bits(x: np.ndarray) -> np.ndarray:
    return x.view({8: np.int64, 4: np.int32, 2: np.int16}[x.dtype.itemsize])


def test_fma_float32_midpoints() -> None:
    """a*b lands exactly on a float midpoint and c is far below it: a*b + c in double, then
    rounded to float, rounds twice and goes the wrong way; fma must not."""
    a = np.float32(1 + 2**-12)  # a*a = 1 + 2^-11 + 2^-24: halfway between two floats
    c = np.array([2.0**-80, -(2.0**-80), 2.0**-140, -(2.0**-149), 0.0], np.float32)
    got = fma(a, a, c, np.dtype(np.float32))
    want = _oracle(np.full(5, a), np.full(5, a), c, np.float32)
    assert (_bits(got) == _bits(want)).all()
    twice = (np.float64(a) * np.float64(a) + c.astype(np.float64)).astype(np.float32)
    assert twice[0] != got[0]  # the naive way is wrong here


@pytest.mark.parametrize("dt", [np.float32, np.float16, np.float64])
def test_fma_random_and_extreme(dt: Any) -> None:
    n = 3000
    if dt is np.float64:
        a = RNG.standard_normal(n) * 2.0 ** RNG.integers(-600, 600, n)
        b = RNG.standard_normal(n) * 2.0 ** RNG.integers(-600, 600, n)
        with np.errstate(all="ignore"):
            p = a * b
        cs = [
            RNG.standard_normal(n) * 2.0 ** RNG.integers(-1074, 1023, n),
            np.where(np.isfinite(p), -p, 1.0),
            np.where(np.isfinite(p), -p * (1 + 2**-40), 1.0),
        ]
        sub = RNG.standard_normal(n) * 2.0**-1060
        cases = [(a, b, c) for c in cs] + [(sub, RNG.standard_normal(n), sub * 0.3)]
    else:
        a = RNG.standard_normal(n).astype(dt)
        b = RNG.standard_normal(n).astype(dt)
        p = a.astype(np.float64) * b
        cases = [
            (a, b, (-p).astype(dt)),
            (a, b, (-p * (1 + 1e-3)).astype(dt)),
            (a, b, (RNG.standard_normal(n) * 1e-6).astype(dt)),
            (a * dt(1e-18 if dt is np.float32 else 1e-3), b, np.zeros(n, dt)),
        ]
    for x, y, z in cases:
        got = fma(x, y, z, np.dtype(dt))
        want = _oracle(x, y, z, dt)
        same = (_bits(got) == _bits(want)) | (np.isnan(got) & np.isnan(want))
        assert same.all(), (x[~same][:3], y[~same][:3], z[~same][:3], got[~same][:3])


def test_fma_special_values() -> None:
    inf, nan = np.inf, np.nan
    a = np.array([inf, inf, 0.0, -0.0, 1.0, 2.0**600, nan, -0.0])
    b = np.array([0.0, 2.0, 5.0, 5.0, -0.0, 2.0**600, 1.0, 0.0])
    c = np.array([1.0, -inf, -0.0, -0.0, -0.0, -(2.0**1023), 0.0, 0.0])
    got = fma(a, b, c, np.dtype(np.float64))
    assert np.isnan(got[0]) and np.isnan(got[1]) and np.isnan(got[6])
    assert np.signbit(got[2]) is np.False_ and got[2] == 0  # +0 + -0 = +0
    assert np.signbit(got[3]) and got[3] == 0  # -0 + -0 = -0
    assert np.signbit(got[4]) and got[4] == 0
    assert got[5] == inf  # 2^1200 - 2^1023 overflows
    assert got[7] == 0 and not np.signbit(got[7])
    big = np.finfo(np.float64).max
    assert fma(big, big, -inf, np.dtype(np.float64)) == -inf  # not inf - inf
    assert fma(2.0**512, 2.0**512, -big, np.dtype(np.float64)) == 2.0**971  # cancels back


# ----------------------------------------------------------------------------- emission


@clpy.kernel
def k_axpb(a: Global[float32], b: Global[float32], c: Global[float32], out: Global[float32]):
    i = clpy.get_global_id(0)
    out[i] = a[i] * b[i] + c[i]


@clpy.kernel(fp_contract=True)
def k_axpb_fused(a: Global[float32], b: Global[float32], c: Global[float32], out: Global[float32]):
    i = clpy.get_global_id(0)
    out[i] = a[i] * b[i] + c[i]


def test_source_turns_contraction_off() -> None:
    for k in (k_axpb, k_axpb_fused):
        for tgt in ("opencl-c-1.2", "opencl-c-2.0", "opencl-c-3.0"):
            lines = k.source_for(tgt).splitlines()
            assert lines[1] == "#pragma OPENCL FP_CONTRACT OFF"
    assert "fma(" not in k_axpb.source
    assert "out[i] = fma(a[i], b[i], c[i]);" in k_axpb_fused.source


@clpy.func
def dev_dot2(p: float2, q: float2) -> float32:
    return p.x * q.x + p.y * q.y


@clpy.kernel(fp_contract=True)
def k_rule(x: Global[float32], y: Global[float64], v: Global[float4], n: Global[int32]):
    i = clpy.get_global_id(0)
    a = x[i]
    b = x[i + 1]
    acc = a * b - x[i + 2]  # fma(a, b, -x[i+2])
    acc += a * a  # acc = fma(a, a, acc)
    acc -= b * b  # acc = fma(-b, b, acc)
    x[i] = x[i + 3] - a * b  # fma(-a, b, x[i+3])
    prod = a * b
    x[i + 4] = prod + acc  # a product in a variable is rounded as written
    x[i + 5] = float32(y[i] * y[i]) + a  # a conversion in between: no fusion
    y[i] = y[i] * y[i] + 1.0  # double: fma
    v[i] = v[i] * v[i] + v[i + 1]  # vectors: fma
    n[i] = n[i] * n[i] + 1  # integers: untouched
    x[i + 6] = dev_dot2(float2(a, b), float2(b, a)) + acc
    x[i + 7] = a * b + b * a  # the left product fuses


def test_contract_rule_text() -> None:
    src = k_rule.source_for("opencl-c-1.2", line_directives=False)
    for line in (
        "float acc = fma(a, b, -x[i + 2]);",
        "acc = fma(a, a, acc);",
        "acc = fma(-b, b, acc);",
        "x[i] = fma(-a, b, x[i + 3]);",
        "float prod = a * b;",
        "x[i + 4] = prod + acc;",
        "y[i] = fma(y[i], y[i], 1.0);",
        "v[i] = fma(v[i], v[i], v[i + 1]);",
        "n[i] = n[i] * n[i] + 1;",
        "return fma(p.x, q.x, p.y * q.y);",
        "x[i + 7] = fma(a, b, b * a);",
    ):
        assert line in src, (line, src)
    assert "fma(y[i]" in src and "(float)(y[i] * y[i]) + a" in src


def _fma_calls(fn: Function) -> int:
    return sum(
        1 for n in walk(fn.body) if isinstance(n, CallBuiltin) and n.builtin.name == "fma"
    )


def test_contract_options() -> None:
    """Bare decorator, decorator option, per-launch override and the environment default."""
    assert isinstance(k_axpb, clpy.Kernel) and k_axpb.fp_contract is False
    assert k_axpb_fused.fp_contract is True
    assert _fma_calls(k_axpb.ir) == 0 and _fma_calls(k_axpb_fused.ir) == 1
    assert _fma_calls(k_axpb.specialize_with({}, True).function) == 1
    assert _fma_calls(k_axpb_fused.specialize_with({}, False).function) == 0
    n = 4096
    a, b, c = _cancelling(n, np.float32)
    fused = _oracle(a, b, c, np.float32)
    unfused = (a * b) + c  # NumPy float32: two roundings
    assert (fused != unfused).any()  # the inputs tell the modes apart
    for kern, opt, want in (
        (k_axpb, None, unfused),
        (k_axpb, True, fused),
        (k_axpb_fused, None, fused),
        (k_axpb_fused, False, unfused),
    ):
        out = np.zeros(n, np.float32)
        kern[(n,), (64,)](a, b, c, out, device="sim", fp_contract=opt)
        assert (_bits(out) == _bits(want)).all(), (kern, opt)


def test_contract_environment(monkeypatch: Any) -> None:
    def f(x: Global[float32]):
        x[0] = x[1] * x[2] + x[3]

    monkeypatch.setenv("CLPY_FP_CONTRACT", "1")
    assert clpy.kernel(f).fp_contract is True
    assert clpy.kernel(fp_contract=False)(f).fp_contract is False
    monkeypatch.setenv("CLPY_FP_CONTRACT", "maybe")
    with pytest.raises(ValueError, match="CLPY_FP_CONTRACT"):
        clpy.kernel(f)
    monkeypatch.delenv("CLPY_FP_CONTRACT")
    assert clpy.kernel(f).fp_contract is False


# ----------------------------------------------------------------------------- sim vs device


def _cancelling(n: int, dt: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random a, b and c nearly cancelling a*b (where fused and unfused differ most)."""
    a = RNG.uniform(-4, 4, n).astype(dt)
    b = RNG.uniform(-4, 4, n).astype(dt)
    p = a.astype(np.float64) * b
    c = (-p * (1 + RNG.uniform(-1e-5, 1e-5, n))).astype(dt)
    return a, b, c


@clpy.kernel
def k_exact32(a: Global[float32], b: Global[float32], c: Global[float32], out: Global[float32],
              m: Global[int32]):
    i = clpy.get_global_id(0)
    x = a[i]
    y = b[i]
    z = c[i]
    out[8 * i] = x * y + z
    out[8 * i + 1] = clpy.fma(x, y, z)
    out[8 * i + 2] = x / y
    out[8 * i + 3] = clpy.sqrt(clpy.fabs(x * 1000.0))
    out[8 * i + 4] = x * y - z * x + y / (z + 3.0)
    out[8 * i + 5] = float32(m[i]) * x + float32(float64(x) * float64(y) + float64(z))
    out[8 * i + 6] = x // y + x % y
    out[8 * i + 7] = clpy.sqrt(x * x + y * y) if x * y + z > 0.0 else -x * z - y
    m[i] = int32(x * 1000.0) + (1 if x * y + z < 0.0 else 0)


@clpy.kernel
def k_exact64(a: Global[float64], b: Global[float64], c: Global[float64],
              out: Global[float64]):
    i = clpy.get_global_id(0)
    x = a[i]
    y = b[i]
    z = c[i]
    out[4 * i] = x * y + z
    out[4 * i + 1] = clpy.fma(x, y, z)
    out[4 * i + 2] = x / y + clpy.sqrt(clpy.fabs(z))
    out[4 * i + 3] = x * x * y - z * y + 1e-300


def _tolerance(cl_context: Any) -> float:
    """0 ulp where the device has correctly rounded / and sqrt (the runtime asks for them);
    else the spec's bound for them (3 ulp, spec §2.4 table 36)."""
    return 0.0 if fp_options(cl_context) else 3.0


@pytest.mark.parametrize("contract", [False, True], ids=["unfused", "fp_contract"])
def test_exact_kernels_bit_identical(cl_context: Any, contract: bool) -> None:
    n = 4096
    a, b, c = _cancelling(n, np.float32)
    m = RNG.integers(-1000, 1000, n).astype(np.int32)
    fn = k_exact32.specialize_with({}, contract).function
    assert (_fma_calls(fn) > 1) is contract
    args = [a, b, c, np.zeros(8 * n, np.float32), m]
    got, want = run_sim(fn, (n,), (64,), args), run_cl(cl_context, fn, (n,), (64,), args)
    assert_same(got, want, _tolerance(cl_context), [p.name for p in fn.params])
    dev = cl_context.devices[0]
    if dev.double_fp_config:
        a64, b64, c64 = _cancelling(n, np.float64)
        fn = k_exact64.specialize_with({}, contract).function
        args = [a64, b64, c64, np.zeros(4 * n, np.float64)]
        got, want = run_sim(fn, (n,), (64,), args), run_cl(cl_context, fn, (n,), (64,), args)
        assert_same(got, want, 0.0, [p.name for p in fn.params])


def test_runtime_launch_bit_identical(cl_context: Any) -> None:
    """Through ``k[g, l](...)`` on the device (the runtime's build options) and the simulator."""
    dev = clpy.get_device(cl_context.devices[0])
    n = 8192
    a, b, c = _cancelling(n, np.float32)
    for opt in (None, True):
        outs = []
        for d in ("sim", dev):
            out = np.zeros(n, np.float32)
            k_axpb[(n,), (64,)](a, b, c, out, device=d, fp_contract=opt)
            outs.append(out)
        assert (_bits(outs[0]) == _bits(outs[1])).all(), opt


# ----------------------------------------------------------------------------- the corpus

# Built-ins whose results are exact or correctly rounded on every conformant device (spec
# §2.4, table 36: 0 ulp), besides sqrt and fma, and the families that compute no floats.
_EXACT_MATH = frozenset(
    "sqrt fma fabs floor ceil trunc rint round copysign fmin fmax fmod fdim maxmag minmag "
    "min max clamp sign step select bitselect".split()
)
_EXACT_FAMILIES = frozenset(
    {"work-item", "synchronization", "integer", "relational", "misc-vector", "vload/vstore",
     "conversions", "address-space"}
)


def _float_type(t: Any) -> bool:
    return isinstance(t, (ScalarType, VectorType)) and element_of(t).is_float


def exact_class(fn: Function) -> bool:
    """Uses only + - * / sqrt fma, exact built-ins, conversions, comparisons and integer
    operations (floats), in the kernel and every device function it calls."""
    for f in (fn, *fn.callees):
        for node in walk(f.body):
            if isinstance(node, CallBuiltin):
                b = node.builtin
                if b.name in _EXACT_MATH or b.family in _EXACT_FAMILIES:
                    continue
                if b.family in ("atomics", "work-group", "sub-group") and not any(
                    _float_type(a.type) for a in node.args
                ):
                    continue
                return False
    return True


def _corpus() -> list[tuple[str, Any, tuple[int, ...], tuple[int, ...], Any]]:
    out = [(f"diff/{n}", k, g, l_, mk) for n, k, g, l_, mk in test_sim_diff.CASES]
    out += [(f"more/{n}", k, g, l_, mk) for n, k, g, l_, mk in test_sim_diff_more.CASES]
    nb = test_sim_diff_builtins.N
    out += [(f"builtins/{n}", k, (nb,), (32,), mk) for n, k, _, mk in
            test_sim_diff_builtins.CASES]
    return [c for c in out if exact_class(c[1].specialize().function)]


CORPUS = _corpus()


def test_corpus_is_not_empty() -> None:
    """The filter keeps the float kernels of the corpus, not only the integer ones."""
    names = {c[0] for c in CORPUS}
    assert {"diff/saxpy", "diff/float_ops", "diff/double", "more/matmul"} <= names, names
    assert len(CORPUS) >= 20


@pytest.mark.parametrize("contract", [False, True], ids=["unfused", "fp_contract"])
@pytest.mark.parametrize("case", CORPUS, ids=[c[0] for c in CORPUS])
def test_corpus_bit_identical(cl_context: Any, case: Any, contract: bool) -> None:
    _, kern, g, l_, make = case
    fn = kern.specialize().function
    if contract:
        fn = contract_function(fn)
    args = make()
    got, want = run_sim(fn, g, l_, args), run_cl(cl_context, fn, g, l_, args)
    assert_same(got, want, _tolerance(cl_context), [p.name for p in fn.params])


# ----------------------------------------------------------------------------- real programs


@clpy.kernel
def k_nbody_exact(pos: Global[float4], acc: Global[float4], n: int32):
    """All-pairs accelerations with 1/sqrt (correctly rounded) instead of rsqrt."""
    i = clpy.get_global_id(0)
    p = pos[i]
    a = float4(0.0)
    for j in range(n):
        q = pos[j]
        d = q - p
        d2 = d.x * d.x + d.y * d.y + d.z * d.z + 1e-3
        inv = 1.0 / clpy.sqrt(d2)
        a += d * (q.w * inv * inv * inv)
    acc[i] = a


@clpy.kernel
def k_jacobi(u: Global[float32], f: Global[float32], out: Global[float32], n: int32,
             h2: float32):
    """One Jacobi sweep of the 2-D Poisson problem (5-point stencil), borders copied."""
    x = clpy.get_global_id(0)
    y = clpy.get_global_id(1)
    k = y * n + x
    if 0 < x < n - 1 and 0 < y < n - 1:
        out[k] = 0.25 * (u[k - 1] + u[k + 1] + u[k - n] + u[k + n] - h2 * f[k])
    else:
        out[k] = u[k]


@clpy.kernel
def k_horner(x: Global[float64], c: Global[float64], out: Global[float64], deg: int32):
    i = clpy.get_global_id(0)
    v = x[i]
    r = c[deg]
    for j in range(deg - 1, -1, -1):
        r = r * v + c[j]
    out[i] = r


def _real_programs() -> list[tuple[str, Any, tuple[int, ...], tuple[int, ...], Any]]:
    n = 64
    return [
        ("matmul_tiled", matmul, (n, n), (16, 16),
         lambda: [RNG.standard_normal(n * n).astype(np.float32),
                  RNG.standard_normal(n * n).astype(np.float32), np.zeros(n * n, np.float32),
                  np.int32(n)]),
        ("nbody", k_nbody_exact, (256,), (64,),
         lambda: [RNG.standard_normal((256, 4)).astype(np.float32),
                  np.zeros((256, 4), np.float32), np.int32(256)]),
        ("jacobi", k_jacobi, (n, n), (8, 8),
         lambda: [RNG.standard_normal(n * n).astype(np.float32),
                  RNG.standard_normal(n * n).astype(np.float32), np.zeros(n * n, np.float32),
                  np.int32(n), np.float32(1.0 / n**2)]),
        ("horner", k_horner, (512,), (64,),
         lambda: [RNG.uniform(-1.5, 1.5, 512), RNG.standard_normal(12), np.zeros(512),
                  np.int32(11)]),
    ]


REAL = _real_programs()


@pytest.mark.parametrize("contract", [False, True], ids=["unfused", "fp_contract"])
@pytest.mark.parametrize("case", REAL, ids=[c[0] for c in REAL])
def test_real_programs_bit_identical(cl_context: Any, case: Any, contract: bool) -> None:
    _, kern, g, l_, make = case
    fn = kern.specialize_with({}, contract).function
    assert exact_class(fn)
    assert (_fma_calls(fn) > 0) is contract
    args = make()
    got, want = run_sim(fn, g, l_, args), run_cl(cl_context, fn, g, l_, args)
    assert_same(got, want, _tolerance(cl_context), [p.name for p in fn.params])


def test_build_options_follow_the_device(cl_context: Any) -> None:
    """``-cl-fp32-correctly-rounded-divide-sqrt`` exactly where the device reports
    CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT (the runtime's builds and the test helper alike)."""
    import pyopencl as cl

    cl_dev = cl_context.devices[0]
    reported = bool(cl_dev.single_fp_config & cl.device_fp_config.CORRECTLY_ROUNDED_DIVIDE_SQRT)
    dev = clpy.get_device(cl_dev)
    n = 64
    a, b, c = _cancelling(n, np.float32)
    k_axpb[(n,), (64,)](a, b, c, np.zeros(n, np.float32), device=dev)
    plans = [p for p in k_axpb.launches.plans.values() if getattr(p, "device", None) is dev]
    assert plans
    for p in plans:
        assert ("-cl-fp32-correctly-rounded-divide-sqrt" in p.options.split()) is reported
    assert bool(fp_options(cl_context)) is reported
    base = dev.target
    off = replace(base, info={**base.info, "correctly_rounded_divide_sqrt": False})
    assert fp_build_options(off) == ()


def _specials(dt: Any) -> np.ndarray:
    fi = np.finfo(dt)
    return np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, fi.max, -fi.max,
                     fi.tiny, fi.smallest_subnormal, -fi.smallest_subnormal, fi.tiny * 3.5,
                     fi.eps, 1 + fi.eps, 0.5 - fi.eps / 4, 3.0, 1e-3], dtype=dt)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_special_values_bit_identical(cl_context: Any, dt: Any) -> None:
    """Every combination of zeros, infinities, NaN, subnormals and the extremes through
    ``+ - * / sqrt fma`` and conversions (NaN payloads aside: any NaN equals any NaN)."""
    if dt is np.float64 and not cl_context.devices[0].double_fp_config:
        pytest.skip("the device has no double precision")
    s = _specials(dt)
    a, b, c = (x.ravel() for x in np.meshgrid(s, s, s, indexing="ij"))
    n = a.size
    kern = k_exact64 if dt is np.float64 else k_exact32
    for contract in (False, True):
        fn = kern.specialize_with({}, contract).function
        if dt is np.float64:
            args = [a, b, c, np.zeros(4 * n, dt)]
        else:
            args = [a, b, c, np.zeros(8 * n, dt), np.zeros(n, np.int32)]
        got, want = run_sim(fn, (n,), (1,), args), run_cl(cl_context, fn, (n,), (1,), args)
        names = [p.name for p in fn.params]
        if dt is np.float32:  # int32(x * 1000.0) of inf/NaN/huge is undefined in C (§1.2.3.3)
            got, want, names = got[:4], want[:4], names[:4]
        assert_same(got, want, _tolerance(cl_context), names)
