"""Math and common float built-ins of the native engine (sim/native/builtins_ops.py).

sim/builtins/math.py computes a float (and half) function in double and rounds the result
once; a double function is NumPy's float64 routine. The C text does the same with the
prelude's ``clpy_m_<name>`` (double in, double out): ``(float)clpy_m_sin((double)x)``.

Where ``clpy_m_<name>`` calls the C library (sin, exp, pow ...), its bits equal the NumPy
engine's only if NumPy's float64 loop calls the same C library routine. NumPy dispatches at
run time on the CPU: on x86-64 with AVX2 (the machine this was measured on) these loops call
libm, but with AVX512 NumPy has its own or SVML routines for most of them, which differ in
the last bit. ``libm_agrees(name)`` compares NumPy with the C library on a few thousand
arguments once per process (ctypes), and the function is native only where every one agrees.
tanh (NumPy's own AVX2 routine here), lgamma and tgamma (CPython's ``math``) are never native;
neither is anything of half. rootn runs in long double through ``powl``, as NumPy's longdouble
``power`` does (no SIMD routine on any CPU).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math
from collections.abc import Callable

import numpy as np

from clpy.types.core import ScalarType

LaneGen = Callable[[list[ScalarType], ScalarType, list[str]], "str | None"]

# clpy_m_<name> calls this C library function (NumPy's float64 routine must be the same)
_LIBM: dict[str, str] = {
    n: n
    for n in (
        "acos asin atan acosh asinh atanh cbrt cos cosh sin sinh tan exp exp2 expm1 log log2 "
        "log10 log1p erf erfc atan2 hypot pow fmod"
    ).split()
}
_LIBM.update(
    {
        "acospi": "acos",
        "asinpi": "asin",
        "atanpi": "atan",
        "atan2pi": "atan2",
        "sinpi": "sin",
        "cospi": "cos",
        "tanpi": "tan",
        "exp10": "pow",
        "powr": "pow",
        "pown": "pow",
    }
)
_NUMPY: dict[str, Callable[..., object]] = {
    "acos": np.arccos,
    "asin": np.arcsin,
    "atan": np.arctan,
    "acosh": np.arccosh,
    "asinh": np.arcsinh,
    "atanh": np.arctanh,
    "cbrt": np.cbrt,
    "cos": np.cos,
    "cosh": np.cosh,
    "sin": np.sin,
    "sinh": np.sinh,
    "tan": np.tan,
    "exp": np.exp,
    "exp2": np.exp2,
    "expm1": np.expm1,
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "log1p": np.log1p,
    "erf": np.frompyfunc(math.erf, 1, 1),
    "erfc": np.frompyfunc(math.erfc, 1, 1),
    "atan2": np.arctan2,
    "hypot": np.hypot,
    "pow": np.power,
    "fmod": np.fmod,
}
_BINARY_LIBM = ("atan2", "hypot", "pow", "fmod")


def _sample(rng: np.random.Generator, n: int) -> np.ndarray:
    bits = rng.integers(0, 2**63, n, dtype=np.uint64)
    parts = [
        rng.uniform(-1, 1, n),
        rng.uniform(-10, 10, n),
        rng.uniform(-800, 800, n),
        np.ldexp(rng.uniform(0.5, 1, n), rng.integers(-1074, 1024, n)),
        bits.view(np.float64),
    ]
    x = np.concatenate(parts)
    return x[np.isfinite(x)]


@functools.cache
def libm_agrees(name: str) -> bool:
    """Whether NumPy's float64 routine behind ``clpy_m_<name>`` gives the C library's bits on
    every argument of a fixed sample (finite results; NaN results are the prelude's)."""
    fn = _LIBM.get(name)
    if fn is None:
        return True
    path = ctypes.util.find_library("m")
    try:
        lib = ctypes.CDLL(path)
        cfun = getattr(lib, fn)
    except (OSError, AttributeError, TypeError):
        return False
    binary = fn in _BINARY_LIBM
    cfun.restype = ctypes.c_double
    cfun.argtypes = [ctypes.c_double] * (2 if binary else 1)
    rng = np.random.default_rng(20261123)
    x = _sample(rng, 600)
    y = _sample(rng, 600)[: x.size] if binary else None
    if y is not None:
        x = x[: y.size]
    with np.errstate(all="ignore"):
        ref = np.asarray(_NUMPY[fn](x, y) if y is not None else _NUMPY[fn](x), dtype=np.float64)
    if y is not None:
        got = np.array([cfun(a, b) for a, b in zip(x.tolist(), y.tolist())])
    else:
        got = np.array([cfun(a) for a in x.tolist()])
    keep = ~np.isnan(ref)
    return bool(np.array_equal(ref[keep].view(np.uint64), got[keep].view(np.uint64)))


def _wide(name: str) -> LaneGen:
    """sim/builtins/__init__.py ``elementwise``: float arguments computed in double, the result
    rounded once to the return type; integer arguments (pown's n) passed as they are."""

    def gen(pe: list[ScalarType], re: ScalarType, a: list[str]) -> str | None:
        if not re.is_float or not libm_agrees(name):
            return None
        xs = ", ".join(
            (f"clpy_wf({x})" if p.bits == 32 else x) if p.is_float else x for p, x in zip(pe, a)
        )
        call = f"clpy_m_{name}({xs})"
        return call if re.bits == 64 else f"(float){call}"

    return gen


def _fast(name: str) -> LaneGen:
    """half_<name> and native_<name>: NumPy's full-precision function (math.py ``_FAST``)."""
    return _wide(name)


def _ilogb(pe: list[ScalarType], re: ScalarType, a: list[str]) -> str:
    return f"clpy_m_ilogb((double)({a[0]}))"


def _nan(pe: list[ScalarType], re: ScalarType, a: list[str]) -> str | None:
    # math.py _nan: the code's low mantissa bits, exponent all ones, quiet bit set
    if re.bits == 32:
        return f"clpy_bitsf(((uint)({a[0]}) & 0x7fffffu) | 0x7fc00000u)"
    if re.bits == 64:
        return f"clpy_bitsd(((ulong)({a[0]}) & 0xfffffffffffffull) | 0x7ff8000000000000ull)"
    return None


def _own(fn32: str, fn64: str) -> LaneGen:
    """NumPy's float32 loop for a float (the C function ``fn32``), float64 for a double."""

    def gen(pe: list[ScalarType], re: ScalarType, a: list[str]) -> str | None:
        if not re.is_float:
            return None
        return f"{fn32 if re.bits == 32 else fn64}({', '.join(a)})"

    return gen


_WIDE_NAMES = (
    "acos acosh acospi asin asinh asinpi atan atanh atanpi cbrt ceil cos cosh cospi erfc erf "
    "exp exp2 exp10 expm1 fabs floor log log2 log10 log1p logb rint round rsqrt sin sinh sinpi "
    "sqrt tan tanpi trunc atan2 atan2pi copysign fdim fmod hypot maxmag minmag pow powr "
    "remainder fmax fmin pown rootn degrees radians sign smoothstep"
).split()
_FAST_NAMES = "cos exp exp2 exp10 log log2 log10 recip rsqrt sin sqrt tan divide powr".split()

LANE: dict[str, LaneGen] = {name: _wide(name) for name in _WIDE_NAMES}
for _n in _FAST_NAMES:
    LANE["half_" + _n] = _fast(_n)
    LANE["native_" + _n] = _fast(_n)
LANE.update(
    {
        "ilogb": _ilogb,
        "nan": _nan,
        # ldexp and nextafter run NumPy's float32 loop on floats: the C library's ldexpf and
        # nextafterf (NumPy calls them)
        "ldexp": _own("ldexpf", "ldexp"),
        "nextafter": _own("nextafterf", "nextafter"),
    }
)
