"""Common functions (spec §1.13.4) and the integer/common ``min``/``max``/``clamp``.
Float results are computed in double and rounded once to the argument type.

``fmin``/``fmax`` (below, also math.py's) say which of two operands wins with ``np.where``
instead of NumPy's ``np.fmin``/``np.fmax``: NumPy's SIMD loops and its scalar loops (a
group-uniform value is a NumPy scalar; the last few elements of an array take the scalar
loop too) choose different operands for equal zeros and for two NaNs, so a kernel's bits
would depend on which arguments are uniform, the global size and the batch."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.types.core import element_of
from clpy_sim.builtins import f64, fix

if TYPE_CHECKING:
    from clpy_sim.call import Call
    from clpy_sim.frame import Frame


def fmin(x: Any, y: Any) -> Any:
    """OpenCL ``fmin`` (OpenCL C 2.0 §6.13.2, spec file §1.13.2), the same bits however NumPy
    runs it: ``x`` where ``y`` is a NaN ("if one argument is a NaN, fmin() returns the other
    argument", so two NaNs give ``x``'s, which §2.5.1 allows) or ``x < y``, else ``y``.

    The spec leaves the sign of ``fmin(+0, -0)`` open (footnote 29 defers to C99, whose
    F.9.9.2 does not fix it); equal arguments give ``y``, as PoCL does and NumPy's SIMD loop
    did (``fmin(+0.0, -0.0)`` is ``-0.0``, ``fmin(-0.0, +0.0)`` is ``+0.0``). NaN bits pass
    through unchanged (a NaN result is one of the operands)."""
    return _settle(np.fmin(x, y), x, y)


def fmax(x: Any, y: Any) -> Any:
    """OpenCL ``fmax`` (§6.13.2): ``x`` where ``y`` is a NaN or ``x > y``, else ``y``; the
    same operand rules as ``fmin`` (equal arguments give ``y``, two NaNs ``x``)."""
    return _settle(np.fmax(x, y), x, y)


def _settle(r: Any, x: Any, y: Any) -> Any:
    """``r = np.fmin(x, y)`` (or fmax) with the operand NumPy's loops may choose either of
    fixed: ``y`` where the arguments are equal (only zeros differ in bits); where ``r`` is a
    NaN (two NaNs, or a signalling NaN, which NumPy's scalar loop returns against a number)
    ``x`` if ``y`` is a NaN, else ``y``. NumPy's loop stays the bulk of the work: ``np.where``
    over every lane is ~10x slower with an irregular mask, and these masks are usually
    empty."""
    tie = np.equal(x, y)
    if tie.any():
        r = np.where(tie, y, r)
    nan = np.isnan(r)
    if nan.any():
        r = np.where(nan, np.where(np.isnan(y), x, y), r)
    return r


def _isf(call: Call) -> bool:
    return bool(element_of(call.params[0]).is_float)


def _min(call: Call, fr: Frame, args: list[Any]) -> Any:
    """Integers: the smaller. Floats (§6.13.4: undefined for a NaN argument, and the text
    "y if y < x, otherwise x" is C99's fmin, whose zero sign is open): ``fmin``, so a NaN
    argument is ignored and the bits do not depend on uniformity or lane position."""
    x, y = np.asarray(args[0]), np.asarray(args[1])
    if _isf(call):
        return fix(fmin(x, y), call.ret)
    return fix(np.minimum(x, y), call.ret)


def _max(call: Call, fr: Frame, args: list[Any]) -> Any:
    """Integers: the larger. Floats: ``fmax`` (see ``_min``)."""
    x, y = np.asarray(args[0]), np.asarray(args[1])
    if _isf(call):
        return fix(fmax(x, y), call.ret)
    return fix(np.maximum(x, y), call.ret)


def _clamp(call: Call, fr: Frame, args: list[Any]) -> Any:
    """``fmin(fmax(x, minval), maxval)`` for floats, as §6.13.4 defines it."""
    x, lo, hi = (np.asarray(a) for a in args)
    if _isf(call):
        return fix(fmin(fmax(x, lo), hi), call.ret)
    return fix(np.minimum(np.maximum(x, lo), hi), call.ret)


def _f(fn: Any) -> Any:
    def impl(call: Call, fr: Frame, args: list[Any]) -> Any:
        return fix(fn(*(f64(a) for a in args)), call.ret)

    return impl


def _sign(x: Any) -> Any:
    return np.where(np.isnan(x), 0.0, np.where(x > 0, 1.0, np.where(x < 0, -1.0, x)))


def _mix(call: Call, fr: Frame, args: list[Any]) -> Any:
    x, y, a = (np.asarray(v) for v in args)
    return fix(x + (y - x) * a, call.ret)


def _step(call: Call, fr: Frame, args: list[Any]) -> Any:
    edge, x = f64(args[0]), f64(args[1])
    return fix(np.where(x < edge, 0.0, 1.0), call.ret)


def _smoothstep(e0: Any, e1: Any, x: Any) -> Any:
    t = np.clip((x - e0) / (e1 - e0), 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


def _smooth(call: Call, fr: Frame, args: list[Any]) -> Any:
    return fix(_smoothstep(*(f64(a) for a in args)), call.ret)


IMPLS: dict[str, Any] = {
    "min": _min,
    "max": _max,
    "clamp": _clamp,
    "degrees": _f(lambda r: r * (180.0 / np.pi)),
    "radians": _f(lambda d: d * (np.pi / 180.0)),
    "sign": _f(_sign),
    "mix": _mix,
    "step": _step,
    "smoothstep": _smooth,
}
