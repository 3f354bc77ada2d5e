"""``min``/``max`` of 32- and 64-bit integers written as conditional expressions, for a device
whose compiler makes slower code of the built-ins (NVIDIA).

The originals of clpy's GPU suite write ``#define MIN(a, b) ((a) <= (b) ? (a) : (b))``. On the
H100 (driver 580) Rodinia's pathfinder kernel, whose inner loop is
``shortest = min(min(prev[w], prev[tx]), prev[e])``, ran 4% slower with clpy's built-in
``min`` than the same emitted source with ``min``/``max`` as those macros, in two
interleaved kernel diagnoses (``benchmarks.programs.kernel_diag`` build ``clpy_minmax``):
0.968x against 1.009x of the original in session 6, 0.937x against 0.974x in session 8
(benchmarks/results/kernel_diag_h100_s8_minmax.md).

Where ``Target.info["lower_builtins"]`` lists ``min:int``, ``max:long`` ... a scalar call whose
arguments can be evaluated twice without changing anything (variables, constants, loads
``a[i]`` with such indices, their sums and differences, conversions, nested ``min``/``max``
of the same) is written as spec §6.13.3 defines it: ``min(x, y)`` is ``y < x ? y : x`` and
``max(x, y)`` is ``x < y ? y : x``. Any other call keeps the built-in (its arguments are
evaluated once). Vectors keep the built-in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clpy.ir.nodes import Binary, CallBuiltin, Cast, Const, Expr, Index, NamedConst, VarRef
from clpy.types.core import ScalarType

if TYPE_CHECKING:
    from clpy.emit.c_exprs import ExprEmitter

MINMAX = ("min", "max")


def repeatable(e: Expr) -> bool:
    """Whether evaluating ``e`` twice is the same as once, and cheap (common subexpressions)."""
    if isinstance(e, (VarRef, Const, NamedConst)):
        return True
    if isinstance(e, Cast):
        return repeatable(e.value)
    if isinstance(e, Index):
        return repeatable(e.base) and repeatable(e.index)
    if isinstance(e, Binary):
        return e.op in ("+", "-") and repeatable(e.left) and repeatable(e.right)
    if isinstance(e, CallBuiltin):
        return conditional_ok(e)
    return False


def conditional_ok(call: CallBuiltin) -> bool:
    """``call`` is a scalar ``min``/``max`` of two repeatable arguments."""
    return (
        call.builtin.cl_name in MINMAX
        and isinstance(call.type, ScalarType)
        and call.type.is_int
        and len(call.args) == 2
        and all(isinstance(a.type, ScalarType) and repeatable(a) for a in call.args)
    )


def conditional(ex: ExprEmitter, call: CallBuiltin) -> str:
    """``call`` (``conditional_ok``) as a conditional expression of its arguments."""
    x, y = (_text(ex, a) for a in call.args)
    if call.builtin.cl_name == "min":
        return f"({y} < {x} ? {y} : {x})"
    return f"({x} < {y} ? {y} : {x})"


def _text(ex: ExprEmitter, a: Expr) -> str:
    if isinstance(a, CallBuiltin) and conditional_ok(a):
        return conditional(ex, a)
    return ex.operand(a)
