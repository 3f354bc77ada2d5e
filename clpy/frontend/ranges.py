"""Range facts: which integer variables never hold a negative value.

Python's ``//`` and ``%`` round toward minus infinity and C's toward zero; they agree when both
operands are non-negative, and then clpy emits C's own operators instead of the
``clpy_floordiv``/``clpy_floormod`` helpers (DESIGN.md "Semantics"). The expression rule is
``ExprBuilder.nonneg``: work-item queries, unsigned values, non-negative constants, and
``+ * / % >> &`` of non-negative operands. This module supplies the variables:

- a name assigned once, from a non-negative value (``ty = get_local_id(1)``);
- a ``range`` counter that starts non-negative and counts up: a positive constant step, a
  size query (``for i in range(lid, n, get_local_size(0))``) or a name assigned once from
  one (``step = 32 * get_num_groups(0)``); the loop then also tests ``i < stop`` only, not
  ``step > 0 ? i < stop : i > stop``;
- a name assigned several times (``s = 1`` ... ``s *= 2``, ``k //= 2``, a second loop over
  ``i``) whose every store is non-negative. That is an inductive fact: the build assumes it
  for every such integer name, checks each store under the assumption, and when a store
  refutes it (``s -= 1``) drops the name and rebuilds (``Restart``, as type widening does).

Stores of values that overflow the type are the user's (as for ``16 * gid + lid``): the fact
is about Python's integers, which the kernel's fixed-width types stand for.
"""

from __future__ import annotations

from typing import Protocol

from clpy.frontend.context import FuncState
from clpy.ir.nodes import Binary, CallBuiltin, Cast, Const, Expr, NamedConst, Var, VarRef
from clpy.types.core import ScalarType

# Work-item queries whose value is at least 1 in any launch (spec §6.13.1; a zero-size
# NDRange runs nothing).
_POSITIVE_QUERIES = frozenset(
    {
        "get_work_dim",
        "get_global_size",
        "get_local_size",
        "get_enqueued_local_size",
        "get_num_groups",
        "get_sub_group_size",
        "get_max_sub_group_size",
        "get_num_sub_groups",
        "get_enqueued_num_sub_groups",
    }
)


class _Checker(Protocol):
    state: FuncState

    def nonneg(self, e: Expr) -> bool: ...


def positive(ex: _Checker, e: Expr) -> bool:
    """``e`` is provably >= 1: a positive constant, a size query, or a product of such, or a
    sum of one with non-negative values."""
    if isinstance(e, (Const, NamedConst)):
        return bool(e.value > 0)
    if isinstance(e, VarRef):
        return e.var in ex.state.positive_vars  # step = 32 * get_num_groups(0)
    if isinstance(e, Cast) and isinstance(e.type, ScalarType) and e.type.is_int:
        return positive(ex, e.value)
    if isinstance(e, CallBuiltin):
        return e.builtin.name in _POSITIVE_QUERIES
    if isinstance(e, Binary) and e.op == "*":
        return positive(ex, e.left) and positive(ex, e.right)
    if isinstance(e, Binary) and e.op == "+":
        return (positive(ex, e.left) and ex.nonneg(e.right)) or (
            positive(ex, e.right) and ex.nonneg(e.left)
        )
    return False


def _is_int(v: Var) -> bool:
    return isinstance(v.type, ScalarType) and v.type.is_int and not v.type.is_bool


def declare(st: FuncState, ex: _Checker, var: Var, init: Expr | None) -> None:
    """``var`` is declared with its first stored value ``init`` (None: declared without one)."""
    if not _is_int(var) or var.is_param:
        return
    if init is not None and ex.nonneg(init):
        if var.name in st.assigned_once or var.name not in st.nonneg_refuted:
            st.nonneg_vars.add(var)
        if var.name in st.assigned_once and positive(ex, init):
            st.positive_vars.add(var)
    elif var.name not in st.assigned_once:
        st.nonneg_refuted.add(var.name)  # nothing used it yet: no rebuild needed


def store(st: FuncState, ex: _Checker, var: Var, value: Expr) -> None:
    """A later store of ``value`` into ``var``: if the build assumed ``var`` non-negative and
    ``value`` may be negative, drop the assumption and rebuild."""
    if var in st.nonneg_vars and not ex.nonneg(value):
        st.nonneg_vars.discard(var)
        st.nonneg_refuted.add(var.name)
        st.restart_pending = True
