"""Group-uniform variables of a kernel for the native engine: scalars whose every assignment
gives the same value in every work-item of a work-group (computed from constants, scalar
parameters, work-group queries and other uniform variables, under control flow whose
conditions are themselves uniform). The code generator keeps each in one C scalar per group,
computes its statements once per group between the work-item loops, and runs control flow
on uniform conditions once per group without activity masks (sim/native/cgen.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from clpy.ir.nodes import (
    Assign,
    Binary,
    Break,
    CallBuiltin,
    Cast,
    Compare,
    Const,
    Continue,
    Declare,
    Expr,
    For,
    Function,
    If,
    Logical,
    NamedConst,
    Return,
    Select,
    Stmt,
    Unary,
    Var,
    VarRef,
    While,
)
from clpy.ir.walk import walk
from clpy.types.core import ScalarType

# work-item queries with one value per work-group
GROUP_QUERIES = frozenset(
    {
        "get_group_id",
        "get_local_size",
        "get_enqueued_local_size",
        "get_num_groups",
        "get_global_size",
        "get_global_offset",
        "get_work_dim",
    }
)


class Uniformity:
    """``vars``: the uniform variables of kernel ``fn`` (its own body; device functions'
    variables are never uniform)."""

    def __init__(self, fn: Function, barrier: Callable[[Stmt], bool]) -> None:
        self.barrier = barrier  # whether a statement contains a barrier
        self.params = frozenset(
            p for p in fn.params if isinstance(p.type, ScalarType) and p not in _assigned(fn.body)
        )
        cands = {v for v in _targets(fn.body) if isinstance(v.type, ScalarType)}
        cands -= set(fn.params)
        self.vars: set[Var] = set(cands)
        while True:
            bad: set[Var] = set()
            self._scan(fn.body, True, bad)
            if not bad & self.vars:
                break
            self.vars -= bad

    def expr(self, e: Expr) -> bool:
        """Whether ``e`` has one value per work-group (and no effects)."""
        if isinstance(e, (Const, NamedConst)):
            return isinstance(e.type, ScalarType)
        if isinstance(e, VarRef):
            return e.var in self.vars or e.var in self.params
        if isinstance(e, (Binary, Compare, Logical)):
            return isinstance(e.type, ScalarType) and self.expr(e.left) and self.expr(e.right)
        if isinstance(e, Unary):
            return isinstance(e.type, ScalarType) and self.expr(e.operand)
        if isinstance(e, Cast):
            return isinstance(e.type, ScalarType) and self.expr(e.value)
        if isinstance(e, Select):
            return (
                isinstance(e.type, ScalarType)
                and self.expr(e.cond)
                and self.expr(e.if_true)
                and self.expr(e.if_false)
            )
        if isinstance(e, CallBuiltin):
            return (
                e.builtin.index
                and e.builtin.name in GROUP_QUERIES
                and all(isinstance(a, Const) for a in e.args)
            ) or e.builtin.name == "get_work_dim"
        return False

    def for_bounds(self, s: For) -> bool:
        return self.expr(s.start) and self.expr(s.stop) and self.expr(s.step)

    def stmt(self, s: Stmt, jumps: bool = False) -> bool:
        """Whether ``s`` (barrier-free) can run once per group: it assigns only uniform
        variables uniform values, under uniform conditions, with no jumps (``jumps``: a break
        or continue of the innermost loop, which runs once per group, is one too)."""
        if isinstance(s, (Break, Continue)):
            return jumps
        if isinstance(s, Declare):
            return s.var in self.vars and (s.init is None or self.expr(s.init))
        if isinstance(s, Assign):
            return isinstance(s.target, VarRef) and s.target.var in self.vars and self.expr(s.value)
        if isinstance(s, If):
            return self.expr(s.cond) and all(self.stmt(x, jumps) for x in (*s.body, *s.orelse))
        if isinstance(s, While):
            return self.expr(s.cond) and all(self.stmt(x) for x in s.body)
        if isinstance(s, For):
            return s.var in self.vars and self.for_bounds(s) and all(self.stmt(x) for x in s.body)
        return False

    def loop(self, s: For | While) -> bool:
        """A loop whose trips are the same in every work-item: uniform condition (a For: a
        uniform variable and bounds) and no break or continue of its own."""
        if isinstance(s, For):
            ok = s.var in self.vars and self.for_bounds(s)
        else:
            ok = self.expr(s.cond)
        return ok and not self._jumps(s.body)

    def _jumps(self, stmts: Sequence[Stmt]) -> bool:
        """A return, or a break or continue of this loop (not of a nested one) that not every
        work-item of the group takes together: not under uniform conditions only."""
        for s in stmts:
            if isinstance(s, (Break, Continue, Return)):
                return True
            if isinstance(s, If):
                if self.expr(s.cond) and not self.barrier(s):
                    if all(self.stmt(x, True) for x in (*s.body, *s.orelse)):
                        continue  # (run once per group: its jumps are the group's)
                if self._jumps(s.body) or self._jumps(s.orelse):
                    return True
            if isinstance(s, (For, While)) and _returns(s.body):
                return True
        return False

    def _scan(self, stmts: Sequence[Stmt], ctx: bool, bad: set[Var]) -> None:
        for s in stmts:
            if isinstance(s, (If, While, For)) and not self.barrier(s) and not self.stmt(s):
                # runs per work-item in a region: what it assigns is not one scalar per group
                bad |= _targets([s])
                continue
            if isinstance(s, Declare):
                if not ctx or (s.init is not None and not self.expr(s.init)):
                    bad.add(s.var)
            elif isinstance(s, Assign):
                if isinstance(s.target, VarRef) and (not ctx or not self.expr(s.value)):
                    bad.add(s.target.var)
            elif isinstance(s, If):
                c = ctx and self.expr(s.cond)
                self._scan(s.body, c, bad)
                self._scan(s.orelse, c, bad)
            elif isinstance(s, While):
                self._scan(s.body, ctx and self.loop(s), bad)
            elif isinstance(s, For):
                c = ctx and self.loop(s)
                if not c:
                    bad.add(s.var)
                self._scan(s.body, c, bad)


def _returns(stmts: Sequence[Stmt]) -> bool:
    for s in stmts:
        if isinstance(s, Return):
            return True
        if isinstance(s, If) and (_returns(s.body) or _returns(s.orelse)):
            return True
        if isinstance(s, (For, While)) and _returns(s.body):
            return True
    return False


def _targets(stmts: Sequence[Stmt]) -> set[Var]:
    out: set[Var] = set()
    for s in stmts:
        if isinstance(s, Declare):
            out.add(s.var)
        elif isinstance(s, Assign) and isinstance(s.target, VarRef):
            out.add(s.target.var)
        elif isinstance(s, For):
            out.add(s.var)
            out |= _targets(s.body)
        elif isinstance(s, While):
            out |= _targets(s.body)
        elif isinstance(s, If):
            out |= _targets(s.body) | _targets(s.orelse)
    return out


def _assigned(stmts: Sequence[Stmt]) -> set[Var]:
    out: set[Var] = set()
    for s in stmts:
        if isinstance(s, Assign) and isinstance(s.target, VarRef):
            out.add(s.target.var)
        elif isinstance(s, For):
            out.add(s.var)
            out |= _assigned(s.body)
        elif isinstance(s, While):
            out |= _assigned(s.body)
        elif isinstance(s, If):
            out |= _assigned(s.body) | _assigned(s.orelse)
    return out


def rematerializable(fn: Function, uni: Uniformity) -> dict[Var, Expr]:
    """Variables a region can recompute instead of keeping one value per work-item: declared
    once at the kernel's top level, never assigned again, from constants, parameters,
    work-item queries, uniform variables assigned once at top level and other such variables
    (``tx = get_local_id(0)``, ``index = cols * (by + ty) + tx``). In declaration order."""
    assigned = _assigned(fn.body)
    once = {
        s.var
        for s in fn.body
        if isinstance(s, Declare) and s.var not in assigned and s.init is not None
    }
    out: dict[Var, Expr] = {}

    def pure(e: Expr) -> bool:
        if isinstance(e, (Const, NamedConst)):
            return isinstance(e.type, ScalarType)
        if isinstance(e, VarRef):
            v = e.var
            return v in out or v in uni.params or (v in uni.vars and v in once)
        if isinstance(e, (Binary, Compare, Logical)):
            return isinstance(e.type, ScalarType) and pure(e.left) and pure(e.right)
        if isinstance(e, Unary):
            return isinstance(e.type, ScalarType) and pure(e.operand)
        if isinstance(e, Cast):
            return isinstance(e.type, ScalarType) and pure(e.value)
        if isinstance(e, Select):
            return (
                isinstance(e.type, ScalarType)
                and pure(e.cond)
                and pure(e.if_true)
                and pure(e.if_false)
            )
        if isinstance(e, CallBuiltin):
            return e.builtin.index and all(isinstance(a, Const) for a in e.args)
        return False

    for s in fn.body:
        if (
            isinstance(s, Declare)
            and s.var in once
            and s.var not in uni.vars
            and isinstance(s.var.type, ScalarType)
            and s.init is not None
            and pure(s.init)
        ):
            out[s.var] = s.init
    return out


def refs(e: Expr) -> set[Var]:
    """The variables ``e`` reads."""
    return {x.var for x in walk([e]) if isinstance(x, VarRef)}


def live_in(v: Var, stmts: Sequence[Stmt]) -> bool:
    """Whether running ``stmts`` may read ``v`` before assigning it (so a value from before
    them, e.g. an earlier trip of an enclosing loop, could be read): if not, ``v`` can be a
    local of the region that runs them."""

    def reads(e: Expr | None) -> bool:
        return e is not None and v in refs(e)

    def block(ss: Sequence[Stmt], d: bool) -> tuple[bool, bool]:
        """(read while undefined, defined after)."""
        for s in ss:
            if isinstance(s, Declare):
                if reads(s.init) and not d:
                    return True, d
                d = d or s.var is v
            elif isinstance(s, Assign):
                own = isinstance(s.target, VarRef) and s.target.var is v
                if not d and (reads(s.value) or (reads(s.target) and not (own and s.op is None))):
                    return True, d
                d = d or own
            elif isinstance(s, If):
                if reads(s.cond) and not d:
                    return True, d
                e1, d1 = block(s.body, d)
                e2, d2 = block(s.orelse, d)
                if e1 or e2:
                    return True, d
                d = d or (d1 and d2)
            elif isinstance(s, For):
                if not d and (reads(s.start) or reads(s.stop) or reads(s.step)):
                    return True, d
                inner = d or s.var is v
                e, _ = block(s.body, inner)
                if e:
                    return True, d
                d = inner
            elif isinstance(s, While):
                if reads(s.cond) and not d:
                    return True, d
                e, _ = block(s.body, d)
                if e:
                    return True, d
            else:
                for x in vars(s).values():
                    if isinstance(x, Expr) and reads(x) and not d:
                        return True, d
                    if isinstance(x, tuple) and not d:
                        if any(isinstance(y, Expr) and reads(y) for y in x):
                            return True, d
        return False, d

    return block(stmts, False)[0]
