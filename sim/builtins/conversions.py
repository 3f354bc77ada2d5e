"""Explicit conversions (spec §1.2.3, §1.2.4): ``convert_T[_sat][_rte|_rtz|_rtp|_rtn]`` and
``as_T``. Implementations are generated from each built-in's ``Conversion`` descriptor (the
destination is the overload's return type)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.builtins.registry import REGISTRY, Conversion
from clpy.types.core import ScalarType, Type, VectorType, element_of
from clpy_sim.builtins import fix

if TYPE_CHECKING:
    from clpy_sim.call import Call
    from clpy_sim.frame import Frame

_ROUND = {None: None, "rte": np.rint, "rtz": np.trunc, "rtp": np.ceil, "rtn": np.floor}


def directed_float(x: Any, dst: ScalarType, mode: str | None) -> Any:
    """Round the (wider) floats ``x`` to ``dst`` in the given IEEE rounding mode."""
    x = (
        np.asarray(x, dtype=np.float64)
        if np.asarray(x).dtype.kind != "f" or np.asarray(x).dtype.itemsize < 8
        else np.asarray(x)
    )
    f = x.astype(dst.dtype)
    if mode in (None, "rte"):
        return f
    back = f.astype(np.float64)
    zero, inf = dst.dtype.type(0), dst.dtype.type(np.inf)
    if mode == "rtz":
        adj = np.abs(back) > np.abs(x)
        target = np.where(adj, np.nextafter(f, zero), f)
    elif mode == "rtp":
        target = np.where(back < x, np.nextafter(f, inf), f)
    else:
        target = np.where(back > x, np.nextafter(f, -inf), f)
    return np.where(np.isnan(x), f, target).astype(dst.dtype)


def int_from_int(x: Any, src: ScalarType, dst: ScalarType, sat: bool) -> Any:
    x = np.asarray(x)
    if not sat:
        return x.astype(dst.dtype)
    dinfo = np.iinfo(dst.dtype)
    if src.is_signed and not dst.is_signed:
        x = np.where(x < 0, src.dtype.type(0), x)
        if dst.bits < src.bits:
            x = np.minimum(x, src.dtype.type(dinfo.max))
    elif not src.is_signed and dst.is_signed:
        if src.bits >= dst.bits:
            x = np.minimum(x, src.dtype.type(dinfo.max))
    elif dst.bits < src.bits:
        x = np.clip(x, src.dtype.type(dinfo.min), src.dtype.type(dinfo.max))
    return np.asarray(x).astype(dst.dtype)


def int_from_float(x: Any, dst: ScalarType, sat: bool, mode: str | None) -> Any:
    r: Any = _ROUND[mode or "rtz"]
    t = r(np.asarray(x, dtype=np.float64))
    info = np.iinfo(dst.dtype)
    lo, hi = float(info.min), float(info.max)
    nan = np.isnan(t)
    big = t >= hi
    small = t <= lo
    safe = np.where(nan | big | small, 0.0, t).astype(dst.dtype)
    if sat:
        out = np.where(
            big, dst.dtype.type(info.max), np.where(small, dst.dtype.type(info.min), safe)
        )
        return np.where(nan, dst.dtype.type(0), out)
    # unsaturated out-of-range results are undefined (§1.2.3.3); saturate like most devices
    return np.where(big, dst.dtype.type(info.max), np.where(small, dst.dtype.type(info.min), safe))


def float_from_int(x: Any, src: ScalarType, dst: ScalarType, mode: str | None) -> Any:
    x = np.asarray(x)
    f = x.astype(dst.dtype)
    if mode in (None, "rte") or (src.bits <= 16) or (src.bits <= 32 and dst.bits == 64):
        return f
    # exact comparison of f with x: integral floats compare exactly through int64/uint64
    wide = np.int64 if src.is_signed else np.uint64
    fb = np.clip(f.astype(np.float64), np.iinfo(wide).min, float(np.iinfo(wide).max) / 2 * 2)
    fi = np.where(np.isfinite(fb), fb, 0).astype(wide)
    over = f.astype(np.float64) >= 2.0 ** (64 if not src.is_signed else 63)
    gt = over | (fi > x)
    lt = ~over & (fi < x)
    zero, inf = dst.dtype.type(0), dst.dtype.type(np.inf)
    if mode == "rtz":
        return np.where((gt & (x >= 0)) | (lt & (x < 0)), np.nextafter(f, zero), f)
    if mode == "rtp":
        return np.where(lt, np.nextafter(f, inf), f)
    return np.where(gt, np.nextafter(f, -inf), f)


def convert_value(v: Any, src_t: Type, dst_t: Type, sat: bool, mode: str | None) -> Any:
    src, dst = element_of(src_t), element_of(dst_t)
    if dst.is_float:
        if src.is_float:
            out = (
                directed_float(v, dst, mode)
                if src.bits > dst.bits
                else np.asarray(v).astype(dst.dtype)
            )
        else:
            out = float_from_int(v, src, dst, mode)
    elif src.is_float:
        out = int_from_float(v, dst, sat, mode)
    else:
        out = int_from_int(v, src, dst, sat)
    return fix(out, dst_t)


def _convert(conv: Conversion) -> Any:
    sat = conv.sat
    mode = conv.rounding

    def impl(call: Call, fr: Frame, args: list[Any]) -> Any:
        return convert_value(args[0], call.params[0], call.ret, sat, mode)

    return impl


def _lanes4(t: Type) -> int:
    if isinstance(t, VectorType):
        return 4 if t.n == 3 else t.n
    return 1


def _as(call: Call, fr: Frame, args: list[Any]) -> Any:
    src_t, dst_t = call.params[0], call.ret
    v = np.asarray(args[0], dtype=element_of(src_t).dtype)
    if not isinstance(src_t, VectorType):
        v = v.reshape(1, 1, 1) if v.ndim == 0 else v[None]
    if v.ndim == 1:
        v = v.reshape(-1, 1, 1)
    n = _lanes4(src_t)
    if v.shape[0] < n:
        v = np.concatenate([v, np.zeros((n - v.shape[0], *v.shape[1:]), v.dtype)])
    per = np.ascontiguousarray(np.moveaxis(v, 0, -1))
    out = per.view(element_of(dst_t).dtype)
    out = np.moveaxis(out, -1, 0)
    if isinstance(dst_t, VectorType):
        return fix(out[: dst_t.n], dst_t)
    return fix(out[0], dst_t)


IMPLS: dict[str, Any] = {}
for _name, _b in REGISTRY.items():
    if _b.conversion is not None:
        IMPLS[_name] = _as if _b.conversion.reinterpret else _convert(_b.conversion)
