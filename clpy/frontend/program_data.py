"""Program-scope data read by kernel code (clpy/program_scope.py): a module-level NumPy array
or tuple of numbers, a ``clpy.constant_array`` or a ``clpy.global_var`` named in a kernel or
device function becomes a ``VarRef`` of a ``ProgramVar`` (clpy/ir/program_vars.py), an array
in the ``__constant`` or ``__global`` address space. Writes to a ``__constant`` one are
compile errors (spec §6.5: "Writing to such a variable results in a compile-time error")."""

from __future__ import annotations

import ast
import re
import types as py_types
from typing import Any

from clpy.frontend.context import FuncState
from clpy.ir.nodes import Const, Expr, VarRef
from clpy.ir.program_vars import ProgramVar
from clpy.program_scope import ModuleData, ProgramData, module_data
from clpy.types.core import AddressSpace, ArrayType


def lookup(st: FuncState, name: str, node: ast.AST) -> Expr | None:
    """``name`` (closure first, then globals, as Python does) as program data, or None."""
    parsed = st.parsed
    for ns, where in ((parsed.closure, " (a closure variable)"), (parsed.globals, "")):
        if name in ns:
            if not where:
                where = f" (module {ns.get('__name__', '?')})"
            try:
                data = module_data(ns, name, where)
            except TypeError as e:  # a table clpy cannot hold (bool, empty ...)
                st.fail(node, str(e))
            return None if data is None else reference(st, data, node)
    return None


def attribute(st: FuncState, obj: Any, attr: str, node: ast.AST) -> Expr | None:
    """``module.NAME`` as program data, or None."""
    if not isinstance(obj, py_types.ModuleType):
        return None
    ns = vars(obj)
    if attr not in ns:
        return None
    try:
        data = module_data(ns, attr, f" (module {obj.__name__})")
    except TypeError as e:
        st.fail(node, str(e))
    return None if data is None else reference(st, data, node)


def reference(st: FuncState, data: ProgramData, node: ast.AST) -> Expr:
    loc = st.loc(node)
    t = ArrayType(data.elem, data.shape, data.space)
    var = ProgramVar(c_name(data.name or "table"), t, loc, False, data)
    return VarRef(t, loc, var)


def c_name(name: str) -> str:
    """A C identifier from a Python name (the emitter resolves clashes)."""
    out = re.sub(r"\W", "_", name)
    return out if out and not out[0].isdigit() else f"t_{out}"


def tuple_item(base: Expr, idx: Expr) -> Any:
    """``T[k]`` for a module-level tuple ``T`` (immutable) and a constant ``k``: the number,
    so that it is a compile-time constant (an array size, a range bound) like a module-level
    int; None otherwise (the table is read at run time)."""
    if not (isinstance(base, VarRef) and isinstance(base.var, ProgramVar)):
        return None
    src = base.var.source
    if not isinstance(src, ModuleData) or not isinstance(idx, Const):
        return None
    value = src.current()
    if not isinstance(value, tuple) or len(base.var.shape) != 1:
        return None
    k = int(idx.value)
    if not 0 <= k < len(value):
        return None  # the bounds error comes from indexing the array
    return value[k]


def check_write(st: FuncState, e: VarRef, node: ast.AST) -> None:
    """A store into a program-scope ``__constant`` array is an error naming it."""
    var = e.var
    if isinstance(var, ProgramVar) and var.space is AddressSpace.CONSTANT:
        st.fail(
            node,
            f"{var.label} is a program-scope __constant table: kernels cannot write it "
            "(spec §6.5); use clpy.global_var for program-scope data kernels write",
        )


__all__ = ["lookup", "attribute", "reference", "check_write", "c_name", "tuple_item"]
