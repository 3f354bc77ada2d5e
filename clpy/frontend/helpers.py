"""Small questions about typed IR expressions that the builders share (no build state)."""

from __future__ import annotations

from typing import Any

from clpy.ir.nodes import (
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
from clpy.types.core import ScalarType, Type, VectorType


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
