"""Device functions with barriers spliced into the kernel's own statements before the native
engine generates C (sim/native/cgen.py).

A call statement ``f(...)`` at the kernel's top level, of a function that contains a barrier
and no ``return``, called once in the whole kernel, becomes a ``Declare`` of each scalar
parameter from its argument followed by ``f``'s body; a pointer parameter ``f`` never assigns
whose argument is a kernel buffer or a local array is an alias of that memory. The kernel's
analyses (sim/native/uniform.py) then see ``f``'s statements as the kernel's own: a loop with
a barrier and a group-uniform trip count runs once per group as a plain C loop, and a variable
computed from the local id is recomputed in each region, where the generic inlining
(cgen_group.py ``inline``) kept every parameter and loop counter per work-item under activity
masks (Rodinia NW's ``nw_block``). The statements run in the same order either way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from clpy.ir.nodes import (
    Assign,
    CallFunc,
    Cast,
    Declare,
    Expr,
    ExprStmt,
    For,
    Function,
    Return,
    Stmt,
    Var,
    VarRef,
)
from clpy.ir.walk import walk
from clpy.types.core import AddressSpace, ArrayType, PointerType
from clpy_sim.native.cgen_group import func_barrier

_MAX_ROUNDS = 8  # splices of splices (a function's body calling another one)


def splice(fn: Function, memo: dict[int, bool]) -> tuple[Function, dict[Var, Expr]]:
    """``fn`` with its spliceable calls replaced by the callees' statements, and the pointer
    parameters of the spliced functions that alias a kernel buffer or a local array (their
    arguments). ``fn`` itself when nothing is spliced."""
    body = fn.body
    ptrs: dict[Var, Expr] = {}
    for _ in range(_MAX_ROUNDS):
        calls = _call_counts(body)
        out: list[Stmt] = []
        changed = False
        for s in body:
            got = _spliced(fn, body, s, calls, memo, ptrs)
            if got is None:
                out.append(s)
            else:
                out.extend(got)
                changed = True
        if not changed:
            break
        body = tuple(out)
    if body is fn.body:
        return fn, ptrs
    return _with_body(fn, body), ptrs


def _spliced(
    fn: Function,
    body: Sequence[Stmt],
    s: Stmt,
    calls: dict[int, int],
    memo: dict[int, bool],
    ptrs: dict[Var, Expr],
) -> list[Stmt] | None:
    if not (isinstance(s, ExprStmt) and isinstance(s.expr, CallFunc)):
        return None
    f = s.expr.func
    if calls.get(id(f), 0) != 1 or not func_barrier(f, memo):
        return None
    if any(isinstance(x, Return) for x in walk(list(f.body))):
        return None
    assigned = _assigned(f.body)
    kernel_assigned = _assigned(body)
    decls: list[Stmt] = []
    aliases: dict[Var, Expr] = {}
    for p, a in zip(f.params, s.expr.args):
        if isinstance(p.type, ArrayType):
            return None
        if isinstance(p.type, PointerType) and p not in assigned:
            if _static(fn, a, kernel_assigned):
                aliases[p] = a
                continue
        decls.append(Declare(a.loc, p, a))
    ptrs.update(aliases)
    return [*decls, *f.body]


def _static(fn: Function, a: Expr, kernel_assigned: set[Var]) -> bool:
    """Whether argument ``a`` is the same memory in every work-item: a kernel pointer parameter
    the kernel never assigns, or a local array (what cgen_group.py ``static_ptr`` resolves)."""
    if isinstance(a, VarRef):
        v = a.var
        return v in fn.params and isinstance(v.type, PointerType) and v not in kernel_assigned
    if isinstance(a, Cast) and isinstance(a.value, VarRef):
        t = a.value.type
        return isinstance(t, ArrayType) and t.space is AddressSpace.LOCAL
    return False


def _call_counts(body: Sequence[Stmt]) -> dict[int, int]:
    """How often each device function is called from ``body`` and the functions it reaches
    (each function's body counted once per call site)."""
    counts: dict[int, int] = {}
    seen: set[int] = set()
    todo: list[Sequence[Stmt]] = [body]
    while todo:
        for x in walk(list(todo.pop())):
            if isinstance(x, CallFunc):
                k = id(x.func)
                counts[k] = counts.get(k, 0) + 1
                if k not in seen:
                    seen.add(k)
                    todo.append(x.func.body)
    return counts


def _assigned(stmts: Sequence[Stmt]) -> set[Var]:
    out: set[Var] = set()
    for x in walk(list(stmts)):
        if isinstance(x, Assign) and isinstance(x.target, VarRef):
            out.add(x.target.var)
        elif isinstance(x, For):
            out.add(x.var)
    return out


def _with_body(fn: Function, body: tuple[Stmt, ...]) -> Function:
    return dataclasses.replace(fn, body=body)
