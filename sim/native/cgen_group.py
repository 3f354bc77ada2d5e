"""The group level of the native engine's generated C (sim/native/cgen.py): barrier regions as
loops over a work-group's work-items, control flow around barriers under activity masks (or
once per group where its conditions are uniform), device functions with barriers inlined."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from clpy.ir.nodes import (
    Assign,
    CallBuiltin,
    CallFunc,
    Cast,
    Declare,
    Expr,
    ExprStmt,
    For,
    Function,
    If,
    Loc,
    Stmt,
    Var,
    VarRef,
    While,
)
from clpy.types.core import AddressSpace, ArrayType, PointerType, ScalarType, Type
from clpy_sim.native import cgen_coll
from clpy_sim.native.cgen_builtins import BuiltinGen
from clpy_sim.native.cgen_coll import is_collective
from clpy_sim.native.cgen_expr import Ptr
from clpy_sim.native.cgen_region import Plan, assemble, plain
from clpy_sim.native.compiler import slow_gathers
from clpy_sim.native.ctypes_c import Unsupported, c_type
from clpy_sim.native.uniform import Uniformity, refs

_C_WORDS = frozenset(
    """auto break case char const continue default do double else enum extern float for goto
    if inline int long register restrict return short signed sizeof static struct switch
    typedef union unsigned void volatile while wi N A S main bool true false int8_t int16_t
    int32_t int64_t uint8_t uint16_t uint32_t uint64_t memset memcpy fabs fmod floor floorf
    fmodf trunc sqrt exp log sin cos tan pow NAN INFINITY""".split()
)
BARRIERS = frozenset({"barrier", "work_group_barrier"})
MAX_STACK = 1 << 20  # bytes of per-group arrays a group may keep (on the thread's stack)


@dataclass
class _Target:
    """A jump target: a C loop inside a region (``kind`` "c"), a loop or function run at group
    level (its masks from index ``level`` on are cleared by a jump out of it)."""

    kind: str
    level: int = 0
    cont_level: int = 0
    result: Var | None = None


@dataclass
class _Info:
    regions: set[int] = field(default_factory=set)
    first_is_top_declare: bool | None = None
    in_group_loop: bool = False


class Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.ind = 0
        self.last_loc: tuple[str, int] | None = None

    def __call__(self, s: str) -> None:
        self.lines.append("    " * self.ind + s)

    def loc(self, loc: Loc) -> None:
        if loc.line > 0 and (loc.file, loc.line) != self.last_loc:
            self.last_loc = (loc.file, loc.line)
            f = loc.file.replace("\\", "\\\\").replace('"', '\\"')
            self.lines.append(f'#line {loc.line} "{f}"')


_WI_LOOP = re.compile(r"\bfor \(int64_t (wi|clpy_lx) = ")
_LABEL = re.compile(r"^(\s*clpy_nx\d+(?:_\d+)?:) ;$")


def _no_gathers(lines: list[str]) -> list[str]:
    """A work-item loop whose body keeps an index clamp (``clpy_ix``) ends in an empty
    volatile asm, so the C compiler does not vectorize it: its clamped loads would be
    gathers, slower than the scalar loop on the AMD hosts (pathfinder 1.7x, hotspot 1.25x CPU),
    faster on Intel's Xeon (compiler.slow_gathers decides). Loops proved free of clamps stay
    vectorizable."""
    out = list(lines)
    start = 0
    for k, line in enumerate(out):
        if _WI_LOOP.search(line):
            start = k
            continue
        m = _LABEL.match(line)
        if m and any("clpy_ix(" in x for x in out[start:k]):
            out[k] = f'{m.group(1)} __asm__ volatile("");'
    return out


def contains_barrier(stmts: Sequence[Stmt], memo: dict[int, bool]) -> bool:
    return any(_stmt_barrier(s, memo) for s in stmts)


def _stmt_barrier(s: Stmt, memo: dict[int, bool]) -> bool:
    k = id(s)
    if k in memo:
        return memo[k]
    r = False
    if isinstance(s, If):
        r = contains_barrier(s.body, memo) or contains_barrier(s.orelse, memo)
    elif isinstance(s, (For, While)):
        r = contains_barrier(s.body, memo)
    elif isinstance(s, (ExprStmt, Declare, Assign)):
        e = s.expr if isinstance(s, ExprStmt) else s.init if isinstance(s, Declare) else s.value
        if isinstance(e, CallBuiltin) and e.builtin.name in BARRIERS:
            r = True
        elif is_collective(e) and not isinstance(s, ExprStmt):
            r = True  # (a region boundary: sim/native/cgen_coll.py)
        elif isinstance(e, CallFunc):
            r = func_barrier(e.func, memo)
    memo[k] = r
    return r


def func_barrier(f: Function, memo: dict[int, bool]) -> bool:
    k = id(f)
    if k not in memo:
        memo[k] = False  # (no recursion in OpenCL)
        memo[k] = contains_barrier(f.body, memo)
    return memo[k]


def _walk(stmts: Sequence[Stmt]) -> list[Stmt]:
    out: list[Stmt] = []
    for s in stmts:
        out.append(s)
        if isinstance(s, If):
            out.extend(_walk(s.body))
            out.extend(_walk(s.orelse))
        elif isinstance(s, (For, While)):
            out.extend(_walk(s.body))
    return out


def _assigned_vars(stmts: Sequence[Stmt]) -> set[Var]:
    out: set[Var] = set()
    for s in _walk(stmts):
        if isinstance(s, Assign) and isinstance(s.target, VarRef):
            out.add(s.target.var)
        elif isinstance(s, For):
            out.add(s.var)
    return out


class GroupGen(BuiltinGen):
    """Group-level statements; the kernel generator (``cgen.KernelGen``) has the state."""

    w: Writer
    masks: list[str]
    targets: list[_Target]
    memo: dict[int, bool]
    region: int
    nregions: int
    group_loops: int
    info_in: dict[Var, _Info] | None
    region_locals: dict[int, list[Var]]
    remat: dict[Var, Expr]
    root_full: bool
    uni: Uniformity | None
    aliases: dict[Var, Ptr]
    params: dict[Var, tuple[str, Any]]
    atomic_sites: list[tuple[str, bool]]
    region_stmts: dict[int, Sequence[Stmt]]
    in_func: Function | None
    hoist = True  # region loops with their index clamps proved away (sim/native/cgen_region.py)
    split_only = False  # only regions split at a condition on the local id get the fast copy
    # work-item loops that keep an index clamp are not vectorized, where gathers are slow
    no_gathers = slow_gathers()
    plan: Plan | None = None
    region_head = 0
    versioned = False

    def cname(self, v: Var) -> str:  # pragma: no cover - KernelGen's
        raise NotImplementedError

    def fresh(self, stem: str) -> str:  # pragma: no cover - KernelGen's
        raise NotImplementedError

    def storage_type(self, t: Type, loc: Loc) -> str:  # pragma: no cover - KernelGen's
        raise NotImplementedError

    def group_array(self, ctype: str, name: str, n: int, size: int) -> None:  # pragma: no cover
        raise NotImplementedError

    def wi_stmt(self, s: Stmt) -> None:  # pragma: no cover - KernelGen's
        raise NotImplementedError

    def wi_block(self, stmts: Sequence[Stmt]) -> None:  # pragma: no cover - KernelGen's
        raise NotImplementedError

    def assign_expr(self, v: Var, e: Expr, loc: Loc) -> None:  # pragma: no cover
        raise NotImplementedError

    def for_test(self, s: For, x: str, stop: str, step: str) -> str:  # pragma: no cover
        raise NotImplementedError

    # ------------------------------------------------------------------ group level

    def group_block(self, stmts: Sequence[Stmt]) -> None:
        run: list[Stmt] = []
        uni = self.uni
        inner = next((t for t in reversed(self.targets) if t.kind != "func"), None)
        jumps = inner is not None and inner.kind == "uniform"
        for s in stmts:
            if uni is not None and not _stmt_barrier(s, self.memo) and uni.stmt(s, jumps):
                if run:
                    self.emit_region(run)
                    run = []
                self.w("/* once per group */")
                self.wi_stmt(s)  # (uniform variables are scalars: no work-item index)
            elif _stmt_barrier(s, self.memo):
                if run:
                    self.emit_region(run)
                    run = []
                self.group_stmt(s)
            else:
                run.append(s)
        if run:
            self.emit_region(run)

    def open_region(self) -> None:
        self.region = self.nregions
        self.nregions += 1
        w = self.w
        self.region_head = len(w.lines)
        if self.hoist and self.info_in is not None and self.in_func is None:
            g = self.geom
            self.plan = Plan(two=g.dims == 2 and g.local[2] == 1 and g.local[1] > 1)
        w("for (int64_t wi = 0; wi < WG; wi++) {")
        w.ind += 1
        if self.masks and not (len(self.masks) == 1 and self.root_full):
            w(f"if (!{self.masks[-1]}[wi]) continue;")
        if self.info_in is not None and self.remat:
            need: set[Var] = set()
            todo = [v for v in self.remat if self.region in self.info_in.get(v, _Info()).regions]
            while todo:
                v = todo.pop()
                if v not in need:
                    need.add(v)
                    todo.extend(x for x in refs(self.remat[v]) if x in self.remat)
            for v in self.remat:  # (declaration order: what one reads comes before it)
                if v in need:
                    init = self.remat[v]
                    val = self.expr(init)
                    if init.type != v.type:
                        val = self.convert(val, init.type, v.type, init)
                    w(f"const {c_type(v.type, v.loc)} {self.cname(v)} = {val};")
        if self.info_in is not None:
            for v in self.region_locals.get(self.region, []):
                t = v.type
                name = self.cname(v)
                if isinstance(t, ArrayType):
                    if t.space is AddressSpace.PRIVATE:
                        w(f"{self.storage_type(t.elem, v.loc)} {name}[{t.count}];")
                else:
                    w(f"{self.storage_type(t, v.loc)} {name} = {{0}};")

    def close_region(self) -> None:
        w = self.w
        w(f"clpy_nx{self.region}: ;")
        w.ind -= 1
        w("}")
        plan, self.plan = self.plan, None
        if plan is not None:
            pad = "    " * w.ind
            body = [
                x if x.startswith("#") else x[len(pad) :]
                for x in w.lines[self.region_head + 1 : -1]
            ]
            out = assemble(plan, body, self.region) if plan.split or not self.split_only else None
            if out is not None:
                self.versioned = True
                w.lines[self.region_head :] = [x if x.startswith("#") else pad + x for x in out]
            else:
                w.lines[self.region_head :] = [plain(x) for x in w.lines[self.region_head :]]
        if self.no_gathers:
            w.lines[self.region_head :] = _no_gathers(w.lines[self.region_head :])
        self.region = -1

    def emit_region(self, stmts: Sequence[Stmt]) -> None:
        self.open_region()
        self.region_stmts[self.region] = stmts
        self.wi_block(stmts)
        self.close_region()

    def new_mask(self) -> str:
        m = self.fresh("m")
        self.group_array("unsigned char", m, self.geom.wg, 1)
        return m

    def group_stmt(self, s: Stmt) -> None:
        w = self.w
        w.loc(s.loc)
        if isinstance(s, If):
            self.group_if(s)
        elif isinstance(s, For):
            self.group_for(s)
        elif isinstance(s, While):
            self.group_while(s)
        elif isinstance(s, ExprStmt) and isinstance(s.expr, CallBuiltin):
            w("/* barrier */")  # regions end here: every work-item ran the one before
        elif isinstance(s, (ExprStmt, Declare, Assign)):
            e = s.expr if isinstance(s, ExprStmt) else s.init if isinstance(s, Declare) else s.value
            if isinstance(e, CallBuiltin) and is_collective(e):
                if isinstance(s, Declare):
                    cgen_coll.emit(self, e, s.var, s.loc)
                    return
                if isinstance(s, Assign) and isinstance(s.target, VarRef) and s.op is None:
                    cgen_coll.emit(self, e, s.target.var, s.loc)
                    return
                raise Unsupported(f"{e.builtin.name} stored other than in a variable", s.loc)
            assert isinstance(e, CallFunc)
            if isinstance(s, Assign) and not (isinstance(s.target, VarRef) and s.op is None):
                raise Unsupported("the result of a function with a barrier stored in memory", s.loc)
            res: Var | None = None
            if isinstance(s, Declare):
                res = s.var
            elif isinstance(s, Assign):
                assert isinstance(s.target, VarRef)
                res = s.target.var
            self.inline(e, res, s.loc)
        else:
            raise Unsupported(f"a barrier inside {type(s).__name__}", s.loc)

    def cur_mask(self) -> str:
        return self.masks[-1]

    def group_if(self, s: If) -> None:
        w = self.w
        if self.uni is not None and self.uni.expr(s.cond):
            w(f"if ({self.cond(s.cond)}) {{")
            w.ind += 1
            self.group_block(s.body)
            w.ind -= 1
            if s.orelse:
                w("} else {")
                w.ind += 1
                self.group_block(s.orelse)
                w.ind -= 1
            w("}")
            return
        mt, mf = self.new_mask(), self.new_mask()
        par = self.cur_mask()
        self.open_region()
        w(f"unsigned char c = {self.cond(s.cond)};")
        w(f"{mt}[wi] = c; {mf}[wi] = !c;")
        self.close_region()
        # (inactive work-items: the region skipped them, so clear their entries)
        w(f"for (int64_t wi = 0; wi < WG; wi++) if (!{par}[wi]) {mt}[wi] = {mf}[wi] = 0;")
        for body, m in ((s.body, mt), (s.orelse, mf)):
            if not body:
                continue
            w(f"if (clpy_any({m}, WG)) {{")
            w.ind += 1
            self.masks.append(m)
            self.group_block(body)
            self.masks.pop()
            w.ind -= 1
            w("}")

    def group_loop(self, s: Stmt, cond: Any, body: Sequence[Stmt], incr: Any) -> None:
        w = self.w
        par = self.cur_mask()
        ml, mt = self.new_mask(), self.new_mask()
        w(f"memcpy({ml}, {par}, WG);")
        level = len(self.masks)
        w("for (;;) {")
        w.ind += 1
        w("CLPY_BACKEDGE();")
        self.masks.append(ml)
        self.group_loops += 1
        self.open_region()
        w(f"if (!({cond()})) {ml}[wi] = 0;")
        self.close_region()
        w(f"if (!clpy_any({ml}, WG)) break;")
        w(f"memcpy({mt}, {ml}, WG);")
        self.masks.append(mt)
        self.targets.append(_Target("loop", level, level + 1))
        self.group_block(body)
        self.targets.pop()
        self.masks.pop()
        if incr is not None:
            self.open_region()
            incr()
            self.close_region()
        self.group_loops -= 1
        self.masks.pop()
        w.ind -= 1
        w("}")

    def group_while(self, s: While) -> None:
        if self.uni is not None and self.uni.loop(s):
            self.w(f"while ({self.cond(s.cond)}) {{")
            self.uniform_body(s.body)
            return
        self.group_loop(s, lambda: self.cond(s.cond), s.body, None)

    def group_for(self, s: For) -> None:
        v = s.var
        t = v.type
        if not isinstance(t, ScalarType) or not t.is_int:
            raise Unsupported("a for loop over a non-integer", s.loc)
        if self.uni is not None and self.uni.loop(s):
            w = self.w
            stop, step = self.fresh("stop"), self.fresh("step")
            w("{")
            w.ind += 1
            self.assign_expr(v, s.start, s.loc)
            w(f"const {c_type(s.stop.type, s.loc)} {stop} = {self.expr(s.stop)};")
            w(f"const {c_type(s.step.type, s.loc)} {step} = {self.expr(s.step)};")
            x = self.var(v, s.loc)
            inc = self.binop("+", t, x, step, s, s.step.type)
            w(f"for (; {self.for_test(s, x, stop, step)}; {x} = ({c_type(t, s.loc)})({inc})) {{")
            self.uniform_body(s.body)
            w.ind -= 1
            w("}")
            return
        stop, step = self.fresh("stop"), self.fresh("step")
        st, pt = c_type(s.stop.type, s.loc), c_type(s.step.type, s.loc)
        self.group_array(st, stop, self.geom.wg, 8)
        self.group_array(pt, step, self.geom.wg, 8)
        self.open_region()
        self.assign_expr(v, s.start, s.loc)
        self.w(f"{stop}[wi] = {self.expr(s.stop)};")
        self.w(f"{step}[wi] = {self.expr(s.step)};")
        self.close_region()

        def cond() -> str:
            return self.for_test(s, self.var(v, s.loc), f"{stop}[wi]", f"{step}[wi]")

        def incr() -> None:
            x = self.var(v, s.loc)
            inc = self.binop("+", t, x, f"{step}[wi]", s, s.step.type)
            self.w(f"{x} = ({c_type(t, s.loc)})({inc});")

        self.group_loop(s, cond, s.body, incr)

    def uniform_body(self, body: Sequence[Stmt]) -> None:
        """The body of a loop run once per group (its trips the same in every work-item)."""
        w = self.w
        w.ind += 1
        w("CLPY_BACKEDGE();")
        self.group_loops += 1  # (a region inside runs once per trip)
        self.targets.append(_Target("uniform"))
        self.group_block(body)
        self.targets.pop()
        self.group_loops -= 1
        w.ind -= 1
        w("}")

    def inline(self, e: CallFunc, res: Var | None, loc: Loc) -> None:
        """A device function with a barrier, inlined at its call statement."""
        f = e.func
        w = self.w
        assigned = _assigned_vars(f.body)
        decls: list[Stmt] = []
        for p, a in zip(f.params, e.args):
            if isinstance(p.type, PointerType) and p not in assigned:
                alias = self.static_ptr(a)
                if alias is not None:
                    self.aliases[p] = alias
                    continue
            if isinstance(p.type, ArrayType):
                raise Unsupported("an array passed to a device function", a.loc)
            decls.append(Declare(a.loc, p, a))
        if decls:
            self.emit_region(decls)
        mf = self.new_mask()
        w(f"memcpy({mf}, {self.cur_mask()}, WG);")
        self.masks.append(mf)
        self.targets.append(_Target("func", len(self.masks) - 1, result=res))
        w(f"/* inlined {f.name} */")
        self.group_block(f.body)
        self.targets.pop()
        self.masks.pop()

    def check_atomics(self) -> None:
        """An atomic whose result is used must be the only one on its memory (cgen_builtins
        ``atomic_value``), and memories must be told apart by name."""
        used = [b for b, u in self.atomic_sites if u]
        if not used:
            return
        bases = [b for b, _ in self.atomic_sites]
        if len(used) > 1 or bases.count(used[0]) > 1 or any("." in b for b in bases):
            raise Unsupported("an atomic whose result is used, with other atomics on its memory")

    def static_ptr(self, a: Expr) -> Ptr | None:
        """The pointer ``a`` when it is the same for every work-item of every call (a kernel
        buffer, a local array, an alias of one)."""
        if isinstance(a, VarRef):
            if a.var in self.aliases:
                return self.aliases[a.var]
            p = self.params.get(a.var)
            if p is not None and p[0] == "buffer":
                return p[1]
            return None
        if isinstance(a, Cast) and isinstance(a.value, VarRef):
            t = a.value.type
            if isinstance(t, ArrayType) and t.space is AddressSpace.LOCAL:
                r = self.var_array(a.value.var, a.loc)
                return Ptr(r.base, str(r.count), "0")
            if isinstance(t, PointerType):
                return self.static_ptr(a.value)
        return None
