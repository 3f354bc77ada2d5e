"""Signed and unsigned integers together: the one rule that keeps Python's meaning.

C converts a signed operand to unsigned when the other operand's unsigned type is at least as
wide (C99 6.3.1.8): ``-1 < 1u`` is false and ``i - n`` with ``n: uint`` wraps. Python's
integers do neither, so clpy (README "Integer types", docs/simulator.md):

- compares a signed and an unsigned integer *mathematically*: in ``long`` when that holds both
  (``int`` vs ``uint``), otherwise as ``s < 0 || (ulong)s < u`` (``long`` vs ``ulong``/``size_t``);
  a negative literal against an unsigned value also compares mathematically (``u > -1`` is true);
- rejects other arithmetic (``+ - * / // % | ^``, ``a if c else b``, ``min``/``max``) that C
  would compute in the unsigned type, with an error naming the operand to convert; ``&`` is
  exact either way, and ``u += i`` on an unsigned target wraps only as the target's type does;
- a signed operand that is provably non-negative (a work-item id, ``i % 8`` of one, a constant,
  a counter of ``range(n)``) converts exactly, so it mixes freely (C's own code is emitted).

Work-item ids are signed ``int`` (clpy/builtins/workitem.py), so ``gid < n`` with ``n: uint32``
compares mathematically and ``gid * n`` asks which operand to convert.
"""

from __future__ import annotations

import ast
from typing import Protocol

from clpy.frontend.context import FuncState
from clpy.frontend.helpers import elem_type, is_weak, logical, pure
from clpy.ir import fold
from clpy.ir.nodes import CallBuiltin, Cast, Const, Expr
from clpy.types import catalog as C
from clpy.types import rules
from clpy.types.core import ScalarType, Type

# Binary operators whose result is non-negative when their operands are (ExprBuilder.nonneg):
# ``&`` needs one, Python's ``%`` (floormod) a non-negative divisor; ``<<`` and ``+ *`` may
# overflow the type, which is the user's (clpy/frontend/ranges.py).
NONNEG_OPS = frozenset({"+", "*", "/", "%", ">>", "<<", "&", "floordiv", "floormod"})


def retype_index(e: Expr, t: Type) -> Expr | None:
    """``e`` converted to the integer type ``t`` when ``e`` is a work-item query converted to
    its index type: convert the query once (``(uint)get_sub_group_size()``, not
    ``(uint)(int)...``); the ids fit both types (checked at launch). None otherwise."""
    if (
        isinstance(e, Cast)
        and isinstance(e.value, CallBuiltin)
        and e.value.builtin.index
        and isinstance(t, ScalarType)
        and t.is_int
        and t.bits >= 32
    ):
        return e.value if e.value.type is t else Cast(t, e.loc, e.value)
    return None


# ``s op u`` where the signed operand ``s`` is negative, by whether ``s`` is on the left: the
# answer is known, ``s`` is the smaller one.
_BELOW = {
    True: {"<": True, "<=": True, "!=": True, ">": False, ">=": False, "==": False},
    False: {"<": False, "<=": False, "!=": True, ">": True, ">=": True, "==": False},
}


class _Side(Protocol):
    state: FuncState

    def coerce(self, e: Expr, t: Type, node: ast.AST) -> Expr: ...

    def nonneg(self, e: Expr) -> bool: ...


def check_arithmetic(ex: _Side, op: str, left: Expr, right: Expr, node: ast.AST) -> None:
    """Arithmetic that C would do in an unsigned type although one operand is signed
    (``int - uint``) is an error naming the operand to convert: Python has no such wrap.
    ``&`` is exact either way; ``u += i`` on an unsigned target wraps only as the
    target's own type does (``+ - * | ^`` are exact modulo its width)."""
    mixed = rules.mixed_sign(left.type, is_weak(left), right.type, is_weak(right))
    if mixed is None or op in ("&", "**"):
        return
    if ex.nonneg(left if mixed[0] else right):
        return  # a provably non-negative signed operand (gid, i % 8) converts exactly
    if isinstance(node, ast.AugAssign) and op in ("+", "-", "*", "|", "^"):
        if not elem_type(left.type).is_signed and elem_type(left.type).bits >= 32:
            return
    s_left, s, u = mixed
    texts = _operand_texts(node)
    s_text, u_text = texts if s_left else texts[::-1]
    wider = "long" if u.bits < 64 else ""
    fix = (
        f"write {u}({s_text}) if it cannot be negative"
        + (f", or {wider}({u_text}) to keep the sign" if wider else "")
        + (f", or {s}({u_text}) if {u_text} fits in {s}" if not wider else "")
    )
    ex.state.fail(
        node,
        f"operator {op} mixes signed {s} ({s_text}) and unsigned {u} ({u_text}): C would "
        f"compute it in {u}, where a negative {s_text} wraps to a huge number; convert one "
        f"operand: {fix}",
    )


def math_compare(ex: _Side, op: str, left: Expr, right: Expr, node: ast.AST) -> Expr | None:
    """A signed and an unsigned integer compare mathematically, as in Python (C would
    convert the signed one to unsigned, so ``-1 < 1u`` were false): through ``long`` when
    that holds both, else ``s < 0 || (ulong)s < u``. None when the operands do not mix."""
    lt, rt = left.type, right.type
    loc = ex.state.loc(node)
    mixed = rules.mixed_sign(lt, is_weak(left), rt, is_weak(right))
    if mixed is None:
        for lit, other in ((left, right), (right, left)):
            if (
                is_weak(lit)
                and isinstance(lit, Const)
                and isinstance(lit.value, int)
                and lit.value < 0
                and isinstance(other.type, ScalarType)
                and other.type.is_int
                and not other.type.is_signed
                and not other.type.is_bool
            ):
                if pure(other):  # decided: a negative number is below every unsigned one
                    return Const(C.bool_, loc, _BELOW[lit is left][op])
                mixed = (lit is left, C.long, rules.promote_int(other.type))
                break
        if mixed is None:
            return None
    s_left, s, u = mixed
    signed = left if s_left else right
    if ex.nonneg(signed):  # gid < n: the unsigned comparison is exact
        return fold.compare(op, C.bool_, loc, ex.coerce(left, u, node), ex.coerce(right, u, node))
    if u.bits < 64:
        return fold.compare(
            op, C.bool_, loc, ex.coerce(left, C.long, node), ex.coerce(right, C.long, node)
        )
    if not pure(signed):
        ex.state.fail(
            node,
            f"comparing signed {s} with unsigned {u} reads the signed operand twice "
            f"(a negative value is smaller than any unsigned one): give it a name first",
        )
    below = _BELOW[s_left]
    is_neg = fold.compare("<", C.bool_, loc, signed, Const(signed.type, loc, 0))
    cmp = fold.compare(op, C.bool_, loc, ex.coerce(left, u, node), ex.coerce(right, u, node))
    if below[op]:
        return logical("or", loc, is_neg, cmp)
    return logical("and", loc, fold.unary("not", C.bool_, loc, is_neg), cmp)


def _operand_texts(node: ast.AST) -> tuple[str, str]:
    """The source of a binary operation's two operands, for diagnostics."""
    if isinstance(node, ast.BinOp):
        return ast.unparse(node.left), ast.unparse(node.right)
    if isinstance(node, ast.AugAssign):
        return ast.unparse(node.target), ast.unparse(node.value)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        return ast.unparse(node.left), ast.unparse(node.comparators[0])
    return "the left operand", "the right operand"
