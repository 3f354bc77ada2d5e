"""Relational functions (spec §1.13.6): scalars give int 1/0, vectors -1/0 per component."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.types.core import VectorType, element_of
from clpy_sim.builtins import fix

if TYPE_CHECKING:
    from clpy_sim.call import Call
    from clpy_sim.frame import Frame


def _truth(call: Call, r: Any) -> Any:
    if isinstance(call.ret, VectorType):
        return fix(-np.asarray(r).astype(np.int64), call.ret)
    return fix(np.asarray(r).astype(np.int64), call.ret)


def _cmp(fn: Any) -> Any:
    def impl(call: Call, fr: Frame, args: list[Any]) -> Any:
        return _truth(call, fn(np.asarray(args[0]), np.asarray(args[1])))

    return impl


def _test(fn: Any) -> Any:
    def impl(call: Call, fr: Frame, args: list[Any]) -> Any:
        return _truth(call, fn(np.asarray(args[0])))

    return impl


def _isnormal(x: Any) -> Any:
    tiny = np.finfo(x.dtype).tiny
    return np.isfinite(x) & (np.abs(x) >= tiny)


def _msb(call: Call, x: Any) -> Any:
    return np.asarray(x) < 0


def _any(call: Call, fr: Frame, args: list[Any]) -> Any:
    m = _msb(call, args[0])
    r = m.any(axis=0) if isinstance(call.params[0], VectorType) else m
    return fix(np.asarray(r).astype(np.int32), call.ret)


def _all(call: Call, fr: Frame, args: list[Any]) -> Any:
    m = _msb(call, args[0])
    r = m.all(axis=0) if isinstance(call.params[0], VectorType) else m
    return fix(np.asarray(r).astype(np.int32), call.ret)


def _bits(a: Any) -> Any:
    a = np.asarray(a)
    return (
        a.view(np.dtype(f"uint{a.dtype.itemsize * 8}"))
        if a.ndim
        else a.reshape(1).view(np.dtype(f"uint{a.dtype.itemsize * 8}"))[0]
    )


def _bitselect(call: Call, fr: Frame, args: list[Any]) -> Any:
    e = element_of(call.ret)
    a, b, c = (_bits(np.asarray(x, dtype=e.dtype)) for x in args)
    a, b, c = np.broadcast_arrays(a, b, c)
    r = (a & ~c) | (b & c)
    # ascontiguousarray makes a 0-d (uniform) value 1-d: keep the shape
    return fix(np.ascontiguousarray(r).view(e.dtype).reshape(r.shape), call.ret)


def _select(call: Call, fr: Frame, args: list[Any]) -> Any:
    a, b, c = (np.asarray(x) for x in args)
    if isinstance(call.params[2], VectorType):
        pick = (
            c < 0
            if element_of(call.params[2]).is_signed
            else (c >> c.dtype.type(c.dtype.itemsize * 8 - 1)) != 0
        )
    else:
        pick = c != 0
    return fix(np.where(pick, b, a), call.ret)


IMPLS: dict[str, Any] = {
    "isequal": _cmp(np.equal),
    "isnotequal": _cmp(np.not_equal),
    "isgreater": _cmp(np.greater),
    "isgreaterequal": _cmp(np.greater_equal),
    "isless": _cmp(np.less),
    "islessequal": _cmp(np.less_equal),
    "islessgreater": _cmp(lambda x, y: (x < y) | (x > y)),
    "isfinite": _test(np.isfinite),
    "isinf": _test(np.isinf),
    "isnan": _test(np.isnan),
    "isnormal": _test(_isnormal),
    "signbit": _test(np.signbit),
    "isordered": _cmp(lambda x, y: ~(np.isnan(x) | np.isnan(y))),
    "isunordered": _cmp(lambda x, y: np.isnan(x) | np.isnan(y)),
    "any": _any,
    "all": _all,
    "bitselect": _bitselect,
    "select": _select,
}
