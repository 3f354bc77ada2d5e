"""OpenCL C for device-side enqueue (spec §1.12, §1.13.17): block literals, ``ndrange_2D/3D``
size arrays, and prototypes of kernels that blocks name before their definition.

A ``BlockLiteral`` becomes ``^{child(a, b);}``, or with local-memory arguments
``^(local void *clpy_l0){child(a, (local float *)clpy_l0);}``; the child is the kernel or
device function itself (OpenCL C lets a block call a kernel as a function, as the spec's
examples do). Captures are written inside the block: the frontend only admits captures
whose value cannot change before the child runs (clpy/frontend/blocks.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from clpy.ir.blocks import BlockLiteral
from clpy.ir.nodes import CallBuiltin, Function, Var, VarRef
from clpy.ir.walk import walk
from clpy.types.core import ArrayType, PointerType


def block_text(ex: Any, e: BlockLiteral, implicit_value: Callable[[Any], Any]) -> str:
    """The block literal; ``ex`` is the expression emitter (clpy/emit/c_exprs.py)."""
    fn = e.child.get()
    name = ex.fn_names.get(fn, fn.name)
    args: list[str] = []
    for p, (kind, i) in zip(fn.params, e.child_args()):
        if kind == "local":
            t = p.type
            assert isinstance(t, PointerType)
            args.append(f"({t.with_const(False).cl_name})clpy_l{i}")
        else:
            args.append(ex(implicit_value(e.captures[i])))
    call = f"{name}({', '.join(args)});"
    if not e.local_at:
        return f"^{{{call}}}"
    params = ", ".join(f"local void *clpy_l{k}" for k in range(len(e.local_at)))
    return f"^({params}){{{call}}}"


def enqueue_text(ex: Any, call: CallBuiltin) -> str:
    """``enqueue_kernel``: an array of events is passed as ``&evs[0]`` (Clang checks the
    built-in's event arguments before arrays decay: a bare ``evs`` is refused)."""
    parts = []
    for a in call.args:
        text = ex(a)
        if isinstance(a.type, ArrayType):
            text = f"&{text if isinstance(a, VarRef) else f'({text})'}[0]"
        parts.append(text)
    return f"{call.builtin.cl_name}({', '.join(parts)})"


def ndrange_text(ex: Any, call: CallBuiltin) -> str:
    """``ndrange_2D((__private size_t[2]){gx, gy}, ...)``: the spec's forms take arrays of
    sizes; a private compound literal per array (Clang wants the private address space)."""
    dims = int(call.builtin.name[len("ndrange_")])
    parts = []
    for k in range(0, len(call.args), dims):
        items = ", ".join(ex(a) for a in call.args[k : k + dims])
        parts.append(f"(__private size_t[{dims}]){{{items}}}")
    return f"{call.builtin.cl_name}({', '.join(parts)})"


def block_children(fn: Function) -> list[Function]:
    """Functions the blocks of ``fn`` call, in order of first use."""
    out: list[Function] = []
    for n in walk(fn.body):
        if isinstance(n, BlockLiteral):
            child = n.child.get()
            if child not in out:
                out.append(child)
    return out


def forward_declarations(
    fns: list[Function], param_text: Callable[[Function, Var], str], names: dict[Function, str]
) -> list[str]:
    """Prototypes of the kernels a block calls before their definition (kernels enqueuing
    each other; a kernel enqueuing itself needs none)."""
    out: list[str] = []
    seen: set[Function] = set()
    for pos, fn in enumerate(fns):
        for child in block_children(fn):
            if child in seen or child is fn or child in fns[:pos] or not child.is_kernel:
                continue
            seen.add(child)
            params = ", ".join(param_text(child, p) for p in child.params)
            out.append(f"__kernel void {names.get(child, child.name)}({params});")
    return out
