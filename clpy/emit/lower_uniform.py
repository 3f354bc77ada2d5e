"""Uniform control flow check for barriers and collectives (spec §1.13.8, §1.13.15).

Barriers and work-group/sub-group functions must be reached by every work-item of the group.
The spec asks that every work-item of a group *take the same path at run time*, which the
host often guarantees for a condition that mentions the work-item id (a CSR-vector SpMV's
``if row < n`` with ``n`` a multiple of the work-group count). So clpy finds every call under an
``if``/``while``/loop whose condition or bounds depend on the work-item id —
``get_local_id``, ``get_global_id``, their linear forms, ``get_sub_group_local_id``, scan
results, atomic results — directly or through variables (and memory loads) assigned from such
values, or after an ``if`` on such a condition that may ``return``/``break``/``continue``, and:

- rejects what is provably divergent: a test of the local id against a constant
  (``if lid == 0``, ``if lid != 3``), true for one work-item of a group of several;
- warns once per line about the rest (``clpy.UniformityWarning``: silence it or make it an
  error with the ``warnings`` filters) and emits the code; the simulator checks at run time
  that every work-item of the group reaches the call (``barrier`` divergence report).

Conditions built only from kernel arguments, group ids, sizes, constants and reduction results
are uniform.
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

from clpy.errors import KernelTypeError, UniformityWarning
from clpy.ir.nodes import (
    Assign,
    Break,
    CallBuiltin,
    CallFunc,
    Cast,
    Compare,
    Const,
    Continue,
    Declare,
    Expr,
    Field,
    For,
    Function,
    If,
    NamedConst,
    Return,
    Stmt,
    Swizzle,
    Var,
    VarRef,
    While,
)
from clpy.ir.walk import children, walk
from clpy.types.core import ScalarType, VectorType
from clpy.types.structs import StructType

DIVERGENT_SOURCES = frozenset(
    {
        "get_local_id",
        "get_global_id",
        "get_local_linear_id",
        "get_global_linear_id",
        "get_sub_group_local_id",
    }
)


_LOCAL_IDS = frozenset({"get_local_id", "get_local_linear_id", "get_sub_group_local_id"})


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


def _tainted_vars(fn: Function, seeds: tuple[Var, ...] = (), stop: bool = True) -> set[Var]:
    """Variables whose value may differ between work-items (fixpoint over assignments),
    ``seeds`` among them. ``stop=False``: a ``for`` loop's variable by its start and step
    only (the values it takes, not how many)."""
    bad: set[Var] = set(seeds)
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
                bounds = (n.start, n.stop, n.step) if stop else (n.start, n.step)
                if n.var not in bad and any(_tainted(x, bad) for x in bounds):
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
    """Whether ``stmts`` can leave the enclosing block early: a ``return`` anywhere, or a
    ``break``/``continue`` that is not inside a loop of its own (one in a nested loop only
    ends that loop: warning about every collective after it was a false alarm found by
    clpy.fuzz)."""
    for s in stmts:
        if isinstance(s, (Return, Break, Continue)):
            return True
        if isinstance(s, If):
            if _exits(s.body) or _exits(s.orelse):
                return True
        elif any(isinstance(n, Return) for n in walk((s,))):
            return True
    return False


def loop_barrier_vars(fn: Function) -> frozenset[Var]:
    """Private scalar and vector variables assigned in a loop whose trip count may differ
    between work-items, only ever from values that do not (constants, counters, uniform
    data: the same in every work-item trip by trip), in a function that also reaches a
    barrier or collective outside such a loop (a device function's parameters count as
    varying).

    PoCL 3.0 gives every work-item the value of one that ran such a loop when the variable is
    read after the barrier (fuzz seeds 10865, 1000183, 64; a loop of 0..7 trips or of 1..8
    alike): its analysis takes the variable for work-group uniform, as each value assigned
    is, though the number of trips is not. A ``volatile`` variable is right in every variant
    found. Where the target's quirks say so (``Target.info["volatile_loop_vars"]``,
    clpy/runtime/quirks.py) the emitter declares these ``volatile`` (clpy/emit/c_stmts.py); a
    variable that takes a work-item's own data inside the loop (``acc += x[gid]``) is left
    alone. One that holds its work-item's data from before the loop and is assigned only
    uniform values in it (``v = x[gid]``, then ``v = 0`` in the loop) is not: PoCL gave every
    work-item that ran no trip the loop's value too (seed 510030)."""
    if _contains_uniform(fn.body, set()) is None:
        return frozenset()
    seeds = () if fn.is_kernel else fn.params
    bad = _tainted_vars(fn, seeds)
    data = _tainted_vars(fn, seeds, stop=False)
    out: set[Var] = set()
    fed: set[Var] = set()  # assigned a work-item's own data inside a divergent loop
    outside = False  # a barrier/collective outside every divergent loop

    def visit(stmts: tuple[Stmt, ...]) -> None:
        nonlocal outside
        for st in stmts:
            divergent = (
                (isinstance(st, While) and _tainted(st.cond, bad))
                or (
                    isinstance(st, For)
                    and any(_tainted(x, bad) for x in (st.start, st.stop, st.step))
                )
                or (isinstance(st, (While, For)) and _exits_unevenly(st.body, bad))
            )
            if divergent:
                for n in walk((st,)):
                    root = _assigned_var(n.target) if isinstance(n, Assign) else None
                    if isinstance(n, Assign) and root is not None:
                        out.add(root)
                        if _tainted(n.value, data) or (n.op and root in data):
                            fed.add(root)
                    elif isinstance(n, For):
                        out.add(n.var)
                        if n.var in data:
                            fed.add(n.var)
                continue
            if isinstance(st, (If, While, For)):
                visit(st.body)
                if isinstance(st, If):
                    visit(st.orelse)
            elif _contains_uniform((st,), set()) is not None:
                outside = True

    visit(fn.body)
    if not outside:
        return frozenset()
    kinds = (ScalarType, VectorType, StructType)
    keep = (v for v in out if v not in fed and isinstance(v.type, kinds))
    return frozenset(keep)


