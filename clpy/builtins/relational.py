"""Relational functions (spec §1.13.6, table 14).

The floating-point tests return ``int`` for a scalar (1 true, 0 false) and, for an n-vector, a
signed integer n-vector whose elements have the argument's element width (float4 -> int4,
double2 -> long2, half8 -> short8) with -1 (all bits set) for true. ``any``/``all`` look at the
most significant bit of signed integer arguments. ``select(a, b, c)`` takes ``c`` of the signed
or unsigned integer type with the element width and lane count of ``a``.
"""

from __future__ import annotations

from clpy.builtins.registry import Overload, declare, floatn, gentypes, like
from clpy.types import catalog as C
from clpy.types.core import Type, VectorType, element_of

F = floatn()
# Every scalar/vector type of the spec's relational gentype (plus half with cl_khr_fp16).
ALL = floatn() + gentypes((C.int_, C.uint, C.long, C.ulong, C.char, C.uchar, C.short, C.ushort))
SIGNED = gentypes((C.int_, C.long, C.char, C.short))


def _result(t: Type) -> Type:
    """int for scalars; the signed integer vector of the element width for vectors."""
    if isinstance(t, VectorType):
        return VectorType(C.signed_of(t.elem), t.n)
    return C.int_


_COMPARE = {
    "isequal": "x == y",
    "isnotequal": "x != y (true when either is NaN)",
    "isgreater": "x > y",
    "isgreaterequal": "x >= y",
    "isless": "x < y",
    "islessequal": "x <= y",
    "islessgreater": "(x < y) || (x > y)",
}
for _name, _what in _COMPARE.items():
    declare(
        _name,
        family="relational",
        overloads=[Overload((t, t), _result(t)) for t in F],
        doc=f"Component-wise {_what}: 1/0 for scalars, -1/0 for vectors; false when an "
        "argument is NaN unless stated (spec §1.13.6).",
    )

_TESTS = {
    "isfinite": "x is finite (not infinite and not NaN)",
    "isinf": "x is +/-infinity",
    "isnan": "x is a NaN",
    "isnormal": "x is a normal number (not zero, subnormal, infinite or NaN)",
    "signbit": "the sign bit of x is set (true for -0.0)",
}
for _name, _what in _TESTS.items():
    declare(
        _name,
        family="relational",
        overloads=[Overload((t,), _result(t)) for t in F],
        doc=f"Tests whether {_what}: 1/0 for scalars, -1/0 per component for vectors.",
    )

declare(
    "isordered",
    family="relational",
    overloads=[Overload((t, t), _result(t)) for t in F],
    doc="isequal(x, x) && isequal(y, y): neither argument is NaN.",
)
declare(
    "isunordered",
    family="relational",
    overloads=[Overload((t, t), _result(t)) for t in F],
    doc="x or y is NaN.",
)

declare(
    "any",
    family="relational",
    overloads=[Overload((t,), C.int_) for t in SIGNED],
    doc="1 if the most significant bit of any component of x is set, else 0 (x is a "
    "signed integer scalar or vector, e.g. the result of a vector comparison).",
)
declare(
    "all",
    family="relational",
    overloads=[Overload((t,), C.int_) for t in SIGNED],
    doc="1 if the most significant bit of every component of x is set, else 0.",
)

declare(
    "bitselect",
    family="relational",
    overloads=[Overload((t, t, t), t) for t in ALL],
    doc="Per bit: the bit of b where the bit of c is 1, otherwise the bit of a.",
)
declare(
    "select",
    family="relational",
    overloads=[
        Overload((t, t, like(t, m(element_of(t)))), t)
        for t in ALL
        for m in (C.signed_of, C.unsigned_of)
    ],
    doc="Per component: b[i] if the most significant bit of c[i] is set, else a[i]; for "
    "scalars c ? b : a. c is a signed or unsigned integer with the element width "
    "and lane count of a (spec §1.13.6).",
)
