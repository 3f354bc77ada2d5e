"""Uniform control flow check for barriers and collectives (spec §1.13.8, §1.13.15).

Barriers and work-group/sub-group functions must be reached by every work-item of the group.
This conservative check rejects a call it can *prove* divergent: one under an ``if``/``while``
/loop whose condition or bounds depend on the work-item id — ``get_local_id``,
``get_global_id``, their linear forms, ``get_sub_group_local_id``, scan results, atomic results
— directly or through variables (and memory loads) assigned from such values; and one after an
``if`` on such a condition that may ``return``/``break``/``continue``. Conditions built only
from kernel arguments, group ids, sizes, constants and reduction results are uniform. The
simulator checks the rest at run time.
"""

from __future__ import annotations

from clpy.errors import KernelTypeError
from clpy.ir.nodes import (
    Assign,
    Break,
    CallBuiltin,
    CallFunc,
    Continue,
    Declare,
    Expr,
    For,
    Function,
    If,
    Return,
    Stmt,
    Var,
    VarRef,
    While,
)
from clpy.ir.walk import children, walk

DIVERGENT_SOURCES = frozenset(
    {
        "get_local_id",
        "get_global_id",
        "get_local_linear_id",
        "get_global_linear_id",
        "get_sub_group_local_id",
    }
)


def _divergent_call(c: CallBuiltin) -> bool:
    b = c.builtin
    if b.name in DIVERGENT_SOURCES:
        return True
    coll = b.collective
    if coll is not None and coll.mode.startswith("scan"):
        return True
    return b.family == "atomics" and c.type.cl_name != "void"


def _tainted(e: Expr, bad: set[Var]) -> bool:
    stack: list[Expr | Stmt] = [e]
    while stack:
        n = stack.pop()
        if isinstance(n, VarRef) and n.var in bad:
            return True
        if isinstance(n, CallBuiltin):
            if _divergent_call(n):
                return True
            if n.builtin.collective is not None:
                continue  # reduce/broadcast/all/any: the same value for the whole group
        stack.extend(children(n))
    return False


def _tainted_vars(fn: Function) -> set[Var]:
    """Variables whose value may differ between work-items (fixpoint over assignments)."""
    bad: set[Var] = set()
    nodes = list(walk(fn.body))
    changed = True
    while changed:
        changed = False
        for n in nodes:
            var: Var | None = None
            value: Expr | None = None
            if isinstance(n, Declare) and n.init is not None:
                var, value = n.var, n.init
            elif isinstance(n, Assign) and isinstance(n.target, VarRef):
                var, value = n.target.var, n.value
            elif isinstance(n, For):
                if n.var not in bad and any(_tainted(x, bad) for x in (n.start, n.stop, n.step)):
                    bad.add(n.var)
                    changed = True
                continue
            if var is None or value is None or var in bad:
                continue
            if _tainted(value, bad) or (isinstance(n, Assign) and n.op and _tainted(n.target, bad)):
                bad.add(var)
                changed = True
    return bad


def _contains_uniform(stmts: tuple[Stmt, ...], seen: set[int]) -> CallBuiltin | CallFunc | None:
    for n in walk(stmts):
        if isinstance(n, CallBuiltin) and n.builtin.uniform:
            return n
        if isinstance(n, CallFunc) and id(n.func) not in seen:
            seen.add(id(n.func))
            if _contains_uniform(n.func.body, seen) is not None:
                return n
    return None


def _exits(stmts: tuple[Stmt, ...]) -> bool:
    return any(isinstance(n, (Return, Break, Continue)) for n in walk(stmts))


def check_uniform(fn: Function) -> None:
    """Raise ``KernelTypeError`` for a barrier/collective under provably divergent control."""
    if _contains_uniform(fn.body, set()) is None:
        return  # nothing that every work-item must reach: no taint analysis needed
    bad = _tainted_vars(fn)
    _check_block(fn.body, bad, None)


def _check_block(stmts: tuple[Stmt, ...], bad: set[Var], why: Stmt | None) -> None:
    for s in stmts:
        if why is not None:
            hit = _contains_uniform((s,), set())
            if hit is not None:
                _fail(hit, why)
            continue
        if isinstance(s, If):
            if _tainted(s.cond, bad):
                for block in (s.body, s.orelse):
                    hit = _contains_uniform(block, set())
                    if hit is not None:
                        _fail(hit, s)
                if _exits(s.body) or _exits(s.orelse):
                    why = s
                continue
            _check_block(s.body, bad, None)
            _check_block(s.orelse, bad, None)
        elif isinstance(s, While):
            if _tainted(s.cond, bad):
                hit = _contains_uniform(s.body, set())
                if hit is not None:
                    _fail(hit, s)
            else:
                _check_block(s.body, bad, None)
        elif isinstance(s, For):
            if any(_tainted(x, bad) for x in (s.start, s.stop, s.step)):
                hit = _contains_uniform(s.body, set())
                if hit is not None:
                    _fail(hit, s)
            else:
                _check_block(s.body, bad, None)


def _fail(call: CallBuiltin | CallFunc, why: Stmt) -> None:
    name = (
        f"clpy.{call.builtin.name}"
        if isinstance(call, CallBuiltin)
        else f"{call.func.name}() (which calls a barrier or collective)"
    )
    raise KernelTypeError(
        f"{name} must be reached by all work-items of the group in uniform control flow "
        f"(spec §1.13.8, §1.13.15), but here it depends on a condition on line "
        f"{why.loc.line} that varies with the work-item id",
        call.loc,
    )
