"""Constant folding while the IR is built: constructors that fold when operands are constants.

Folding follows the target semantics exactly: integers wrap to the width of the result type,
shift counts are masked to it (spec §1.3), ``floordiv``/``floormod`` are Python's, and float
arithmetic is done in the result's precision with NumPy.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from clpy.ir.nodes import Binary, Compare, Const, Expr, Loc, NamedConst, Unary
from clpy.ir.operators import BY_SYMBOL
from clpy.types.core import ScalarType, Type

# Exact meaning on Python ints (wrapped to the result type afterwards); the combining
# operators come from the one operator table (clpy/ir/operators.py).
_INT_OPS: dict[str, Callable[[Any, Any], Any]] = {
    **{s: BY_SYMBOL[s].exact for s in ("+", "-", "*", "&", "|", "^")},
    "floordiv": operator.floordiv,
    "floormod": operator.mod,
}
# Float arithmetic in the result's precision: NumPy ufuncs on values of its dtype.
_FLOAT_OPS: dict[str, Any] = {**{s: BY_SYMBOL[s].ufunc for s in ("+", "-", "*")}, "/": np.divide}
_CMP: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def wrap_int(v: int, t: ScalarType) -> int:
    """Reduce ``v`` modulo 2**bits into ``t``'s range (OpenCL integer overflow wraps)."""
    if t.is_bool:
        return int(bool(v))
    mask = (1 << t.bits) - 1
    v &= mask
    if t.is_signed and v >> (t.bits - 1):
        v -= 1 << t.bits
    return v


def cast_const(c: Const, t: ScalarType) -> Const:
    """Convert a constant like C does (floats truncate toward zero when converted to int)."""
    v = c.value
    if t.is_bool:
        return Const(t, c.loc, bool(v))
    if t.is_float:
        return Const(t, c.loc, float(t.dtype.type(v)), c.weak)
    if isinstance(v, float):
        if not math.isfinite(v):
            return Const(t, c.loc, 0)
        v = int(v)
    return Const(t, c.loc, wrap_int(int(v), t), c.weak)


def _foldable(*es: Expr) -> bool:
    return all(type(e) is Const and isinstance(e.type, ScalarType) for e in es)


def binary(op: str, t: Type, loc: Loc, left: Expr, right: Expr) -> Expr:
    if _foldable(left, right) and isinstance(t, ScalarType):
        value = _fold_binary(op, t, left, right)  # type: ignore[arg-type]
        if value is not None:
            weak = left.weak and right.weak  # type: ignore[attr-defined]
            return Const(t, loc, value, weak)
    named = _named_binary(op, t, loc, left, right)
    if named is not None:
        return named
    return Binary(t, loc, op, left, right)


def _named_binary(op: str, t: Type, loc: Loc, left: Expr, right: Expr) -> NamedConst | None:
    """Integer operators on named constants (``CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE``)
    fold to a named constant that keeps the spelling: a compile-time constant wherever one is
    needed (barrier flags, memory orders), and readable C."""
    parts = (left, right)
    if not (
        isinstance(t, ScalarType)
        and t.is_int
        and any(isinstance(e, NamedConst) for e in parts)
        and all(
            isinstance(e, NamedConst) or (type(e) is Const and isinstance(e.value, int))
            for e in parts
        )
    ):
        return None
    a, b = (Const(t, e.loc, int(e.value)) for e in parts)  # type: ignore[attr-defined]
    value = _fold_binary(op, t, a, b)
    if value is None or op not in _INT_OPS and op not in ("<<", ">>"):
        return None
    texts = [e.name if isinstance(e, NamedConst) else str(int(e.value)) for e in parts]  # type: ignore[attr-defined]
    if op == "|":
        name = f"{texts[0]} | {texts[1]}"
    else:
        name = "(" + f" {op} ".join(f"({x})" if " " in x else x for x in texts) + ")"
    return NamedConst(t, loc, name, value)


def _fold_binary(op: str, t: ScalarType, left: Const, right: Const) -> Any:
    a, b = left.value, right.value
    if t.is_float:
        if op in ("+", "-", "*", "/"):
            dt = t.dtype.type
            with np.errstate(all="ignore"):
                r = _FLOAT_OPS[op](dt(a), dt(b))
            return float(r)
        return None
    a, b = int(a), int(b)
    if op in ("<<", ">>"):
        b &= t.bits - 1
        return wrap_int(a << b if op == "<<" else a >> b, t)
    if op in ("floordiv", "floormod", "/", "%"):
        if b == 0:
            return None  # left for the device/simulator to report
        if op in ("/", "%"):  # C semantics: truncation toward zero
            q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
            return wrap_int(q if op == "/" else a - q * b, t)
    fn = _INT_OPS.get(op)
    return None if fn is None else wrap_int(fn(a, b), t)


def unary(op: str, t: Type, loc: Loc, operand: Expr) -> Expr:
    if _foldable(operand) and isinstance(t, ScalarType):
        v = operand.value  # type: ignore[attr-defined]
        weak = operand.weak  # type: ignore[attr-defined]
        if op == "not":
            return Const(t, loc, not v)
        if op == "+":
            return Const(t, loc, v, weak)
        if op == "-":
            return Const(t, loc, -v if t.is_float else wrap_int(-int(v), t), weak)
        if op == "~":
            return Const(t, loc, wrap_int(~int(v), t), weak)
    return Unary(t, loc, op, operand)


def compare(op: str, t: Type, loc: Loc, left: Expr, right: Expr) -> Expr:
    if _foldable(left, right) and isinstance(t, ScalarType):
        return Const(t, loc, _CMP[op](left.value, right.value))  # type: ignore[attr-defined]
    return Compare(t, loc, op, left, right)
