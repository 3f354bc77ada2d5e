"""C's array-pointer idioms in kernel code (issue 12, point 3).

- **Decay.** An array used as a value is a pointer to its first element, in the array's
  address space (C99 §6.3.2.1p3; OpenCL C keeps the space, spec §1.5): ``hist + x[i]``,
  ``clpy.atomic_inc(hist + k)``, a private array as the out-pointer of ``remquo``/``fract``,
  an array passed to a ``@clpy.func`` parameter ``Local[float32]``/``Private[float32]``, and
  ``p: Private[float32] = arr`` (an annotated pointer local). In the IR the decay is a
  ``Cast`` to the pointer type whose value is the array; the emitter writes the bare array
  name (C decays it), the simulator turns the array into a pointer value. Only a
  one-dimensional array decays: ``tile[r]`` (one row) does, ``tile`` itself (a pointer to
  rows, ``float (*)[17]`` in C) is an error that says to index a row.
- **Address-of.** ``clpy.addr(a[i])`` is ``&a[i]``: a pointer to one element of an array or
  pointer (``a + i``, emitted as such), in its address space; ``clpy.addr(tile[r][c])`` is
  ``tile[r] + c``. Python has no ``&``, and ``a + i`` already means the same, so ``addr``
  exists for code that reads better with it. Scalars and struct fields have no address in
  clpy (declare a ``clpy.private_array(T, 1)``).
"""

from __future__ import annotations

import ast
from typing import Any

from clpy.frontend.context import PyValue
from clpy.ir.nodes import Binary, Cast, Expr, Index
from clpy.types.core import ArrayType, PointerType, ScalarType


def decay(state: Any, e: Expr, node: ast.AST) -> Expr:
    """``e`` (an array-typed expression) as a pointer to its first element."""
    t = e.type
    assert isinstance(t, ArrayType)
    if len(t.shape) > 1:
        state.fail(
            node,
            f"a {len(t.shape)}-dimensional array ({t}) is not a pointer to its elements: "
            "index it down to one row first (tile[r] is a pointer to row r's elements)",
        )
    return Cast(PointerType(t.elem, t.space), e.loc, e)


def subscript_value(ex: Any, base: Any, node: ast.Subscript) -> Any:
    """``Obj[...]`` on a compile-time object (``Global[float32]`` in a local's annotation):
    the Python value, when every index is a compile-time value too."""
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    keys = []
    for p in parts:
        v = ex.value(p)
        if not isinstance(v, PyValue):
            ex.state.fail(node, f"{ast.unparse(node.value)!r} is not a value in kernel code")
        keys.append(v.value)
    try:
        out = base.value[keys[0] if len(keys) == 1 else tuple(keys)]
    except Exception as e:  # noqa: BLE001 - the object's own error, at the user's line
        ex.state.fail(node, f"cannot evaluate {ast.unparse(node)!r}: {e}")
    return PyValue(out, ex.state.loc(node))


def decay_operands(state: Any, left: Expr, right: Expr, node: ast.AST) -> tuple[Expr, Expr]:
    """Both operands of a pointer comparison, arrays decayed (``p < a``)."""
    return (
        decay(state, left, node) if is_decayable(left) else left,
        decay(state, right, node) if is_decayable(right) else right,
    )


def is_decayable(e: Expr) -> bool:
    return isinstance(e.type, ArrayType) and len(e.type.shape) == 1


def address_of(ex: Any, node: ast.Call) -> Expr:
    """``clpy.addr(a[i])`` → ``a + i`` (see the module docstring)."""
    state = ex.state
    if len(node.args) != 1 or node.keywords:
        state.fail(node, "clpy.addr takes one element: clpy.addr(a[i])")
    arg = node.args[0]
    if not isinstance(arg, ast.Subscript):
        state.fail(
            arg,
            f"clpy.addr takes an element of an array or pointer (clpy.addr(a[i])), not "
            f"{ast.unparse(arg)!r}: scalars and fields have no address in clpy; use a "
            "clpy.private_array(T, 1)",
        )
    e = ex.expr(arg)
    if not isinstance(e, Index) or isinstance(e.type, ArrayType):
        state.fail(arg, f"clpy.addr takes one element; {ast.unparse(arg)!r} is a whole row")
    base = e.base
    if isinstance(base.type, ArrayType):
        base = decay(state, base, arg)
    pt = base.type
    assert isinstance(pt, PointerType)
    idx = e.index
    if isinstance(idx.type, ScalarType) and idx.type.is_bool:
        state.fail(arg, "an index must be an integer")
    return Binary(pt, state.loc(node), "+", base, idx)


__all__ = ["address_of", "decay", "decay_operands", "is_decayable", "subscript_value"]
