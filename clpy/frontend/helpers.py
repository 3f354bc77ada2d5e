"""Small questions about typed IR expressions that the builders share (no build state)."""

from __future__ import annotations

from typing import Any

from clpy.ir.nodes import (
    Binary,
    CallBuiltin,
    CallFunc,
    Cast,
    Const,
    Expr,
    ExprStmt,
    Field,
    Index,
    Logical,
    NamedConst,
    Swizzle,
    VarRef,
)
from clpy.ir.walk import walk
from clpy.types import catalog as C
from clpy.types import rules
from clpy.types.core import PointerType, ScalarType, Type, VectorType


def is_weak(e: Expr) -> bool:
    """An untyped literal (``1``, ``0.5``): it adapts to the other operand's type."""
    return isinstance(e, Const) and e.weak


def as_scalar(t: Type) -> ScalarType:
    assert isinstance(t, ScalarType)
    return t


def elem_type(t: Type) -> ScalarType:
    """The scalar of a scalar or vector type; ``void`` for anything else."""
    return (
        C.void
        if not isinstance(t, (ScalarType, VectorType))
        else (t.elem if isinstance(t, VectorType) else t)
    )


def with_elem(t: Type, e: ScalarType) -> Type:
    """``t`` with its element type replaced (``int4`` → ``float4``, ``int`` → ``float``)."""
    return VectorType(e, t.n) if isinstance(t, VectorType) else e


def is_int(t: Type) -> bool:
    """A scalar integer (or bool) type."""
    return isinstance(t, ScalarType) and (t.is_int or t.is_bool)


def known_nonneg(e: Expr) -> bool:
    """Provably non-negative: an unsigned value, a non-negative constant, or a work-item query
    (an ``int`` the launcher checked to hold the NDRange: clpy/builtins/workitem.py)."""
    if isinstance(e, (Const, NamedConst)):
        return bool(e.value >= 0)
    if isinstance(e, Cast) and isinstance(e.value, CallBuiltin) and e.value.builtin.index:
        return True
    el = elem_type(e.type)
    return el.is_int and not el.is_signed


def logical(op: str, loc: Any, left: Expr, right: Expr) -> Expr:
    """``left and/or right`` with constant operands folded (``0 <= i < n`` on a constexpr,
    ``a < 1.0 < 2.0``). A constant right operand only folds away when the left one is kept."""
    if isinstance(left, Const):
        if bool(left.value) == (op == "or"):
            return Const(C.bool_, loc, op == "or")
        return right
    if isinstance(right, Const) and bool(right.value) == (op == "and"):
        return left
    return Logical(C.bool_, loc, op, left, right)


def pure(e: Expr) -> bool:
    """No side effects: evaluating ``e`` twice is the same as once (no device-function calls,
    no built-ins that write memory or synchronize)."""
    for n in walk([ExprStmt(e.loc, e)]):
        if isinstance(n, CallFunc):
            return False
        if isinstance(n, CallBuiltin) and (
            n.builtin.writes_args or n.builtin.uniform or n.builtin.family.startswith("atomic")
        ):
            return False
    return True


def simple(e: Expr) -> bool:
    """Cheap to repeat and reads well repeated: a variable, an element, a component."""
    if isinstance(e, (VarRef, Const, NamedConst)):
        return True
    if isinstance(e, (Swizzle, Field)):
        return simple(e.base)
    if isinstance(e, Index):
        return simple(e.base) and isinstance(e.index, (VarRef, Const))
    return False


def range_type(*es: Expr) -> Type:
    """The type of a ``range(...)`` loop counter from its bounds (weak literals adapt)."""
    t: ScalarType | None = None
    for e in es:
        if isinstance(e, Const) and e.weak:
            continue
        assert isinstance(e.type, ScalarType)
        t = e.type if t is None else rules.common_scalar(t, e.type)
    if t is None:
        return C.int_
    t = rules.promote_int(t)
    if not t.is_signed and any(isinstance(e, Const) and e.value < 0 for e in es):
        # range(n - 1, -1, -1) with an unsigned n counts down to 0: the counter must be
        # able to reach -1, as Python's integers can.
        t = C.signed_of(t)
    return t


_C_COMPOUND_OPS = ("+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>")


def c_compound(target: Expr, combined: Expr) -> bool:
    """Whether ``target op= right`` in C means what ``combined`` means.

    C's ``E1 op= E2`` is ``E1 = (T1)(E1 op E2)`` with the usual arithmetic conversions
    (C99 6.5.16.2), evaluating E1 once. That matches ``combined`` when it is a plain C
    operator (not floor division/modulo) applied to the target and the conversions C would
    apply give the type the frontend chose.
    """
    if not isinstance(combined, Binary) or combined.op not in _C_COMPOUND_OPS:
        return False
    left = combined.left
    if isinstance(left, Cast):
        left = left.value
    if left is not target:
        return False
    tt, rt, ct = target.type, combined.right.type, combined.type
    if isinstance(tt, PointerType):
        return ct is tt
    if combined.op in ("<<", ">>"):
        return ct is tt or (isinstance(tt, ScalarType) and ct is rules.promote_int(tt))
    if isinstance(tt, ScalarType) and isinstance(rt, ScalarType):
        # Integer promotion (``ushort += 1`` computes in int) is kept as ``op=``; a float
        # result stored into an integer (``i += 0.5``) is spelled out with its conversion.
        if ct is not tt and not (tt.is_int and isinstance(ct, ScalarType) and ct.is_int):
            return False
        return rules.common_scalar(tt, rt) is ct
    return tt is ct and rt is ct
