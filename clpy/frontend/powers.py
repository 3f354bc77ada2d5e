"""``**`` in kernel code (DESIGN.md "Semantics": ``**`` is ``pow``/``pown``), built for the
expression builder: Python's value for two literals, integer powers multiplied out, ``x ** 2``
and ``x ** 3`` of floats as products (exactly rounded), ``pown``/``pow`` otherwise."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from clpy.builtins.registry import REGISTRY
from clpy.frontend.helpers import elem_type, is_int, is_weak, pure, simple, with_elem
from clpy.ir import fold
from clpy.ir.nodes import Const, Expr
from clpy.types import catalog as C
from clpy.types import rules
from clpy.types.core import ScalarType, VectorType

if TYPE_CHECKING:
    from clpy.frontend.exprs import ExprBuilder


def power(ex: ExprBuilder, base: Expr, exp: Expr, node: ast.AST) -> Expr:
    """``base ** exp`` with Python's meaning: constant powers of literals folded, small integer
    powers multiplied out, ``pown``/``pow`` otherwise (DESIGN.md "Semantics")."""
    bt = base.type
    loc = ex.state.loc(node)
    if is_weak(base) and is_weak(exp):  # 2 ** 10, 2 ** 0.5: Python's value, typed as a literal
        try:
            v = base.value**exp.value  # type: ignore[attr-defined]
        except (OverflowError, ZeroDivisionError) as e:
            ex.state.fail(node, f"cannot compute this constant power: {e}")
        if (
            isinstance(v, (int, float))
            and not isinstance(v, bool)
            and (isinstance(v, float) or -(2**63) <= v < 2**64)
        ):
            return ex.literal(v, node)
    if isinstance(exp, Const) and is_int(exp.type) and not elem_type(bt).is_float:
        n = exp.value
        if not 0 <= n <= 16:
            ex.state.fail(
                node,
                "integer ** needs a constant exponent from 0 to 16; "
                "for other powers use clpy.pown(float(x), n)",
            )
        if n > 1 and not pure(base):
            ex.state.fail(
                node,
                "the base of ** is repeated (x * x * ...): give it a "
                "name first, it has side effects",
            )
        t = rules.arithmetic(bt, is_weak(base), C.int_, True, "*")
        if n == 0:
            return ex.coerce(Const(C.int_, loc, 1, True), t, node)
        b = ex.coerce(base, t, node)
        out: Expr = b
        for _ in range(n - 1):
            out = fold.binary("*", t, loc, out, b)
        return out
    if (
        is_weak(base)
        and isinstance(base.value, int)  # type: ignore[attr-defined]
        and base.value > 0  # type: ignore[attr-defined]
        and base.value & (base.value - 1) == 0  # type: ignore[attr-defined]
        and isinstance(exp.type, ScalarType)
        and exp.type.is_int
        and ex.nonneg(exp)
    ):
        # 2 ** i with i >= 0 is an int in Python: 1 << i (4 ** i: 1 << 2 * i)
        t = rules.promote_int(exp.type)
        shift = ex.coerce(exp, t, node)
        bits = base.value.bit_length() - 1  # type: ignore[attr-defined]
        if bits != 1:
            shift = fold.binary("*", t, loc, Const(t, loc, bits, True), shift)
        return fold.binary("<<", t, loc, Const(t, loc, 1, True), shift)
    if (
        isinstance(exp, Const)
        and is_int(exp.type)
        and exp.value in (2, 3)
        and elem_type(bt).is_float
        and simple(base)
    ):
        # x ** 2 reads (and runs) best as x * x; it is also exactly rounded.
        out = base
        for _ in range(exp.value - 1):
            out = fold.binary("*", bt, loc, out, base)
        return out
    if not elem_type(bt).is_float:
        t = (
            with_elem(bt, C.float_)
            if not isinstance(exp.type, ScalarType) or not elem_type(exp.type).is_float
            else exp.type
        )
        base = ex.coerce(base, t, node)
    if is_int(exp.type) and not isinstance(base.type, VectorType):
        return ex.calls.call_builtin(REGISTRY["pown"], [base, exp], node)
    return ex.calls.call_builtin(REGISTRY["pow"], [base, exp], node)
