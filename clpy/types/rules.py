"""Type rules for operators: usual arithmetic conversions with weakly typed literals.

OpenCL C follows C99's usual arithmetic conversions for scalars (spec §1.2.6) and widens a scalar
operand to the vector's element type for vector-scalar operations (§1.3: "the scalar type is
converted to the element type used by the vector operand"). clpy adds one policy on top:
literals are *weakly typed* (DESIGN.md "Semantics"): ``x * 2.0`` has the type of ``x``; a lone
float literal is ``float``; a lone integer literal is ``int``.
"""

from __future__ import annotations

from clpy.types import catalog as C
from clpy.types.core import ScalarType, Type, VectorType


class RuleError(Exception):
    """Operands the operator does not accept; the frontend adds the source position."""


def promote_int(t: ScalarType) -> ScalarType:
    """Integer promotion (C99 6.3.1.1): types narrower than int become int; bool → int."""
    if t.is_bool or (t.is_int and t.bits < 32):
        return C.int_
    return t


def common_scalar(a: ScalarType, b: ScalarType) -> ScalarType:
    """C99 6.3.1.8 usual arithmetic conversions on two strongly typed scalars."""
    if a.is_float or b.is_float:
        if a.is_float and b.is_float:
            return a if a.bits >= b.bits else b
        return a if a.is_float else b
    a, b = promote_int(a), promote_int(b)
    if a is b:
        return a
    if a.is_signed == b.is_signed:
        return a if a.bits >= b.bits else b
    u, s = (a, b) if not a.is_signed else (b, a)
    if u.bits >= s.bits:
        return u
    return s


def weak_scalar(strong: ScalarType, weak: ScalarType) -> ScalarType:
    """Combine a strongly typed scalar with a weak literal of scalar type ``weak``."""
    if weak.is_float and not strong.is_float:
        return C.float_  # int_var * 2.5 is float, as in Python
    if strong.is_bool:
        return promote_int(weak)
    if weak.is_int and strong.is_int and weak.bits > promote_int(strong).bits:
        # A literal too wide for the variable's type (``i < 3000000000``) widens the
        # operation, as the usual arithmetic conversions would; it must not wrap.
        return common_scalar(strong, weak)
    return strong if strong.is_float or strong.bits >= 32 else promote_int(strong)


def arithmetic(left: Type, lweak: bool, right: Type, rweak: bool, op: str) -> Type:
    """Result type of ``left op right`` for ``+ - * / % & | ^`` (not shifts, not ``/``-true)."""
    if isinstance(left, VectorType) or isinstance(right, VectorType):
        return _vector_arith(left, right, op)
    if not (isinstance(left, ScalarType) and isinstance(right, ScalarType)):
        raise RuleError(f"operator {op} does not apply to {left} and {right}")
    if left is C.void or right is C.void:
        raise RuleError(f"operator {op} does not apply to void")
    if lweak and not rweak:
        return weak_scalar(right, left)
    if rweak and not lweak:
        return weak_scalar(left, right)
    return common_scalar(left, right)


def _vector_arith(left: Type, right: Type, op: str) -> Type:
    if isinstance(left, VectorType) and isinstance(right, VectorType):
        if left is not right:
            raise RuleError(
                f"operator {op} needs vectors of the same type, got {left} and "
                f"{right}; convert one with convert_{left.cl_name}(...)"
            )
        return left
    vec = left if isinstance(left, VectorType) else right
    other = right if vec is left else left
    if not isinstance(other, ScalarType):
        raise RuleError(f"operator {op} does not apply to {left} and {right}")
    assert isinstance(vec, VectorType)
    if other.is_float and not vec.elem.is_float:
        raise RuleError(
            f"operator {op}: cannot mix {vec} with floating {other} "
            f"(spec §1.2.6 forbids this implicit conversion)"
        )
    return vec


def mixed_sign(
    left: Type, lweak: bool, right: Type, rweak: bool
) -> tuple[bool, ScalarType, ScalarType] | None:
    """Whether C's usual arithmetic conversions would turn a signed operand unsigned.

    ``(signed_is_left, signed type, unsigned type)`` for two strongly typed integer scalars
    whose common type (C99 6.3.1.8) is unsigned while one of them is signed (``int`` and
    ``uint``, ``long`` and ``size_t``): there a negative value silently becomes a huge one,
    which Python integers never do. clpy compares such operands mathematically and rejects
    such arithmetic (DESIGN.md "Semantics"; README "Integer types"). None otherwise; weak
    literals take the other operand's type and are not counted (the frontend checks negative
    literals against unsigned operands in comparisons itself).
    """
    if lweak or rweak or not (isinstance(left, ScalarType) and isinstance(right, ScalarType)):
        return None
    if not (left.is_int and right.is_int) or left.is_bool or right.is_bool:
        return None
    a, b = promote_int(left), promote_int(right)
    if a.is_signed == b.is_signed:
        return None
    s, u = (a, b) if a.is_signed else (b, a)
    if u.bits < s.bits:
        return None  # the signed type holds every value of the unsigned one: exact
    return a.is_signed, s, u


def require_integer(t: Type, op: str) -> None:
    elem = t.elem if isinstance(t, VectorType) else t
    if not isinstance(elem, ScalarType) or not (elem.is_int or elem.is_bool):
        raise RuleError(f"operator {op} needs integer operands, got {t}")


def relational_result(t: Type) -> Type:
    """Comparisons: ``bool`` for scalars; for vectors the signed integer vector of the same
    element width, -1 for true and 0 for false (spec §1.3)."""
    if isinstance(t, VectorType):
        return VectorType(C.signed_of(t.elem), t.n)
    return C.bool_


def literal_type(value: object) -> ScalarType:
    if isinstance(value, bool):
        return C.bool_
    if isinstance(value, int):
        if -(2**31) <= value < 2**31:
            return C.int_
        if -(2**63) <= value < 2**63:
            return C.long
        if value < 2**64:
            return C.ulong
        raise RuleError(f"integer literal {value} does not fit in 64 bits")
    if isinstance(value, float):
        return C.float_
    raise RuleError(f"{value!r} is not a number")


def can_assign(target: Type, value: Type) -> bool:
    """Assignment converts like C between scalars; vectors need the exact type (§1.2.1)."""
    if target is value:
        return True
    if isinstance(target, ScalarType) and isinstance(value, ScalarType):
        return target is not C.void and value is not C.void
    if isinstance(target, VectorType) and isinstance(value, ScalarType):
        return not (value.is_float and not target.elem.is_float)
    return False
