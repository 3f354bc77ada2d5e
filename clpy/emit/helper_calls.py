"""The call of a per-type helper function that a lowering emits in place of a built-in."""

from __future__ import annotations

from clpy.emit.c_exprs import ExprEmitter
from clpy.ir.nodes import CallBuiltin


def call_helper(ex: ExprEmitter, kind: str, call: CallBuiltin) -> str:
    """``clpy_<name>_<type>(args...)`` for the built-in ``call`` (``<type>`` its first
    argument's), noting the helper ``(kind + name, type)`` so that the program emits its
    source once (clpy/emit/helpers.py)."""
    name = call.builtin.cl_name
    t = call.args[0].type
    ex.helpers.add((f"{kind}{name}", t))
    return f"clpy_{name}_{t.cl_name}({', '.join(ex(a) for a in call.args)})"
