"""Global buffers each of whose elements only one work-item can touch (sim/native/checks.py):
every access of the buffer in the kernel is ``buf[i]`` with one and the same index ``i`` that
differs between any two work-items of the launch (the global id of a 1-D launch, the global
linear id, or a variable declared once from one). No two work-items share an element of such
a buffer, so it cannot take part in a race and needs no race shadow; its index is checked for
bounds whatever the checks (an index out of bounds is element 0, which work-items share)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from clpy.ir.nodes import (
    Assign,
    CallBuiltin,
    Cast,
    Const,
    Declare,
    Expr,
    For,
    Function,
    If,
    Index,
    Stmt,
    Var,
    VarRef,
    While,
)
from clpy.types.core import ScalarType


def owned(fn: Function, dims: int, candidates: Iterable[str]) -> frozenset[str]:
    """The names among ``candidates`` (global buffer parameters of ``fn``) whose elements one
    work-item each can touch, in a ``dims``-dimensional launch."""
    params = {p.name: p for p in fn.params if p.name in set(candidates)}
    if not params:
        return frozenset()
    once = _declared_once(fn.body)
    keys: dict[Var, set[str] | None] = {p: set() for p in params.values()}

    def index_key(e: Expr) -> str | None:
        if isinstance(e, Cast):
            t = e.type
            if isinstance(t, ScalarType) and t.is_int and t.bits >= 32:
                return index_key(e.value)
            return None
        if isinstance(e, VarRef) and e.var in once:
            return index_key(once[e.var])
        if isinstance(e, CallBuiltin) and e.builtin.index:
            name = e.builtin.name
            if name == "get_global_linear_id":
                return "linear"
            if (
                name == "get_global_id"
                and dims == 1
                and len(e.args) == 1
                and isinstance(e.args[0], Const)
                and e.args[0].value == 0
            ):
                return "gid0"
        return None

    def visit(x: Any) -> None:
        if isinstance(x, Index) and isinstance(x.base, VarRef) and x.base.var in keys:
            got = keys[x.base.var]
            if got is not None:
                k = index_key(x.index)
                if k is None:
                    keys[x.base.var] = None
                else:
                    got.add(k)
            visit(x.index)
            return
        if isinstance(x, VarRef) and x.var in keys:
            keys[x.var] = None  # any other use: passed on, pointer arithmetic, atomics
            return
        if isinstance(x, (Expr, Stmt)):
            for v in vars(x).values():
                if isinstance(v, (Expr, Stmt)):
                    visit(v)
                elif isinstance(v, (tuple, list)):
                    for y in v:
                        if isinstance(y, (Expr, Stmt)):
                            visit(y)

    for s in fn.body:
        visit(s)
    return frozenset(p.name for p, k in keys.items() if k is not None and len(k) <= 1)


def _declared_once(body: list[Stmt] | tuple[Stmt, ...]) -> dict[Var, Expr]:
    """Variables declared with an initializer at the top level of ``body`` and never assigned
    again (nor declared twice)."""
    top: dict[Var, Expr] = {}
    bad: set[Var] = set()
    ids = {id(s) for s in body}
    for s in body:
        if isinstance(s, Declare) and s.init is not None:
            if s.var in top:
                bad.add(s.var)
            top[s.var] = s.init
    for s in _walk(body):
        if isinstance(s, Assign) and isinstance(s.target, VarRef):
            bad.add(s.target.var)
        elif isinstance(s, For):
            bad.add(s.var)
        elif isinstance(s, Declare) and id(s) not in ids:
            bad.add(s.var)
    return {v: e for v, e in top.items() if v not in bad}


def _walk(stmts: Iterable[Stmt]) -> list[Stmt]:
    out: list[Stmt] = []
    for s in stmts:
        out.append(s)
        if isinstance(s, If):
            out.extend(_walk(s.body))
            out.extend(_walk(s.orelse))
        elif isinstance(s, (For, While)):
            out.extend(_walk(s.body))
    return out
