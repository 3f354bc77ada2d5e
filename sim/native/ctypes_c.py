"""C spellings of clpy types and constants for the native engine's code generator."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from clpy.ir.nodes import Loc
from clpy.types.core import OpaqueType, PointerType, ScalarType, Type, VectorType


@dataclass(frozen=True)
class Geometry:
    """What the C source is specialized for: dimensions, work-group size, and the element
    count of each ``Local[T]`` parameter (by parameter name)."""

    dims: int
    local: tuple[int, int, int]
    local_counts: tuple[tuple[str, int], ...] = ()

    @property
    def wg(self) -> int:
        return self.local[0] * self.local[1] * self.local[2]


class Unsupported(Exception):
    """A construct the native engine does not run: ``why`` names it, ``loc`` points at it."""

    def __init__(self, why: str, loc: Loc | None = None) -> None:
        super().__init__(f"{why} ({loc})" if loc is not None else why)
        self.why = why
        self.loc = loc


_INTS = {
    (8, True): "int8_t",
    (16, True): "int16_t",
    (32, True): "int32_t",
    (64, True): "int64_t",
    (8, False): "uint8_t",
    (16, False): "uint16_t",
    (32, False): "uint32_t",
    (64, False): "uint64_t",
}


def scalar_c(t: Type, loc: Loc | None = None) -> str:
    """The C type of a scalar type (half: not native)."""
    if isinstance(t, ScalarType):
        if t.is_bool:
            return "_Bool"
        if t.is_float:
            if t.bits == 32:
                return "float"
            if t.bits == 64:
                return "double"
            raise Unsupported("half-precision values", loc)
        return _INTS[(t.bits, t.is_signed)]
    if isinstance(t, OpaqueType):
        raise Unsupported(f"values of type {t}", loc)
    raise Unsupported(f"values of type {t}", loc)


def c_type(t: Type, loc: Loc | None = None) -> str:
    """The C type holding a value of ``t`` (vectors: the prelude's GCC vector types)."""
    if isinstance(t, VectorType):
        scalar_c(t.elem, loc)  # (half vectors are not native)
        if t.elem.is_bool:
            raise Unsupported(f"vectors of {t.elem}", loc)
        return t.cl_name
    if isinstance(t, PointerType):
        return ptr_struct(t.elem, loc)
    return scalar_c(t, loc)


def ptr_struct(elem: Type, loc: Loc | None = None) -> str:
    """The C struct naming a pointer to ``elem``: base, element count, offset (bounds as the
    NumPy engine's: an element outside its memory is element 0)."""
    if isinstance(elem, PointerType):
        raise Unsupported("pointers to pointers", loc)
    return "clpy_p_" + c_type(elem, loc).replace(" ", "_")


def unsigned_of(t: ScalarType) -> str:
    return _INTS[(t.bits, False)]


def int_literal(v: int, t: ScalarType) -> str:
    """``v`` wrapped to ``t``'s width, as a C expression of type ``t``."""
    bits = t.bits
    v &= (1 << bits) - 1
    if t.is_signed and v >= 1 << (bits - 1):
        v -= 1 << bits
    ct = scalar_c(t)
    if t.is_signed and v == -(1 << (bits - 1)):
        return f"(({ct})(-{(1 << (bits - 1)) - 1}LL - 1))"
    if ct == "int32_t":
        return str(v) if v >= 0 else f"({v})"
    suffix = "ULL" if not t.is_signed else "LL"
    return f"(({ct}){v}{suffix})" if v >= 0 else f"(({ct})({v}{suffix}))"


def float_literal(v: float, t: ScalarType) -> str:
    ct = scalar_c(t)
    if math.isnan(v):
        s = '__builtin_nan("")'
        return f"(({ct})(-{s}))" if math.copysign(1.0, v) < 0 else f"(({ct}){s})"
    if math.isinf(v):
        return f"(({ct})({'-' if v < 0 else ''}__builtin_inf()))"
    return f"(({ct}){float(v).hex()})" if v != int(v) or abs(v) > 2**53 else f"(({ct}){v!r})"


def scalar_literal(v: Any, t: ScalarType) -> str:
    if t.is_bool:
        return "1" if v else "0"
    if t.is_float:
        return float_literal(float(v), t)
    return int_literal(int(v), t)
