"""Common functions (spec §1.13.4) and the integer/common ``min``/``max``/``clamp``.
Float results are computed in double and rounded once to the argument type."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.types.core import element_of
from clpy_sim.builtins import f64, fix

if TYPE_CHECKING:
    from clpy_sim.call import Call
    from clpy_sim.frame import Frame


def _isf(call: Call) -> bool:
    return bool(element_of(call.params[0]).is_float)


def _min(call: Call, fr: Frame, args: list[Any]) -> Any:
    x, y = np.asarray(args[0]), np.asarray(args[1])
    if _isf(call):
        return fix(np.fmin(x, y), call.ret)
    return fix(np.minimum(x, y), call.ret)


def _max(call: Call, fr: Frame, args: list[Any]) -> Any:
    x, y = np.asarray(args[0]), np.asarray(args[1])
    if _isf(call):
        return fix(np.fmax(x, y), call.ret)
    return fix(np.maximum(x, y), call.ret)


def _clamp(call: Call, fr: Frame, args: list[Any]) -> Any:
    x, lo, hi = (np.asarray(a) for a in args)
    if _isf(call):
        return fix(np.fmin(np.fmax(x, lo), hi), call.ret)
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
