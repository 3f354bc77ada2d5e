"""The work-item statements of the native engine's generated C (sim/native/cgen.py): what one
work-item runs inside a region's loop, or a device function's body; group-level statements
are sim/native/cgen_group.py's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clpy.ir.nodes import (
    Assert,
    Assign,
    Binary,
    Break,
    CallBuiltin,
    CallFunc,
    Const,
    Continue,
    Declare,
    Expr,
    ExprStmt,
    For,
    If,
    Loc,
    Print,
    Return,
    Stmt,
    Swizzle,
    Var,
    VarRef,
    While,
)
from clpy.ir.walk import walk
from clpy.types.core import AddressSpace, ArrayType, PointerType, ScalarType, Type
from clpy_sim.native.cgen_expr import _common
from clpy_sim.native.cgen_group import BARRIERS, GroupGen, _assigned_vars, _Target, _walk
from clpy_sim.native.cgen_region import Affine, split_of
from clpy_sim.native.ctypes_c import Unsupported, c_type


class StmtGen(GroupGen):
    """Work-item statements; the kernel generator (``cgen.KernelGen``) has the state."""

    depth: int
    remat: dict[Var, Expr]
    affine: Affine
    aff_defs: dict[Var, Expr]
    aff_known: set[Var]
    const_loops: dict[Var, tuple[int, int]]
    counter_alias: dict[Var, tuple[int, int]]

    def note(self, v: Var, declare_top: bool = False) -> None:  # pragma: no cover - KernelGen's
        raise NotImplementedError

    def ptr_type(self, elem: Type, loc: Loc | None) -> str:  # pragma: no cover - KernelGen's
        raise NotImplementedError

    def wi_block(self, stmts: Sequence[Stmt]) -> None:
        for s in stmts:
            self.wi_stmt(s)

    def wi_stmt(self, s: Stmt) -> None:
        m = getattr(self, f"s_{type(s).__name__}", None)
        if m is None:
            raise Unsupported(f"statement {type(s).__name__}", s.loc)
        self.w.loc(s.loc)
        m(s)

    def s_Declare(self, s: Declare) -> None:
        v = s.var
        self.note(v, declare_top=True)
        if self.plan is not None and self.depth == 0 and v in self.aff_defs:
            self.aff_known.add(v)  # (after its value: a site before the Declare cannot read it)
        if v in self.remat and self.in_func is None:
            return  # (computed at the start of each region that reads it)
        t = v.type
        if isinstance(t, ArrayType):
            if t.space is AddressSpace.LOCAL:
                if self.in_func is not None:
                    raise Unsupported("local memory declared in a device function", s.loc)
                self.var_array(v, s.loc)  # (storage: per group, zeroed at its start)
                return
            a = self.var_array(v, s.loc)
            el = self.storage_type(t.elem, s.loc)
            self.w(f"memset({a.base}, 0, sizeof({el}) * {t.count});")
            return
        if s.init is None:
            self.assign_value(v, "{0}" if not isinstance(t, ScalarType) else "0", s.loc, raw=True)
            return
        self.assign_expr(v, s.init, s.loc)

    def assign_value(self, v: Var, value: str, loc: Loc, raw: bool = False) -> None:
        t = v.type
        place = self.var(v, loc)
        if raw and not isinstance(t, ScalarType):
            ct = self.storage_type(t, loc)
            self.w(f"{place} = ({ct}){value};")
            return
        self.w(f"{place} = {value};")

    def assign_expr(self, v: Var, e: Expr, loc: Loc) -> None:
        t = v.type
        if isinstance(t, PointerType):
            p = self.ptr(e)
            ct = self.ptr_type(t.elem, loc)
            self.w(f"{self.var(v, loc)} = ({ct}){{{p.base}, {p.count}, {p.off}}};")
            return
        if isinstance(t, ArrayType):
            raise Unsupported("an array assigned as a whole", loc)
        val = self.expr(e)
        if e.type != t:
            val = self.convert(val, e.type, t, e)
        self.w(f"{self.var(v, loc)} = {val};")

    def s_Assign(self, s: Assign) -> None:
        tgt = s.target
        if isinstance(tgt, VarRef) and s.op is None:
            self.assign_expr(tgt.var, s.value, s.loc)
            return
        t = tgt.type
        if isinstance(t, (PointerType, ArrayType)):
            raise Unsupported("assignment of a pointer element or array", s.loc)
        ct = c_type(t, s.loc)
        if isinstance(tgt, Swizzle) and len(tgt.lanes) > 1:
            if s.op is not None:
                raise Unsupported("compound assignment to a swizzle", s.loc)
            val = self.expr(s.value)
            if s.value.type != t:
                val = self.convert(val, s.value.type, t, s.value)
            place = self.lvalue(tgt.base)
            sets = " ".join(f"{place}[{k}] = clpy_sv[{i}];" for i, k in enumerate(tgt.lanes))
            self.w(f"{{ {ct} clpy_sv = {val}; {sets} }}")
            return
        if s.op is None:
            val = self.expr(s.value)
            if s.value.type != t:
                val = self.convert(val, s.value.type, t, s.value)
            place = self.lvalue(tgt)
            if _has_calls(s.value):
                # (the NumPy engine evaluates the target's index before the value)
                self.w(f"{{ {ct} *clpy_t = &{place}; *clpy_t = {val}; }}")
            else:
                self.w(f"{place} = {val};")
            return
        place = self.lvalue(tgt)
        res = self.compound(s.op, t, "*clpy_t", s.value, s.loc)
        self.w(f"{{ {ct} *clpy_t = &{place};")
        self.w(f"  *clpy_t = {res}; }}")

    def s_ExprStmt(self, s: ExprStmt) -> None:
        e = s.expr
        if isinstance(e, CallBuiltin):
            if e.builtin.name in BARRIERS:
                raise Unsupported("a barrier inside a device function or region", s.loc)
            stmt = self.builtin_stmt(e)
            if stmt is not None:
                self.w(stmt)
                return
        self.w(f"(void)({self.expr(e)});")

    def s_Assert(self, s: Assert) -> None:
        return None  # the assert check is off (the native engine runs with every check off)

    def s_Print(self, s: Print) -> None:
        raise Unsupported("print", s.loc)

    def s_If(self, s: If) -> None:
        w = self.w
        plan = self.plan
        sp = None
        if plan is not None and plan.split is None and self.depth == 0 and self.in_func is None:
            sp = split_of(self.affine, s.cond)
        if plan is None or sp is None:
            w(f"if ({self.cond(s.cond)}) {{")
            self.nested(s.body)
            if s.orelse:
                w("} else {")
                self.nested(s.orelse)
            w("}")
            return
        # (the region's loop is split at the ranges of wi where the condition holds)
        plan.split = sp
        w(f"if (CLPY_SPLIT({self.cond(s.cond)})) {{")
        plan.domain = "in" if sp.inside == "then" else "out"
        self.nested(s.body)
        if s.orelse:
            w("} else {")
            plan.domain = "out" if sp.inside == "then" else "in"
            self.nested(s.orelse)
        plan.domain = "all"
        w("}")

    def nested(self, body: Sequence[Stmt]) -> None:
        self.w.ind += 1
        self.depth += 1
        self.wi_block(body)
        self.depth -= 1
        self.w.ind -= 1

    def s_While(self, s: While) -> None:
        tk = self.fresh("tk")
        self.w(f"uint32_t {tk} = 0;")
        self.w(f"while ({self.cond(s.cond)}) {{")
        self.w(f"    CLPY_POLL({tk});")
        self.targets.append(_Target("c"))
        self.nested(s.body)
        self.targets.pop()
        self.w("}")

    def s_For(self, s: For) -> None:
        v = s.var
        t = v.type
        if not isinstance(t, ScalarType) or not t.is_int:
            raise Unsupported("a for loop over a non-integer", s.loc)
        ct = c_type(t, s.loc)
        w = self.w
        stop, step = self.fresh("stop"), self.fresh("step")
        w("{")
        w.ind += 1
        self.depth += 1
        self.assign_expr(v, s.start, s.loc)
        w(f"const {c_type(s.stop.type, s.loc)} {stop} = {self.expr(s.stop)};")
        w(f"const {c_type(s.step.type, s.loc)} {step} = {self.expr(s.step)};")
        x = self.var(v, s.loc)
        test = self.for_test(s, x, stop, step)
        inc = self.binop("+", t, x, step, s, s.step.type)
        span = _span(s, {**self.const_loops, **self.counter_alias})
        u = None
        if span is None:
            # (a loop of a bounded number of trips needs no poll: it stays a candidate for
            # unrolling and vectorizing, which the poll's call rules out)
            tk = self.fresh("tk")
            w(f"uint32_t {tk} = 0;")
        w(f"for (; {test}; {x} = ({ct})({inc})) {{")
        if span is None:
            w(f"    CLPY_POLL({tk});")
        else:
            self.const_loops[v] = span
            u = _alias(s)
            if u is not None:
                self.counter_alias[u] = span
        self.targets.append(_Target("c"))
        self.nested(s.body)
        self.targets.pop()
        self.const_loops.pop(v, None)
        if u is not None:
            self.counter_alias.pop(u, None)
        w("}")
        self.depth -= 1
        w.ind -= 1
        w("}")

    def for_test(self, s: For, x: str, stop: str, step: str) -> str:
        vt, st = s.var.type, s.stop.type
        if vt != st:
            x, stop = _common(x, stop, vt, st, s.stop)
        up = s.step.value > 0 if isinstance(s.step, Const) else (True if s.ascending else None)
        if up is True:
            return f"{x} < {stop}"
        if up is False:
            return f"{x} > {stop}"
        return f"({step} > 0 ? {x} < {stop} : {x} > {stop})"

    def s_Break(self, s: Break) -> None:
        self.jump(s, "break")

    def s_Continue(self, s: Continue) -> None:
        self.jump(s, "continue")

    def s_Return(self, s: Return) -> None:
        if self.in_func is not None:
            if s.value is None:
                self.w("return;")
            else:
                ct = c_type(self.in_func.ret, s.loc)
                val = self.expr(s.value)
                if s.value.type != self.in_func.ret:
                    val = self.convert(val, s.value.type, self.in_func.ret, s.value)
                self.w(f"return ({ct})({val});")
            return
        tgt = next(t for t in reversed(self.targets) if t.kind == "func")
        if s.value is not None:
            if tgt.result is not None:
                self.assign_expr(tgt.result, s.value, s.loc)
            else:
                self.w(f"(void)({self.expr(s.value)});")
        self.group_jump(tgt.level)

    def jump(self, s: Stmt, kind: str) -> None:
        tgt = next((t for t in reversed(self.targets) if t.kind != "func"), None)
        if tgt is None:
            raise Unsupported(f"{kind} outside a loop", s.loc)
        if tgt.kind == "c":
            self.w(f"{kind};")
            return
        if tgt.kind == "uniform":
            if self.region != -1:
                raise Unsupported(f"{kind} out of a loop run once per group", s.loc)
            self.w(f"{kind};")  # (at group level, in the loop's own C loop)
            return
        self.group_jump(tgt.level if kind == "break" else tgt.cont_level)

    def group_jump(self, level: int) -> None:
        """Leave the rest of this region for this work-item, clearing masks from ``level``."""
        if self.in_func is not None:
            raise Unsupported("a jump out of a device function's group-level construct")
        clear = "".join(f"{m}[wi] = " for m in self.masks[level:])
        if clear:
            self.w(f"{clear}0;")
        self.w(f"goto clpy_nx{self.region};")


def _span(s: For, outer: dict[Var, tuple[int, int]]) -> tuple[int, int] | None:
    """The values of the counter of ``s`` when its trips are at most 2^16 whatever the run
    (constant bounds and step, or bounds from the counters of such loops around it, like
    ``range(i)``; the counter never assigned in the body); None otherwise."""

    def bounds(e: Expr) -> tuple[int, int] | None:
        if isinstance(e, Const) and type(e.value) is int:
            return e.value, e.value
        if isinstance(e, VarRef):
            return outer.get(e.var)
        if isinstance(e, Binary) and e.op in ("+", "-"):
            x, y = bounds(e.left), bounds(e.right)
            if x is None or y is None:
                return None
            return (x[0] + y[0], x[1] + y[1]) if e.op == "+" else (x[0] - y[1], x[1] - y[0])
        return None

    if not (isinstance(s.step, Const) and type(s.step.value) is int and s.step.value):
        return None
    lo, hi, step = bounds(s.start), bounds(s.stop), s.step.value
    if lo is None or hi is None or s.var in _assigned_vars(s.body):
        return None
    if max(abs(v) for v in (*lo, *hi)) > 1 << 30:
        return None
    if step > 0 and (hi[1] - lo[0]) // step <= 1 << 16:
        return lo[0], max(lo[0], hi[1] - 1)
    if step < 0 and (lo[1] - hi[0]) // -step <= 1 << 16:
        return min(lo[1], hi[0] + 1), lo[1]
    return None


def _alias(s: For) -> Var | None:
    """The user's variable a ``for`` body's first statement sets to the counter and the body
    never sets again (the frontend's ``i = i_``): the counter's value in the whole body."""
    if not s.body:
        return None
    first = s.body[0]
    if not (
        isinstance(first, Assign)
        and first.op is None
        and isinstance(first.target, VarRef)
        and isinstance(first.value, VarRef)
        and first.value.var is s.var
    ):
        return None
    u = first.target.var
    rest = s.body[1:]
    if u in _assigned_vars(rest) or any(isinstance(x, Declare) and x.var is u for x in _walk(rest)):
        return None
    return u


def _has_calls(e: Any) -> bool:
    return isinstance(e, Expr) and any(isinstance(x, (CallFunc, CallBuiltin)) for x in walk([e]))