def _assigned_var(target: Expr) -> Var | None:
    """The private variable an assignment writes: ``v``, a struct field ``s.f`` (seed
    331786: PoCL lost ``s3.f0 = 1 ^ s3.f0`` of a divergent loop after a barrier, the
    ``volatile`` struct is right) or a vector lane ``v.x``; None for memory (``p[i]``)."""
    while isinstance(target, (Field, Swizzle)):
        target = target.base
    return target.var if isinstance(target, VarRef) else None


def _exits_unevenly(body: tuple[Stmt, ...], bad: Any) -> bool:
    """A ``break``, ``continue`` or ``return`` under a condition that varies with the
    work-item, anywhere in a loop's body: its trips (or the assignments run in them) then
    differ between work-items though the loop's own bounds do not (fuzz seed 600277,
    ``while w < 1: w += 1; if lin % 2 == 1: break; v = 0``). Conservative: a ``break`` of a
    nested loop counts too (it only costs a ``volatile`` on PoCL)."""
    for n in walk(body):
        if isinstance(n, If) and _tainted(n.cond, bad):
            if any(isinstance(m, (Break, Continue, Return)) for m in walk(n.body + n.orelse)):
                return True
    return False


class Problem(NamedTuple):
    """A barrier or collective under a condition that varies with the work-item."""

    call: CallBuiltin | CallFunc
    why: Stmt  # the if/while/for whose condition or bounds vary
    provable: bool  # divergent in every work-group of more than one work-item


def uniform_problems(fn: Function) -> list[Problem]:
    """Every barrier/collective reached under work-item-dependent control flow."""
    if _contains_uniform(fn.body, set()) is None:
        return []  # nothing that every work-item must reach: no taint analysis needed
    bad = _tainted_vars(fn)
    out: list[Problem] = []
    _check_block(fn.body, bad, None, _local_id_vars(fn), out)
    return out


