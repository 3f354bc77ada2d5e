"""Miscellaneous vector functions (spec §1.13.12, table 19): ``shuffle``, ``shuffle2``,
``vec_step``.

``shuffle(x, mask)`` and ``shuffle2(x, y, mask)`` take 2-, 4-, 8- or 16-vectors; ``mask`` is an
unsigned integer vector whose element size equals the element size of ``x`` and whose lane count
(2, 4, 8 or 16) is the result's. ``vec_step(x)`` is the lane count of ``x``'s type: 1 for a
scalar, 4 for a 3-vector. Like C's ``sizeof`` it takes a value or a type and is a compile-time
constant (its operand is not evaluated), so it can size arrays.
"""

from __future__ import annotations

from collections.abc import Sequence

from clpy.builtins.registry import ArgInfo, Builtin, NoMatch, Overload, declare
from clpy.types import catalog as C
from clpy.types.core import ScalarType, Type, VectorType

SHUFFLE_SIZES = (2, 4, 8, 16)
ELEMS: tuple[ScalarType, ...] = (*C.INTEGER_SCALARS, C.half, C.float_, C.double)


def _mask_for(b: Builtin, x: VectorType, mask: Type) -> VectorType:
    want = C.unsigned_of(x.elem)
    if not (isinstance(mask, VectorType) and mask.n in SHUFFLE_SIZES and mask.elem is want):
        raise NoMatch(
            f"{b.name}: the mask must be a {want}2/4/8/16 vector (unsigned, with the "
            f"element size of {x}: spec §1.13.12), got {mask}"
        )
    return mask


def _input(b: Builtin, t: Type, what: str) -> VectorType:
    if not (isinstance(t, VectorType) and t.n in SHUFFLE_SIZES and t.elem in ELEMS):
        raise NoMatch(f"{b.name}: {what} must be a 2-, 4-, 8- or 16-component vector, got {t}")
    return t


def _shuffle_rule(b: Builtin, args: Sequence[ArgInfo]) -> Overload:
    if len(args) != 2:
        raise NoMatch(f"shuffle takes (x, mask), got {len(args)} arguments")
    x = _input(b, args[0].type, "x")
    mask = _mask_for(b, x, args[1].type)
    return Overload((x, mask), VectorType(x.elem, mask.n))


def _shuffle2_rule(b: Builtin, args: Sequence[ArgInfo]) -> Overload:
    if len(args) != 3:
        raise NoMatch(f"shuffle2 takes (x, y, mask), got {len(args)} arguments")
    x = _input(b, args[0].type, "x")
    if args[1].type is not x:
        raise NoMatch(f"shuffle2: x and y must have the same type, got {x} and {args[1].type}")
    mask = _mask_for(b, x, args[2].type)
    return Overload((x, x, mask), VectorType(x.elem, mask.n))


def _vec_step_rule(b: Builtin, args: Sequence[ArgInfo]) -> Overload:
    if len(args) != 1:
        raise NoMatch(f"vec_step takes one argument, got {len(args)}")
    t = args[0].type
    if isinstance(t, VectorType) or (isinstance(t, ScalarType) and t in C.ALL_SCALARS):
        return Overload((t,), C.int_)
    raise NoMatch(f"vec_step takes a scalar or vector value, got {t}")


def _shuffle_overloads(inputs: int) -> list[Overload]:
    out = []
    for e in ELEMS:
        for m in SHUFFLE_SIZES:
            x = VectorType(e, m)
            for n in SHUFFLE_SIZES:
                mask = VectorType(C.unsigned_of(e), n)
                out.append(Overload((x,) * inputs + (mask,), VectorType(e, n)))
    return out


declare(
    "shuffle",
    family="misc-vector",
    rule=_shuffle_rule,
    overloads=_shuffle_overloads(1),
    doc="result[i] = x[mask[i] % m] for an m-vector x; the result has mask's lane count "
    "(spec §1.13.12). Example: shuffle(a, uint4(3, 2, 1, 0)) reverses a float4.",
)
declare(
    "shuffle2",
    family="misc-vector",
    rule=_shuffle2_rule,
    overloads=_shuffle_overloads(2),
    doc="Like shuffle over the 2m elements of x followed by y: result[i] = (x, y)[mask[i] % (2m)].",
)


def _vec_step_value(b: Builtin, t: Type) -> int:
    _vec_step_rule(b, [ArgInfo(t)])
    return (
        4 if isinstance(t, VectorType) and t.n == 3 else (t.n if isinstance(t, VectorType) else 1)
    )


declare(
    "vec_step",
    family="misc-vector",
    rule=_vec_step_rule,
    fold_type=_vec_step_value,
    overloads=[
        Overload((t,), C.int_)
        for e in ELEMS
        for t in (e, *(VectorType(e, n) for n in C.VECTOR_SIZES))
    ],
    doc="Number of elements of the argument's type: 1 for scalars, n for n-vectors and "
    "4 for 3-vectors (spec §1.13.12).",
)
