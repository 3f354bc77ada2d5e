"""Integer functions (spec §1.13.3, tables 10 and 11).

``gentype`` is every integer scalar (char … ulong) and its vectors; ``ugentype`` the unsigned
type of the same shape. ``min``, ``max`` and ``clamp`` are shared with the common functions and
are declared once, in :mod:`clpy.builtins.common`.

``ctz`` is new in OpenCL C 2.0; on older targets it is lowered to ``popcount`` (which 1.2 has).
"""

from __future__ import annotations

from clpy.builtins.registry import Lowering, Overload, declare, gentypes, like
from clpy.types import catalog as C
from clpy.types.core import Type, element_of

# int first: a weak integer literal (``clz(5)``) then resolves to int, not char.
I = gentypes((C.int_, C.uint, C.long, C.ulong, C.char, C.uchar, C.short, C.ushort))
I32 = [t for t in I if element_of(t) in (C.int_, C.uint)]


def _unsigned(t: Type) -> Type:
    return like(t, C.unsigned_of(element_of(t)))


_UNARY = {
    "clz": "Number of leading 0-bits of x; the bit width of the element type if x is 0.",
    "popcount": "Number of 1-bits in x.",
}
_BINARY = {
    "add_sat": "x + y, saturated to the range of the type.",
    "hadd": "(x + y) >> 1 computed without overflow of the intermediate sum.",
    "rhadd": "(x + y + 1) >> 1 computed without overflow of the intermediate sum.",
    "mul_hi": "The high half of the full product x * y.",
    "rotate": "Each element of v rotated left by the matching element of i (modulo the bit "
    "width); bits shifted off the left come back on the right.",
    "sub_sat": "x - y, saturated to the range of the type.",
}
_TERNARY = {
    "mad_hi": "mul_hi(a, b) + c.",
    "mad_sat": "a * b + c, saturated to the range of the type.",
}

for _name, _doc in _UNARY.items():
    declare(_name, family="integer", doc=_doc, overloads=[Overload((t,), t) for t in I])
for _name, _doc in _BINARY.items():
    declare(
        _name,
        family="integer",
        doc=_doc,
        overloads=[Overload((t, t), t) for t in I],
        # spelled out where a driver's wraps (quirks: "add_sat:long" on Oclgrind)
        lowering=Lowering("add_sat") if _name in ("add_sat", "sub_sat") else None,
    )
for _name, _doc in _TERNARY.items():
    declare(
        _name,
        family="integer",
        doc=_doc,
        overloads=[Overload((t, t, t), t) for t in I],
        # spelled out from mul_hi where a driver's is wrong (quirks: "mad_sat:long" on NVIDIA)
        lowering=Lowering("mad_sat") if _name == "mad_sat" else None,
    )

declare(
    "abs",
    family="integer",
    overloads=[Overload((t,), _unsigned(t)) for t in I],
    # in the unsigned type where a driver makes INT_MIN poison (quirks: "abs:int" on PoCL)
    lowering=Lowering("int_abs"),
    doc="|x| as the unsigned type of the same width (so abs(INT_MIN) is exact). Python's "
    "abs() in kernels keeps the argument type and uses fabs for floats.",
)
declare(
    "abs_diff",
    family="integer",
    overloads=[Overload((t, t), _unsigned(t)) for t in I],
    lowering=Lowering("int_abs"),
    doc="|x - y| as the unsigned type, without modulo overflow.",
)


declare(
    "ctz",
    family="integer",
    overloads=[Overload((t,), t) for t in I],
    lowering=Lowering("ctz", min_version=(2, 0)),
    doc="Number of trailing 0-bits of x; the bit width of the element type if x is 0 "
    "(OpenCL C 2.0; lowered to popcount on 1.x targets).",
)

_UPSAMPLE = (
    (C.char, C.uchar, C.short),
    (C.uchar, C.uchar, C.ushort),
    (C.short, C.ushort, C.int_),
    (C.ushort, C.ushort, C.uint),
    (C.int_, C.uint, C.long),
    (C.uint, C.uint, C.ulong),
)
declare(
    "upsample",
    family="integer",
    overloads=[
        Overload((like(t, hi), like(t, lo)), like(t, out))
        for hi, lo, out in _UPSAMPLE
        for t in I
        if element_of(t) is hi
    ],
    doc="(hi << bits) | lo in the integer type of twice the width: upsample(char, uchar) "
    "-> short, upsample(uint, uint) -> ulong, component-wise for vectors.",
)

declare(
    "mad24",
    family="integer",
    overloads=[Overload((t, t, t), t) for t in I32],
    doc="mul24(x, y) + z for 32-bit integers (table 11).",
)
declare(
    "mul24",
    family="integer",
    overloads=[Overload((t, t), t) for t in I32],
    doc="x * y using only the low 24 bits of x and y; the result is implementation-"
    "defined outside [-2**23, 2**23 - 1] (signed) or [0, 2**24 - 1] (unsigned).",
)
