"""Integer built-ins (spec §1.13.3) with exact fixed-width semantics, vectorized with NumPy.

Saturating and high-half operations on 8/16/32-bit types compute in 64-bit; 64-bit ones use
carry-free 32-bit splits. ``mad_sat`` on 64-bit types falls back to Python integers per
element (rare)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.types.core import ScalarType, element_of
from clpy_sim.builtins import fix

if TYPE_CHECKING:
    from clpy_sim.call import Call
    from clpy_sim.frame import Frame

_POP8 = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def _et(call: Call, i: int = 0) -> ScalarType:
    return element_of(call.params[i])


def _u(a: Any, e: ScalarType) -> Any:
    return np.asarray(a).astype(e.dtype).view(np.dtype(f"uint{e.bits}"))


def popcount_u(u: Any) -> Any:
    shape = np.shape(u)  # ascontiguousarray makes a 0-d (uniform) value 1-d: keep the shape
    b = np.ascontiguousarray(u)
    by = b.view(np.uint8).reshape(*b.shape, b.dtype.itemsize)
    return _POP8[by].sum(axis=-1, dtype=np.int64).reshape(shape)


def _bitlen(u: Any, bits: int) -> Any:
    v = u.astype(np.uint64)
    r = np.zeros(v.shape, dtype=np.int64)
    s = 32
    while s:
        if s < bits:
            m = v >= np.uint64(1 << s)
            r = r + np.where(m, s, 0)
            v = np.where(m, v >> np.uint64(s), v)
        s //= 2
    return r + (v > 0)


def _clz(call: Call, fr: Frame, args: list[Any]) -> Any:
    e = _et(call)
    return fix(e.bits - _bitlen(_u(args[0], e), e.bits), call.ret)


def _popcount(call: Call, fr: Frame, args: list[Any]) -> Any:
    e = _et(call)
    return fix(popcount_u(_u(args[0], e)), call.ret)


def _ctz(call: Call, fr: Frame, args: list[Any]) -> Any:
    e = _et(call)
    u = _u(args[0], e)
    low = (u & (~u + u.dtype.type(1))) - u.dtype.type(1)
    return fix(popcount_u(low), call.ret)


def _range(e: ScalarType) -> tuple[int, int]:
    info = np.iinfo(e.dtype)
    return int(info.min), int(info.max)


def _sat_arith(op: str) -> Any:
    def impl(call: Call, fr: Frame, args: list[Any]) -> Any:
        e = _et(call)
        a, b = np.asarray(args[0]), np.asarray(args[1])
        lo, hi = _range(e)
        if e.bits < 64:
            w = np.int64
            r = a.astype(w) + b.astype(w) if op == "+" else a.astype(w) - b.astype(w)
            return fix(np.clip(r, lo, hi), call.ret)
        r = a + b if op == "+" else a - b
        if not e.is_signed:
            over = r < a if op == "+" else a < b
            return fix(np.where(over, e.dtype.type(hi if op == "+" else 0), r), call.ret)
        if op == "+":
            over = ((a >= 0) == (b >= 0)) & ((r >= 0) != (a >= 0))
        else:
            over = ((a >= 0) != (b >= 0)) & ((r >= 0) != (a >= 0))
        sat = np.where(a >= 0, e.dtype.type(hi), e.dtype.type(lo))
        return fix(np.where(over, sat, r), call.ret)

    return impl


def _hadd(call: Call, fr: Frame, args: list[Any]) -> Any:
    a, b = np.asarray(args[0]), np.asarray(args[1])
    one = a.dtype.type(1)
    return fix((a >> one) + (b >> one) + (a & b & one), call.ret)


def _rhadd(call: Call, fr: Frame, args: list[Any]) -> Any:
    a, b = np.asarray(args[0]), np.asarray(args[1])
    one = a.dtype.type(1)
    return fix((a >> one) + (b >> one) + ((a | b) & one), call.ret)


def _mulhi_u64(a: Any, b: Any) -> Any:
    a, b = a.astype(np.uint64), b.astype(np.uint64)
    m32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    a0, a1 = a & m32, a >> s32
    b0, b1 = b & m32, b >> s32
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = (p00 >> s32) + (p01 & m32) + (p10 & m32)
    return p11 + (p01 >> s32) + (p10 >> s32) + (mid >> s32)


def mul_hi(a: Any, b: Any, e: ScalarType) -> Any:
    a, b = np.asarray(a), np.asarray(b)
    if e.bits < 64:
        w = np.int64 if e.is_signed or e.bits < 32 else np.uint64
        return (a.astype(w) * b.astype(w)) >> w(e.bits)
    hi = _mulhi_u64(a, b)
    if e.is_signed:
        hi = (
            hi
            - np.where(a < 0, b.astype(np.uint64), np.uint64(0))
            - np.where(b < 0, a.astype(np.uint64), np.uint64(0))
        )
        return hi.view(np.int64) if hi.ndim else np.asarray(hi).view(np.int64)[()]
    return hi


def _mul_hi(call: Call, fr: Frame, args: list[Any]) -> Any:
    return fix(mul_hi(args[0], args[1], _et(call)), call.ret)


def _mad_hi(call: Call, fr: Frame, args: list[Any]) -> Any:
    e = _et(call)
    return fix(fix(mul_hi(args[0], args[1], e), call.ret) + np.asarray(args[2]), call.ret)


def _rotate(call: Call, fr: Frame, args: list[Any]) -> Any:
    e = _et(call)
    u = _u(args[0], e)
    ut = u.dtype.type
    s = _u(args[1], e) & ut(e.bits - 1)
    r = np.where(s == 0, u, (u << s) | (u >> ((ut(e.bits) - s) & ut(e.bits - 1))))
    return fix(np.asarray(r, dtype=u.dtype).view(e.dtype), call.ret)


def _mad_sat(call: Call, fr: Frame, args: list[Any]) -> Any:
    e = _et(call)
    lo, hi = _range(e)
    a, b, c = (np.asarray(x) for x in args)
    if e.bits < 32 or (e.bits == 32 and e.is_signed):
        r = a.astype(np.int64) * b.astype(np.int64) + c.astype(np.int64)
        return fix(np.clip(r, lo, hi), call.ret)
    if e.bits == 32:
        ru = a.astype(np.uint64) * b.astype(np.uint64) + c.astype(np.uint64)
        return fix(np.minimum(ru, np.uint64(hi)), call.ret)
    f = np.frompyfunc(lambda x, y, z: max(lo, min(hi, int(x) * int(y) + int(z))), 3, 1)
    return fix(np.asarray(f(a, b, c), dtype=object).astype(e.dtype), call.ret)


def _abs(call: Call, fr: Frame, args: list[Any]) -> Any:
    a = np.asarray(args[0])
    return fix(np.abs(a).astype(element_of(call.ret).dtype), call.ret)


def _abs_diff(call: Call, fr: Frame, args: list[Any]) -> Any:
    e = _et(call)
    a, b = np.asarray(args[0]), np.asarray(args[1])
    ua, ub = _u(a, e), _u(b, e)
    return fix(np.where(a > b, ua - ub, ub - ua), call.ret)


def _upsample(call: Call, fr: Frame, args: list[Any]) -> Any:
    e = _et(call)
    out = element_of(call.ret)
    hi = np.asarray(args[0]).astype(out.dtype)
    lo = _u(args[1], element_of(call.params[1])).astype(np.dtype(f"uint{out.bits}"))
    return fix(
        (hi.view(np.dtype(f"uint{out.bits}")) << np.uint64(e.bits).astype(lo.dtype)) | lo, call.ret
    )


def _mul24(call: Call, fr: Frame, args: list[Any]) -> Any:
    return fix(np.asarray(args[0]) * np.asarray(args[1]), call.ret)


def _mad24(call: Call, fr: Frame, args: list[Any]) -> Any:
    return fix(np.asarray(args[0]) * np.asarray(args[1]) + np.asarray(args[2]), call.ret)


IMPLS: dict[str, Any] = {
    "clz": _clz,
    "popcount": _popcount,
    "ctz": _ctz,
    "add_sat": _sat_arith("+"),
    "sub_sat": _sat_arith("-"),
    "hadd": _hadd,
    "rhadd": _rhadd,
    "mul_hi": _mul_hi,
    "mad_hi": _mad_hi,
    "rotate": _rotate,
    "mad_sat": _mad_sat,
    "abs": _abs,
    "abs_diff": _abs_diff,
    "upsample": _upsample,
    "mul24": _mul24,
    "mad24": _mad24,
}
