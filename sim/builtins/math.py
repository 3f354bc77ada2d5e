"""Math built-ins (spec §1.13.2). Float and half arguments are computed in double and rounded
once to the result type, which is within the ULP bounds of spec §2 (tables 7.1–7.3) for every
function; double arguments use NumPy's double routines. ``erf``, ``erfc``, ``lgamma`` and
``tgamma`` have no NumPy ufunc and use Python's ``math`` element by element (NumPy
``frompyfunc``). ``half_*``/``native_*`` are computed at full precision (allowed: their bounds
are looser)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.types.core import PointerType, Type, element_of
from clpy_sim import fpexact
from clpy_sim.builtins import elementwise, f64, fix, store_through
from clpy_sim.builtins.common import fmax, fmin

if TYPE_CHECKING:
    from clpy_sim.call import Call
    from clpy_sim.frame import Frame

PI = np.pi


def _pyfunc(fn: Any) -> Any:
    uf = np.frompyfunc(fn, 1, 1)

    def f(x: Any) -> Any:
        a = np.asarray(x, dtype=np.float64)
        return np.asarray(uf(a), dtype=np.float64) if a.size else a

    return f


def _safe(fn: Any) -> Any:
    def g(x: float) -> float:
        try:
            return float(fn(x))
        except (ValueError, OverflowError):
            if fn is math.lgamma:
                return math.inf
            if fn is math.gamma:
                if x == 0:
                    return math.copysign(math.inf, x)
                if x < 0 and (math.isinf(x) or x == math.floor(x)):
                    return math.nan  # tgamma(-inf) and negative integers (C99 F.9.5.4)
                if -1 < x < 0:
                    return -math.inf  # 1/x overflows (tgamma(-denormal))
                return math.inf if x > 0 else 0.0
            return math.nan

    return g


_erf = _pyfunc(_safe(math.erf))
_erfc = _pyfunc(_safe(math.erfc))
_lgamma = _pyfunc(_safe(math.lgamma))
_tgamma = _pyfunc(_safe(math.gamma))


def _reduce2(x: Any) -> Any:
    """x - 2*round(x/2): the argument of sinpi/cospi in [-1, 1], exact."""
    return x - 2.0 * np.rint(x * 0.5)


def _sinpi(x: Any) -> Any:
    r = _reduce2(x)
    out = np.sin(PI * r)
    out = np.where(r == np.trunc(r), np.copysign(0.0, x), out)  # sinpi(±n) is ±0 (§7.5.1)
    return np.where(np.isinf(x), np.nan, out)


def _cospi(x: Any) -> Any:
    r = np.abs(_reduce2(x))
    out = np.cos(PI * r)
    out = np.where(r == 0.5, 0.0, out)
    out = np.where(r == 0.0, 1.0, np.where(r == 1.0, -1.0, out))
    return np.where(np.isinf(x), np.nan, out)


def _tanpi(x: Any) -> Any:
    r = x - np.rint(x)  # tan has period 1
    out = np.tan(PI * r)
    out = np.where(r == 0, np.copysign(0.0, x) * np.where(np.rint(x) % 2 == 0, 1, -1), out)
    out = np.where(
        np.abs(r) == 0.5, np.copysign(np.inf, r) * np.where((np.rint(x) % 2) == 0, 1, -1), out
    )
    return np.where(np.isinf(x), np.nan, out)


def _round(x: Any) -> Any:
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


def _logb(x: Any) -> Any:
    m, e = np.frexp(x)
    out = (e - 1).astype(np.float64)
    out = np.where(x == 0, -np.inf, out)
    out = np.where(np.isinf(x), np.inf, out)
    return np.where(np.isnan(x), np.nan, out)


def _fdim(x: Any, y: Any) -> Any:
    return np.where(np.isnan(x) | np.isnan(y), np.nan, np.where(x > y, x - y, 0.0))


def _maxmag(x: Any, y: Any) -> Any:
    """§6.13.2: x if |x| > |y|, y if |y| > |x|, otherwise fmax(x, y) (common.py ``fmax``)."""
    ax, ay = np.abs(x), np.abs(y)
    return np.where(ax > ay, x, np.where(ay > ax, y, fmax(x, y)))


def _minmag(x: Any, y: Any) -> Any:
    """§6.13.2: x if |x| < |y|, y if |y| < |x|, otherwise fmin(x, y)."""
    ax, ay = np.abs(x), np.abs(y)
    return np.where(ax < ay, x, np.where(ay < ax, y, fmin(x, y)))


def _pow(x: Any, y: Any) -> Any:
    """``pow`` in double with the same bits for uniform and varying arguments.

    NumPy's loop for 0-d operands (a group-uniform value) is not its array loop: it takes
    shortcuts for some exponents (``y == 0.5`` is ``sqrt``, so ``pow(-0, 0.5)`` gave -0 and
    ``pow(-inf, 0.5)`` NaN against the +0 and +inf of C99 F.9.4.4, which §2.5 makes
    binding), and NaN operands come out with other signs. So the array loop always runs (on
    at least one element), and the NaN cases are explicit: ``pow(x, ±0)`` and ``pow(+1, y)``
    are 1 even for a NaN (F.9.4.4; the C library gives NaN for a signalling one), otherwise a
    NaN argument is returned, quieted, ``x``'s before ``y``'s (§2.5.1: "one of the NaN
    operands"; its sign and payload are kept)."""
    shape = np.broadcast_shapes(np.shape(x), np.shape(y))
    r = np.power(np.atleast_1d(x), np.atleast_1d(y)).reshape(shape)
    nx, ny = np.isnan(x), np.isnan(y)
    if nx.any() or ny.any():
        r = np.where(nx, x + x, np.where(ny, y + y, r))
        r = np.where((y == 0) | (x == 1), 1.0, r)
    return r


def _remainder(x: Any, y: Any) -> Any:
    ay = np.abs(y)
    r = np.fmod(x, 2.0 * ay)
    ar = np.abs(r)
    odd = ar >= ay
    ar = np.where(odd, ar - ay, ar)
    # 2 * ar, not 0.5 * ay: half of a denormal y rounds away (remainder(y, y) must be +0)
    flip = (2.0 * ar > ay) | ((2.0 * ar == ay) & odd)
    res = np.where(flip, ar - ay, ar)
    res = np.where(x < 0, -res, res)
    res = np.where(res == 0, np.copysign(0.0, x), res)
    res = np.where(np.isinf(ay) & np.isfinite(x), x, res)
    return np.where((ay == 0) | np.isinf(x) | np.isnan(x) | np.isnan(y), np.nan, res)


def _powr(x: Any, y: Any) -> Any:
    # powr is defined for x >= 0 only: -0 is +0 (powr(-0, -1) = +inf), NaN in is NaN out
    # (powr(NaN, 0) is NaN, unlike pow), spec §2.1 "powr"
    out = _pow(np.where(x == 0, np.abs(x), x), y)
    bad = (x < 0) | ((x == 0) & (y == 0)) | (np.isinf(x) & (y == 0)) | ((x == 1) & np.isinf(y))
    return np.where(bad | np.isnan(x) | np.isnan(y), np.nan, out)


def _rootn(x: Any, n: Any) -> Any:
    n = n.astype(np.float64)
    with np.errstate(all="ignore"):
        # in long double: 1/n is inexact, and |log x| up to 745 magnifies its error in double
        ld = np.longdouble
        mag = np.power(np.abs(x).astype(ld), ld(1) / np.where(n == 0, 1, n).astype(ld))
        mag = mag.astype(np.float64)
    odd = (np.abs(n) % 2) == 1
    out = np.where(x < 0, np.where(odd, -mag, np.nan), mag)
    out = np.where((x == 0) & (n < 0), np.where(odd, np.copysign(np.inf, x), np.inf), out)
    out = np.where((x == 0) & (n > 0), np.where(odd, x, 0.0), out)
    return np.where(n == 0, np.nan, out)


def _pown(x: Any, n: Any) -> Any:
    """pow with an integer exponent: ``pown(x, 0)`` is 1 for any x, even NaN (§2.5.1)."""
    return _pow(x, n.astype(np.float64))


def _exp10(x: Any) -> Any:
    return _pow(np.float64(10.0), x)


def _ldexp(call: Call, fr: Frame, args: list[Any]) -> Any:
    x, k = np.asarray(args[0]), np.asarray(args[1])
    dt = x.dtype
    k = np.clip(k.astype(np.int64), -100000, 100000).astype(np.int32)
    if dt == np.float16:
        return fix(np.ldexp(x.astype(np.float64), k), call.ret)
    return fix(np.ldexp(x, k), call.ret)


def _nextafter(call: Call, fr: Frame, args: list[Any]) -> Any:
    return fix(np.nextafter(np.asarray(args[0]), np.asarray(args[1])), call.ret)


def _nan(call: Call, fr: Frame, args: list[Any]) -> Any:
    code = np.asarray(args[0])
    dt = np.dtype(element_of(call.ret).dtype)
    bits = dt.itemsize * 8
    ut = np.dtype(f"uint{bits}")
    mant = {16: 10, 32: 23, 64: 52}[bits]
    exp_all = ((1 << (bits - 1 - mant)) - 1) << mant
    quiet = 1 << (mant - 1)
    pattern = (code.astype(ut) & ut.type((1 << mant) - 1)) | ut.type(exp_all | quiet)
    return fix(pattern.view(dt) if pattern.ndim else np.asarray(pattern).view(dt)[()], call.ret)


def _ilogb(call: Call, fr: Frame, args: list[Any]) -> Any:
    x = f64(args[0])
    m, e = np.frexp(x)
    out = (e - 1).astype(np.int64)
    out = np.where(x == 0, -(2**31), out)
    out = np.where(np.isinf(x), 2**31 - 1, out)
    out = np.where(np.isnan(x), -(2**31), out)
    return fix(out, call.ret)


def _fma(call: Call, fr: Frame, args: list[Any]) -> Any:
    """Correctly rounded (spec §2.4, table 36): sim/fpexact.py says how."""
    return fix(fpexact.fma(args[0], args[1], args[2], element_of(call.ret).dtype), call.ret)


def _mad(call: Call, fr: Frame, args: list[Any]) -> Any:
    a, b, c = (np.asarray(x) for x in args)
    return fix(a * b + c, call.ret)


def _fract(call: Call, fr: Frame, args: list[Any]) -> Any:
    x = f64(args[0])
    fl = np.floor(x)
    one_minus = float(
        np.nextafter(
            np.asarray(1.0, dtype=np.asarray(args[0]).dtype),
            np.asarray(0.0, dtype=np.asarray(args[0]).dtype),
        )
    )
    r = fmin(x - fl, one_minus)
    r = np.where(np.isinf(x), np.copysign(0.0, x), r)
    r = np.where(np.isnan(x), x + x, r)  # fract(NaN) returns the NaN (§2.5.1), not fmin's 1 - ulp
    store_through(call, fr, args[1], fix(fl, call.ret))
    return fix(r, call.ret)


def _modf(call: Call, fr: Frame, args: list[Any]) -> Any:
    x = f64(args[0])
    ip = np.trunc(x)
    r = np.where(np.isinf(x), np.copysign(0.0, x), x - ip)
    r = np.copysign(r, x)
    store_through(call, fr, args[1], fix(ip, call.ret))
    return fix(r, call.ret)


def _sincos(call: Call, fr: Frame, args: list[Any]) -> Any:
    x = f64(args[0])
    store_through(call, fr, args[1], fix(np.cos(x), call.ret))
    return fix(np.sin(x), call.ret)


def _pointee(t: Type) -> Type:
    assert isinstance(t, PointerType)
    return t.elem


def _frexp(call: Call, fr: Frame, args: list[Any]) -> Any:
    x = f64(args[0])
    m, e = np.frexp(x)
    e = np.where(np.isfinite(x), e, 0)
    store_through(call, fr, args[1], fix(e, _pointee(call.params[1])))
    return fix(m, call.ret)


def _lgamma_r(call: Call, fr: Frame, args: list[Any]) -> Any:
    x = f64(args[0])
    lg = _lgamma(x)
    g = _tgamma(x)
    sign = np.where(np.isnan(g) | (g >= 0), 1, -1)
    sign = np.where((x <= 0) & (x == np.floor(x)), 0, sign)
    store_through(call, fr, args[1], fix(sign, _pointee(call.params[1])))
    return fix(lg, call.ret)


def _remquo(call: Call, fr: Frame, args: list[Any]) -> Any:
    x, y = f64(args[0]), f64(args[1])
    r = _remainder(x, y)
    q = np.rint((x - r) / np.where(y == 0, 1.0, y))
    q = np.where(np.isfinite(q), q, 0.0)
    qi = (np.abs(q) % 128).astype(np.int64) * np.where(q < 0, -1, 1)
    store_through(call, fr, args[2], fix(qi, _pointee(call.params[2])))
    return fix(r, call.ret)


_E = elementwise
_WIDE_SQRT = _E(np.sqrt)


def _sqrt(call: Any, fr: Any, args: list[Any]) -> Any:
    """``sqrt`` of float or double in its own precision: IEEE square root is correctly
    rounded, and rounding the double result to float gives the same bits (53 >= 2 * 24 + 2
    bits: the double rounding is innocuous; checked over 2 million random patterns, NaNs
    included), without the two conversions of the wide path."""
    a = args[0]
    dt = getattr(a, "dtype", None)
    if (dt == np.float32 or dt == np.float64) and element_of(call.ret).dtype == dt:
        r = np.sqrt(a)
        return r[()] if type(r) is np.ndarray and r.ndim == 0 else r
    return _WIDE_SQRT(call, fr, args)


IMPLS: dict[str, Any] = {
    "acos": _E(np.arccos),
    "acosh": _E(np.arccosh),
    "acospi": _E(lambda x: np.arccos(x) / PI),
    "asin": _E(np.arcsin),
    "asinh": _E(np.arcsinh),
    "asinpi": _E(lambda x: np.arcsin(x) / PI),
    "atan": _E(np.arctan),
    "atanh": _E(np.arctanh),
    "atanpi": _E(lambda x: np.arctan(x) / PI),
    "cbrt": _E(np.cbrt),
    "ceil": _E(np.ceil),
    "cos": _E(np.cos),
    "cosh": _E(np.cosh),
    "cospi": _E(_cospi),
    "erfc": _E(_erfc),
    "erf": _E(_erf),
    "exp": _E(np.exp),
    "exp2": _E(np.exp2),
    "exp10": _E(_exp10),
    "expm1": _E(np.expm1),
    "fabs": _E(np.abs),
    "floor": _E(np.floor),
    "lgamma": _E(_lgamma),
    "log": _E(np.log),
    "log2": _E(np.log2),
    "log10": _E(np.log10),
    "log1p": _E(np.log1p),
    "logb": _E(_logb),
    "rint": _E(np.rint),
    "round": _E(_round),
    "rsqrt": _E(lambda x: 1.0 / np.sqrt(x)),
    "sin": _E(np.sin),
    "sinh": _E(np.sinh),
    "sinpi": _E(_sinpi),
    "sqrt": _sqrt,
    "tan": _E(np.tan),
    "tanh": _E(np.tanh),
    "tanpi": _E(_tanpi),
    "tgamma": _E(_tgamma),
    "trunc": _E(np.trunc),
    "atan2": _E(np.arctan2),
    "atan2pi": _E(lambda y, x: np.arctan2(y, x) / PI),
    "copysign": _E(np.copysign),
    "fdim": _E(_fdim),
    "fmod": _E(np.fmod),
    "hypot": _E(np.hypot),
    "maxmag": _E(_maxmag),
    "minmag": _E(_minmag),
    "nextafter": _nextafter,
    "pow": _E(_pow),
    "powr": _E(_powr),
    "remainder": _E(_remainder),
    "fmax": _E(fmax),
    "fmin": _E(fmin),
    "fma": _fma,
    "mad": _mad,
    "fract": _fract,
    "modf": _modf,
    "sincos": _sincos,
    "frexp": _frexp,
    "lgamma_r": _lgamma_r,
    "remquo": _remquo,
    "ilogb": _ilogb,
    "ldexp": _ldexp,
    "pown": _E(_pown),
    "rootn": _E(_rootn),
    "nan": _nan,
}
_FAST: dict[str, Any] = {
    "cos": np.cos,
    "exp": np.exp,
    "exp2": np.exp2,
    "exp10": _exp10,
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "recip": lambda x: 1.0 / x,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "sin": np.sin,
    "sqrt": np.sqrt,
    "tan": np.tan,
    "divide": lambda x, y: x / y,
    "powr": _powr,
}
for _n, _f in _FAST.items():
    IMPLS["half_" + _n] = _E(_f)
    IMPLS["native_" + _n] = _E(_f)
