"""Explicit conversions ``convert_<T>[_sat][_rte|_rtz|_rtp|_rtn]`` and reinterpretation
``as_<T>`` (spec §1.2.3, §1.2.4). Every name is its own built-in, generated here.

- ``convert_T`` takes any scalar or vector with the lane count of ``T``; ``_sat`` clamps
  out-of-range values (NaN -> 0) and exists only for integer destinations; without a rounding
  suffix integers round toward zero and floats to nearest even.
- ``as_T`` takes any scalar or vector of the byte size of ``T``; a 3-vector has the size of a
  4-vector (§1.1.5), so ``as_float3(int4)`` and ``as_int4(float3)`` are valid.

``half`` conversions need cl_khr_fp16 and ``double`` ones cl_khr_fp64 (the emitter enables the
extension when such values appear). A ``bool`` source is converted through ``int``.
"""

from __future__ import annotations

from collections.abc import Sequence

from clpy.builtins.registry import (
    ArgInfo,
    Builtin,
    Conversion,
    NoMatch,
    Overload,
    declare,
    gentypes,
)
from clpy.types import catalog as C
from clpy.types.core import ScalarType, Type, VectorType, element_of, lanes

_ELEMS: tuple[ScalarType, ...] = (
    C.char,
    C.uchar,
    C.short,
    C.ushort,
    C.int_,
    C.uint,
    C.long,
    C.ulong,
    C.half,
    C.float_,
    C.double,
)
DESTINATIONS: list[Type] = gentypes(_ELEMS)
ROUNDING = {
    "": "",
    "_rte": "round to nearest even",
    "_rtz": "round toward zero",
    "_rtp": "round toward +infinity",
    "_rtn": "round toward -infinity",
}


def _source_ok(b: Builtin, args: Sequence[ArgInfo]) -> Type:
    """The single argument's type, checked to be a number or vector of numbers."""
    if len(args) != 1:
        raise NoMatch(f"{b.name} takes exactly one argument, got {len(args)}")
    t = args[0].type
    if isinstance(t, VectorType) or (isinstance(t, ScalarType) and t.kind.value != "void"):
        return t
    raise NoMatch(f"{b.name} takes a scalar or vector number, got {t}")


def _convert_rule(b: Builtin, args: Sequence[ArgInfo]) -> Overload:
    assert b.conversion is not None
    dst = b.conversion.dest
    src = _source_ok(b, args)
    if lanes(src) != lanes(dst):
        raise NoMatch(
            f"{b.name} converts a value with {lanes(dst)} component(s) to {dst}; "
            f"the argument is {src} with {lanes(src)} (spec §1.2.3: the number of "
            "elements must match)"
        )
    if src is C.bool_:
        return Overload((C.int_,), dst)  # convert through int: C has no bool overloads
    return Overload((src,), dst)


def _as_rule(b: Builtin, args: Sequence[ArgInfo]) -> Overload:
    assert b.conversion is not None
    dst = b.conversion.dest
    src = _source_ok(b, args)
    if src is C.bool_:
        raise NoMatch(f"{b.name} cannot reinterpret bool (spec §1.2.4); use int(...) first")
    if src.size != dst.size:
        raise NoMatch(
            f"{b.name} reinterprets {dst.size} bytes as {dst}, but {src} has "
            f"{src.size} bytes (spec §1.2.4: operand and result must have the same "
            "size)"
        )
    return Overload((src,), dst)


def _declare_all() -> None:
    by_lanes: dict[int, list[Type]] = {}
    by_size: dict[int, list[Type]] = {}
    for t in DESTINATIONS:
        by_lanes.setdefault(lanes(t), []).append(t)
        by_size.setdefault(t.size, []).append(t)
    for dst in DESTINATIONS:
        elem = element_of(dst)
        name = dst.cl_name
        # The spec's signatures (for documentation; the rules below do the checking), shared
        # by the ten spellings of one destination.
        same_lanes = tuple(Overload((s,), dst) for s in by_lanes[lanes(dst)])
        same_size = tuple(Overload((s,), dst) for s in by_size[dst.size])
        sats = ("", "_sat") if elem.is_int else ("",)
        for sat in sats:
            for rnd, rwhat in ROUNDING.items():
                what = []
                if sat:
                    what.append("saturating out-of-range values (NaN -> 0)")
                if rwhat:
                    what.append(rwhat)
                elif elem.is_int:
                    what.append("rounding floats toward zero")
                else:
                    what.append("rounding to nearest even")
                declare(
                    f"convert_{name}{sat}{rnd}",
                    family="conversions",
                    overloads=same_lanes,
                    rule=_convert_rule,
                    conversion=Conversion(dst, sat=bool(sat), rounding=rnd[1:] or None),
                    doc=f"Converts a value with {lanes(dst)} component(s)"
                    f" of any number type to {name}, "
                    f"{', '.join(what)} (spec §1.2.3).",
                )
        declare(
            f"as_{name}",
            family="conversions",
            overloads=same_size,
            rule=_as_rule,
            conversion=Conversion(dst, reinterpret=True),
            doc=f"Reinterprets the {dst.size} bytes of a value of the same size as {name} "
            "(no conversion; spec §1.2.4). Which bits land where is "
            "implementation-defined when the lane counts differ, except 4 -> 3 lanes.",
        )


_declare_all()


def missing_conversion_hint(name: str) -> str | None:
    """Why ``name`` (``convert_float_sat``, ``convert_int5``) is not a conversion built-in."""
    if not name.startswith("convert_"):
        return None
    if "_sat" in name and any(
        name.startswith(f"convert_{e.name}") for e in (C.half, C.float_, C.double)
    ):
        return (
            "_sat is only valid for conversions to integer types (spec §1.2.3); "
            "float conversions never saturate"
        )
    return (
        "conversions are convert_<type>[_sat][_rte|_rtz|_rtp|_rtn] for the types char … "
        "ulong, half, float, double and their 2, 3, 4, 8, 16 vectors (spec §1.2.3)"
    )