def check_uniform(fn: Function, module_globals: dict[str, Any] | None = None) -> None:
    """Raise ``KernelTypeError`` for a barrier/collective under provably divergent control
    (a test of the local id against a constant: ``if lid == 0``); with ``module_globals`` (the
    kernel's module), warn once per line about the others (``clpy.UniformityWarning``): the
    host may well make such a condition uniform at run time (``if row < n`` with ``n`` a
    multiple of the work-group size), which the simulator checks when it runs."""
    problems = uniform_problems(fn)
    for p in problems:
        if p.provable:
            _fail(p.call, p.why)
    if module_globals is None:
        return
    for p in problems:
        warnings.warn_explicit(
            f"{_name(p.call)} is reached under a condition on line {p.why.loc.line} that "
            f"varies with the work-item id: every work-item of a work-group must take the same "
            f"path there at run time (spec §1.13.8, §1.13.15), or the device may hang; the "
            f"simulator checks it. Silence with warnings.filterwarnings('ignore', "
            f"category=clpy.UniformityWarning)",
            UniformityWarning,
            p.call.loc.file,
            p.call.loc.line,
            module=str(module_globals.get("__name__", "clpy")),
            registry=module_globals.setdefault("__warningregistry__", {}),
        )


def _local_id_vars(fn: Function) -> set[Var]:
    """Variables assigned once, from a local id query (``lid = clpy.get_local_id(0)``)."""
    assigned: dict[Var, int] = {}
    direct: set[Var] = set()
    for n in walk(fn.body):
        if isinstance(n, Assign) and isinstance(n.target, VarRef):
            assigned[n.target.var] = assigned.get(n.target.var, 0) + 1
        elif isinstance(n, For):
            assigned[n.var] = assigned.get(n.var, 0) + 1
        elif isinstance(n, Declare) and n.init is not None and _is_local_id(n.init):
            direct.add(n.var)
    return {v for v in direct if not assigned.get(v)}


def _is_local_id(e: Expr) -> bool:
    while isinstance(e, Cast):
        e = e.value
    return isinstance(e, CallBuiltin) and e.builtin.name in _LOCAL_IDS


def _provable(cond: Expr, lid_vars: set[Var]) -> bool:
    """``lid == c`` / ``lid != c`` (c constant): true for one work-item of a group only."""
    if not (isinstance(cond, Compare) and cond.op in ("==", "!=")):
        return False
    for a, b in ((cond.left, cond.right), (cond.right, cond.left)):
        if isinstance(b, (Const, NamedConst)) and (
            _is_local_id(a) or (isinstance(a, VarRef) and a.var in lid_vars)
        ):
            return True
    return False


def _check_block(
    stmts: tuple[Stmt, ...],
    bad: set[Var],
    why: Stmt | None,
    lids: set[Var],
    out: list[Problem],
) -> None:
    for s in stmts:
        if why is not None:
            hit = _contains_uniform((s,), set())
            if hit is not None:
                out.append(Problem(hit, why, False))
                return
            continue
        if isinstance(s, If):
            if _tainted(s.cond, bad):
                for block in (s.body, s.orelse):
                    hit = _contains_uniform(block, set())
                    if hit is not None:
                        out.append(Problem(hit, s, _provable(s.cond, lids)))
                if _exits(s.body) or _exits(s.orelse):
                    why = s
                continue
            _check_block(s.body, bad, None, lids, out)
            _check_block(s.orelse, bad, None, lids, out)
        elif isinstance(s, While):
            if _tainted(s.cond, bad):
                hit = _contains_uniform(s.body, set())
                if hit is not None:
                    out.append(Problem(hit, s, False))
            else:
                _check_block(s.body, bad, None, lids, out)
        elif isinstance(s, For):
            if any(_tainted(x, bad) for x in (s.start, s.stop, s.step)):
                hit = _contains_uniform(s.body, set())
                if hit is not None:
                    out.append(Problem(hit, s, False))
            else:
                _check_block(s.body, bad, None, lids, out)


def _name(call: CallBuiltin | CallFunc) -> str:
    return (
        f"clpy.{call.builtin.name}"
        if isinstance(call, CallBuiltin)
        else f"{call.func.name}() (which calls a barrier or collective)"
    )


def _fail(call: CallBuiltin | CallFunc, why: Stmt) -> None:
    raise KernelTypeError(
        f"{_name(call)} must be reached by all work-items of the group in uniform control flow "
        f"(spec §1.13.8, §1.13.15), but here it depends on a condition on line "
        f"{why.loc.line} that holds for only one work-item of each work-group (of more than "
        f"one work-item)",
        call.loc,
    )
