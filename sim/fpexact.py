"""Correctly rounded fused multiply-add on lane arrays (NumPy has no ``fma``).

``fma(a, b, c)`` must be ``RN(a*b + c)``, one rounding of the exact value (spec §1.13.2 and
§2.4, table 36; IEEE 754-2008 §5.4.1). Two proven methods, both vectorized:

* **half and float** (``fma_narrow``): the product of two p-bit numbers has at most 2p ≤ 48
  significant bits, so ``p = a*b`` in double is exact; ``s = p + c`` in double plus its exact
  error ``e`` (Knuth's TwoSum, D. Knuth, TAOCP vol. 2, §4.2.2, theorem B) give ``s`` rounded
  *to odd* (when ``e != 0`` and ``s``'s last bit is even, step one ulp toward ``e``), then one
  round-to-nearest to the narrow type. Rounding to odd in a precision ≥ p + 2 followed by
  rounding to nearest in precision p is the correctly rounded result (S. Boldo and
  G. Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using
  rounding to odd", IEEE Trans. Computers 57(4), 2008, §2); double has 53 ≥ 24 + 2
  bits, and float's subnormals are a coarser grid of the same double, so it holds there too.
  The double exponent range covers every float product (≥ 2^-298), so no step underflows or
  overflows for finite inputs.
* **double** (``fma_double``): Dekker's TwoProduct with Veltkamp's splitting (T. J. Dekker,
  "A floating-point technique for extending the available precision", Numer. Math. 18, 1971)
  gives ``a*b = uh + ul`` exactly, TwoSum gives ``c + uh = th + tl`` exactly, then
  ``z = RN(th + RO(tl + ul))`` (Boldo and Melquiond 2008, their emulated FMA: correctly
  rounded when no underflow or overflow occurs). Lanes whose operands could leave that safe range
  (magnitudes beyond 2^±900 or a product beyond 2^±900) are computed exactly with Python's
  ``fractions.Fraction`` and CPython's correctly rounded integer true division (also for
  subnormal and overflowing results).

Zero results take IEEE's sign rule for sums (computed as ``a*b + c`` in double, exact when the
true result is zero); infinities and NaNs propagate as ``a*b + c`` does, except that finite
``a`` and ``b`` with an infinite ``c`` give ``c`` even when ``a*b`` overflows.

``/`` and ``sqrt`` need nothing here: NumPy's float and double ``/`` and ``sqrt`` are the
IEEE operations, and computing a float ``/`` or ``sqrt`` in double and rounding once to float
is also correctly rounded, because double rounding is innocuous for ``+ - * / sqrt`` when the
wider precision is at least 2p + 2 (53 ≥ 2·24 + 2; S. A. Figueroa, "When is double rounding
innocuous?", SIGNUM Newsletter 30(3), 1995).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

_SPLIT = 134217729.0  # 2**27 + 1: Veltkamp's splitting constant for 53-bit doubles
# The fast double path's safe range: Veltkamp's split stays finite, the product's error and
# every TwoSum error are multiples of 2^-1005 or coarser (never subnormal), nothing overflows.
_BIG = 2.0**900
_TINY = 2.0**-900


def _two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    """``a + b = s + e`` exactly (Knuth), for finite ``a``, ``b`` and ``s``."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


def _split(a: Any) -> tuple[Any, Any]:
    t = _SPLIT * a
    hi = t - (t - a)
    return hi, a - hi


def _two_prod(a: Any, b: Any) -> tuple[Any, Any]:
    """``a * b = p + e`` exactly (Dekker), without overflow or underflow."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def _to_odd(s: Any, e: Any) -> Any:
    """``s`` (a double, the nearest to ``s + e``) rounded to odd instead: when the sum was
    inexact and ``s``'s last significand bit is 0, the neighbour toward ``e``."""
    shape = np.shape(s)  # ascontiguousarray makes a 0-d (uniform) value 1-d: keep the shape
    bits = np.ascontiguousarray(s, dtype=np.float64).view(np.int64)
    even = (bits & 1) == 0
    step = np.where((e != 0) & even, np.where((e > 0) == (s > 0), 1, -1), 0)
    out: Any = (bits + step).view(np.float64).reshape(shape)
    return out


def fma_narrow(a: Any, b: Any, c: Any, dtype: np.dtype[Any]) -> Any:
    """Correctly rounded ``a*b + c`` for float32 or float16 operands, as ``dtype``."""
    a64, b64, c64 = (np.asarray(x, dtype=np.float64) for x in (a, b, c))
    with np.errstate(all="ignore"):
        p = a64 * b64  # exact
        s, e = _two_sum(p, c64)
        fine = np.isfinite(s)
        odd = _to_odd(np.where(fine, s, 0.0), np.where(fine, e, 0.0))
        return np.where(fine, odd, s).astype(dtype)


def fma_double(a: Any, b: Any, c: Any) -> Any:
    """Correctly rounded ``a*b + c`` for float64 operands."""
    a, b, c = (np.asarray(x, dtype=np.float64) for x in (a, b, c))
    a, b, c = np.broadcast_arrays(a, b, c)
    with np.errstate(all="ignore"):
        naive = a * b + c
        aa, ab_, ac = np.abs(a), np.abs(b), np.abs(c)
        prod = aa * ab_
        finite = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
        in_range = (
            ((aa == 0) | ((aa >= _TINY) & (aa <= _BIG)))
            & ((ab_ == 0) | ((ab_ >= _TINY) & (ab_ <= _BIG)))
            & ((aa == 0) | (ab_ == 0) | ((prod >= _TINY) & (prod <= _BIG)))
            & ((ac == 0) | ((ac >= _TINY) & (ac <= _BIG)))
        )
        safe = finite & in_range
        sa, sb, sc = (np.where(safe, x, 0.0) for x in (a, b, c))
        uh, ul = _two_prod(sa, sb)
        th, tl = _two_sum(sc, uh)
        v, w = _two_sum(tl, ul)
        z = th + _to_odd(v, w)
        out = np.where(safe & (z != 0), z, naive)
        # finite a*b (however large) plus an infinite c is c; a*b in double may overflow
        # and make inf - inf = NaN of it
        ab_finite = np.isfinite(a) & np.isfinite(b)
        out = np.where(ab_finite & np.isinf(c), c, out)
    hard = np.flatnonzero(finite & ~safe)
    if hard.size:
        flat = out.reshape(-1).copy()
        fa, fb, fc = a.reshape(-1), b.reshape(-1), c.reshape(-1)
        for i in hard:
            flat[i] = _exact_fma(float(fa[i]), float(fb[i]), float(fc[i]), float(flat[i]))
        out = flat.reshape(out.shape)
    return out[()] if out.ndim == 0 else out


def _exact_fma(a: float, b: float, c: float, naive: float) -> float:
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        return naive  # IEEE's sign of an exact zero sum
    try:
        return float(exact)  # int / int: correctly rounded in CPython (subnormals too)
    except OverflowError:
        return float("inf") if exact > 0 else float("-inf")


def fma(a: Any, b: Any, c: Any, dtype: np.dtype[Any]) -> Any:
    """Correctly rounded ``fma`` in ``dtype`` (float16, float32 or float64)."""
    if dtype == np.float64:
        return fma_double(a, b, c)
    return fma_narrow(a, b, c, dtype)
