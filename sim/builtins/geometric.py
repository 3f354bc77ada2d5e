"""Geometric functions (spec §1.13.5) on scalars and 2/3/4-vectors (component axis 0),
computed in double and rounded once."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.types.core import VectorType
from clpy_sim.builtins import f64, fix

if TYPE_CHECKING:
    from clpy_sim.call import Call
    from clpy_sim.frame import Frame


def _v(call: Call, a: Any, i: int = 0) -> Any:
    x = f64(a)
    return x if isinstance(call.params[i], VectorType) else x[None]


def _dot(call: Call, fr: Frame, args: list[Any]) -> Any:
    return fix((_v(call, args[0]) * _v(call, args[1], 1)).sum(axis=0), call.ret)


def _length(call: Call, fr: Frame, args: list[Any]) -> Any:
    return fix(np.sqrt((_v(call, args[0]) ** 2).sum(axis=0)), call.ret)


def _distance(call: Call, fr: Frame, args: list[Any]) -> Any:
    d = _v(call, args[0]) - _v(call, args[1], 1)
    return fix(np.sqrt((d**2).sum(axis=0)), call.ret)


def _normalize(call: Call, fr: Frame, args: list[Any]) -> Any:
    p = _v(call, args[0])
    n = np.sqrt((p**2).sum(axis=0))
    out = np.where(n == 0, p, p / np.where(n == 0, 1.0, n))
    return fix(out if isinstance(call.params[0], VectorType) else out[0], call.ret)


def _cross(call: Call, fr: Frame, args: list[Any]) -> Any:
    # in the element precision, as devices compute it (a1*b2 - a2*b1 cancels)
    a, b = np.asarray(args[0]), np.asarray(args[1])
    c = np.stack(
        np.broadcast_arrays(
            a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]
        )
    )
    if a.shape[0] == 4:
        c = np.concatenate([c, np.zeros_like(c[:1])])
    return fix(c, call.ret)


IMPLS: dict[str, Any] = {
    "dot": _dot,
    "length": _length,
    "distance": _distance,
    "normalize": _normalize,
    "cross": _cross,
    "fast_length": _length,
    "fast_distance": _distance,
    "fast_normalize": _normalize,
}
