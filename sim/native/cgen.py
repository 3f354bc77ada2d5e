"""A kernel's typed IR → one C source (the native engine; docs/simulator.md "Native engine").

The body is split at barriers into barrier-free regions; each region is a loop over the
work-items of one work-group (``for (wi = 0; wi < WG; wi++)``), PoCL's "work-item loops".
Control flow that contains a barrier runs once per group under an activity mask per work-item
(an array ``unsigned char m[WG]``): its condition is evaluated per work-item in a region, the
branch or loop body then runs for the work-items whose mask is set, as the NumPy engine runs
it on the lanes that take it. ``break``/``continue``/``return`` out of such a construct clear
masks. A private variable referenced in more than one region is an array with one element per
work-item (``v[wi]``); one used in a single region is a plain C local of that region.

Device functions without barriers become static C functions; a device function containing a
barrier is inlined at its call statement. The generated source keeps the user's names and has
``#line`` directives to the Python file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from clpy.ir.nodes import (
    Assert,
    Assign,
    Break,
    CallBuiltin,
    CallFunc,
    Cast,
    Const,
    Continue,
    Declare,
    Expr,
    ExprStmt,
    For,
    Function,
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
from clpy.types.core import AddressSpace, ArrayType, PointerType, ScalarType, Type, VectorType
from clpy_sim.native import cgen_coll
from clpy_sim.native.cgen_builtins import BuiltinGen
from clpy_sim.native.cgen_coll import is_collective
from clpy_sim.native.cgen_expr import ArrayRef, Ptr
from clpy_sim.native.ctypes_c import Geometry, Unsupported, c_type, ptr_struct
from clpy_sim.native.uniform import Uniformity, refs, rematerializable

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


class KernelGen(BuiltinGen):
    """Generates the C source of kernel ``fn`` for ``geom``; ``Unsupported`` when it cannot."""

    def __init__(self, fn: Function, geom: Geometry, info: dict[Var, _Info] | None) -> None:
        self.fn = fn
        self.geom = geom
        self.memo: dict[int, bool] = {}
        self.info_in = info  # pass 2: the references pass 1 recorded
        self.info: dict[Var, _Info] = {}
        self.names: dict[Var, str] = {}
        self.used_names: set[str] = set()
        self.w = Writer()
        self.region = -1
        self.nregions = 0
        self.depth = 0  # nesting of statements inside the current region
        self.group_loops = 0
        self.masks: list[str] = []
        self.targets: list[_Target] = []
        self.group_decls: list[str] = []  # per-group arrays (declared once in clpy_run)
        self.local_mems: list[str] = []  # the local memories (zeroed at each group's start)
        self.region_vars: dict[int, list[Var]] = {}
        self.aliases: dict[Var, Ptr] = {}
        self.tmp = 0
        self.in_func: Function | None = None  # a static device function being generated
        self.funcs: dict[int, str] = {}  # id(Function) -> C name
        self.func_src: list[str] = []
        self.ptr_types: dict[str, str] = {}
        self.params: dict[Var, tuple[str, Any]] = {}
        self.stack_bytes = 0
        self.uses_atomics = False
        self.uni_vars: set[Var] = set()  # group-uniform scalars (sim/native/uniform.py)
        self.uni: Uniformity | None = None
        self.remat: dict[Var, Expr] = {}  # recomputed at each region's start (uniform.py)
        self.root_full = False  # the root mask is never cleared: regions need not test it
        self.atomic_sites: list[tuple[str, bool]] = []

    # ------------------------------------------------------------------ names and storage

    def cname(self, v: Var) -> str:
        n = self.names.get(v)
        if n is None:
            base = v.name if v.name.isidentifier() else "v"
            if base in _C_WORDS or base.startswith("clpy_") or base.startswith("_"):
                base = "u_" + base
            n, k = base, 1
            while n in self.used_names:
                k += 1
                n = f"{base}_{k}"
            self.used_names.add(n)
            self.names[v] = n
        return n

    def fresh(self, stem: str) -> str:
        self.tmp += 1
        return f"clpy_{stem}{self.tmp}"

    def note(self, v: Var, declare_top: bool = False) -> None:
        """Record a reference of ``v`` in the current region (pass 1)."""
        if self.in_func is not None or v in self.uni_vars:
            return
        inf = self.info.setdefault(v, _Info())
        if inf.first_is_top_declare is None:
            inf.first_is_top_declare = declare_top and self.depth == 0
        inf.regions.add(self.region)
        if self.group_loops:
            inf.in_group_loop = True

    def is_group(self, v: Var) -> bool:
        """Whether ``v`` is an array with one element per work-item."""
        if self.info_in is None:
            return True
        inf = self.info_in.get(v)
        if inf is None:
            return True
        if len(inf.regions) != 1:
            return True
        return bool(inf.in_group_loop and not inf.first_is_top_declare)

    def ptr_type(self, elem: Type, loc: Loc | None) -> str:
        name = ptr_struct(elem, loc)
        if name not in self.ptr_types:
            ct = c_type(elem, loc)
            self.ptr_types[name] = f"typedef struct {{ {ct} *b; int64_t n; int64_t o; }} {name};"
        return name

    def storage_type(self, t: Type, loc: Loc) -> str:
        if isinstance(t, PointerType):
            return self.ptr_type(t.elem, loc)
        return c_type(t, loc)

    def group_array(self, ctype: str, name: str, n: int, size: int) -> None:
        self.group_decls.append(f"{ctype} {name}[{n}];")
        self.stack_bytes += size * n
        if self.stack_bytes > MAX_STACK:
            raise Unsupported(
                f"per-group storage above {MAX_STACK} bytes (work-group of {self.geom.wg})"
            )

    def declare_var(self, v: Var, loc: Loc) -> None:
        """Storage of a group variable (pass 2), once."""
        if self.info_in is None or v in self.declared:
            return
        self.declared.add(v)
        t = v.type
        name = self.cname(v)
        wg = self.geom.wg
        if isinstance(t, ArrayType):
            n = t.count
            ct = self.storage_type(t.elem, loc)
            size = max(_size(t.elem), 1)
            if t.space is AddressSpace.LOCAL:
                self.group_array(ct, name, n, size)
                self.local_mems.append(name)
            elif self.is_group(v):
                self.group_array(ct, name, n * wg, size)
            return
        if self.is_group(v):
            self.group_array(self.storage_type(t, loc), name, wg, max(_size(t), 1))

    declared: set[Var]

    # ------------------------------------------------------------------ ExprGen hooks

    def var(self, v: Var, loc: Any) -> str:
        p = self.params.get(v)
        if p is not None and p[0] == "value":
            return p[1]
        self.note(v)
        if self.in_func is not None:
            return self.cname(v)
        if v in self.remat:
            return self.cname(v)
        if v in self.uni_vars:
            name = self.cname(v)
            if v not in self.declared:
                self.declared.add(v)
                self.group_decls.append(f"{c_type(v.type, loc)} {name} = 0;")
            return name
        self.declare_var(v, loc)
        name = self.cname(v)
        return f"{name}[wi]" if self.is_group(v) else name

    def var_ptr(self, v: Var, loc: Any) -> Ptr:
        a = self.aliases.get(v)
        if a is not None:
            return a
        p = self.params.get(v)
        if p is not None and p[0] == "buffer":
            return p[1]
        s = self.var(v, loc)
        return Ptr(f"{s}.b", f"{s}.n", f"{s}.o")

    def var_array(self, v: Var, loc: Any) -> ArrayRef:
        self.note(v)
        t = v.type
        assert isinstance(t, ArrayType)
        if self.in_func is not None:
            return ArrayRef(self.cname(v), t.shape, "0", t.count)
        self.declare_var(v, loc)
        name = self.cname(v)
        if t.space is AddressSpace.PRIVATE and self.is_group(v):
            return ArrayRef(f"({name} + wi * {t.count})", t.shape, "0", t.count)
        return ArrayRef(name, t.shape, "0", t.count)

    def x__ParamValue(self, e: Any) -> str:
        return str(e.c)

    def ptr(self, e: Expr) -> Ptr:
        if isinstance(e, _ParamPtr):
            return e.p
        return super().ptr(e)

    def call_func(self, e: CallFunc) -> str:
        if func_barrier(e.func, self.memo):
            raise Unsupported(
                f"a call of `{e.func.name}` (it contains a barrier) inside an expression", e.loc
            )
        name = self.static_func(e.func)
        args = ["wi", "clpy_g", "N"]
        for p, a in zip(e.func.params, e.args):
            if isinstance(p.type, PointerType):
                q = self.ptr(a)
                args.append(
                    f"({self.ptr_type(p.type.elem, a.loc)}){{{q.base}, {q.count}, {q.off}}}"
                )
            elif isinstance(p.type, ArrayType):
                raise Unsupported("an array passed to a device function", a.loc)
            else:
                args.append(f"({c_type(p.type, a.loc)})({self.expr(a)})")
        return f"{name}({', '.join(args)})"

    # ------------------------------------------------------------------ static functions

    def static_func(self, f: Function) -> str:
        name = self.funcs.get(id(f))
        if name is not None:
            return name
        name = f"clpy_f_{f.name}_{len(self.funcs)}"
        self.funcs[id(f)] = name
        saved = (self.w, self.in_func, self.targets, self.masks, self.depth, self.names)
        self.w, self.in_func, self.targets, self.masks, self.depth = Writer(), f, [], [], 0
        self.names = dict(self.names)
        try:
            ret = "void" if f.ret.cl_name == "void" else c_type(f.ret, f.loc)
            ps = ["int64_t wi", "const int64_t *clpy_g", "const int64_t *N"]
            for p in f.params:
                if isinstance(p.type, PointerType):
                    ps.append(f"{self.ptr_type(p.type.elem, p.loc)} {self.cname(p)}")
                elif isinstance(p.type, ArrayType):
                    raise Unsupported("an array parameter of a device function", p.loc)
                else:
                    ps.append(f"{c_type(p.type, p.loc)} {self.cname(p)}")
            w = self.w
            w(f"static {ret} {name}({', '.join(ps)}) {{")
            w.ind += 1
            for v in _locals(f.body):
                if v in f.params:
                    continue
                t = v.type
                if isinstance(t, ArrayType):
                    if t.space is not AddressSpace.PRIVATE:
                        raise Unsupported("local memory declared in a device function", v.loc)
                    w(f"{self.storage_type(t.elem, v.loc)} {self.cname(v)}[{t.count}];")
                else:
                    w(f"{self.storage_type(t, v.loc)} {self.cname(v)} = {{0}};")
            self.wi_block(f.body)
            if ret != "void":
                w(f"return ({ret}){{0}};")
            w.ind -= 1
            w("}")
            self.func_src.append("\n".join(w.lines))
        finally:
            self.w, self.in_func, self.targets, self.masks, self.depth, self.names = saved
            # (names of the function's variables stay reserved: no clash with the kernel's)
        return name

    # ------------------------------------------------------------------ work-item statements

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
        vt = s.value.type
        wt = t
        if (
            isinstance(t, ScalarType)
            and isinstance(vt, ScalarType)
            and t.is_int
            and vt.is_int
            and (vt.bits > t.bits or (vt.bits == t.bits and not vt.is_signed))
        ):
            wt = vt  # (the promoted type of the operation; the shift count masked to t)
        val = self.expr(s.value)
        self.w(f"{{ {ct} *clpy_t = &{place};")
        if s.op in ("<<", ">>") and wt is not t:
            assert isinstance(t, ScalarType)
            val = f"((int64_t)({val}) & {t.bits - 1})"
            op = self.binop(s.op, t, "*clpy_t", val, s.value, vt)
        else:
            op = self.binop(s.op, wt, f"({c_type(wt, s.loc)})*clpy_t", val, s.value, vt)
        self.w(f"  *clpy_t = ({ct})({op}); }}")

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
        w(f"if ({self.cond(s.cond)}) {{")
        self.nested(s.body)
        if s.orelse:
            w("} else {")
            self.nested(s.orelse)
        w("}")

    def nested(self, body: Sequence[Stmt]) -> None:
        self.w.ind += 1
        self.depth += 1
        self.wi_block(body)
        self.depth -= 1
        self.w.ind -= 1

    def s_While(self, s: While) -> None:
        self.w(f"while ({self.cond(s.cond)}) {{")
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
        w(f"for (; {test}; {x} = ({ct})({inc})) {{")
        self.targets.append(_Target("c"))
        self.nested(s.body)
        self.targets.pop()
        w("}")
        self.depth -= 1
        w.ind -= 1
        w("}")

    def for_test(self, s: For, x: str, stop: str, step: str) -> str:
        vt, st = s.var.type, s.stop.type
        if vt != st:
            from clpy_sim.native.cgen_expr import _common

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
        self.region = -1

    def emit_region(self, stmts: Sequence[Stmt]) -> None:
        self.open_region()
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

    # ------------------------------------------------------------------ the kernel

    def kernel(self) -> str:
        fn, g = self.fn, self.geom
        self.declared = set()
        if contains_barrier(fn.body, self.memo):
            self.uni = Uniformity(fn, lambda s: _stmt_barrier(s, self.memo))
            self.uni_vars = self.uni.vars
            self.remat = rematerializable(fn, self.uni)
        self.region_locals: dict[int, list[Var]] = {}
        if self.info_in is not None:
            for v, inf in self.info_in.items():
                if v in self.uni_vars or v in self.remat:
                    continue
                if not self.is_group(v) and not (
                    isinstance(v.type, ArrayType) and v.type.space is AddressSpace.LOCAL
                ):
                    (r,) = inf.regions
                    self.region_locals.setdefault(r, []).append(v)
        counts = dict(g.local_counts)
        head: list[str] = []
        prologue: list[str] = []
        assigned = _assigned_vars(fn.body)
        entry: list[Stmt] = []
        for k, p in enumerate(fn.params):
            t = p.type
            name = self.cname(p)
            if isinstance(t, PointerType) and p.name in counts:
                ct = self.storage_type(t.elem, p.loc)
                n = counts[p.name]
                self.group_array(ct, f"clpy_l_{name}", n, max(_size(t.elem), 1))
                self.local_mems.append(f"clpy_l_{name}")
                ptr = Ptr(f"clpy_l_{name}", str(n), "0")
            elif isinstance(t, PointerType):
                ct = self.storage_type(t.elem, p.loc)
                prologue.append(f"{ct} *const clpy_b_{name} = ({ct} *)A[{k}];")
                prologue.append(f"const int64_t clpy_n_{name} = N[{9 + k}];")
                ptr = Ptr(f"clpy_b_{name}", f"clpy_n_{name}", "0")
            elif isinstance(t, (ScalarType, VectorType)):
                ct = c_type(t, p.loc)
                prologue.append(f"const {ct} clpy_a_{name} = *(const {ct} *)A[{k}];")
                if p in assigned:
                    entry.append(Declare(p.loc, p, _ParamValue(t, p.loc, f"clpy_a_{name}")))
                else:
                    self.params[p] = ("value", f"clpy_a_{name}")
                continue
            else:
                raise Unsupported(f"a parameter of type {t}", p.loc)
            if p in assigned:
                self.aliases.pop(p, None)
                entry.append(Declare(p.loc, p, _ParamPtr(t, p.loc, ptr)))
            else:
                self.params[p] = ("buffer", ptr)
        barriers = contains_barrier(fn.body, self.memo)
        w = self.w
        w.ind = 2
        if barriers:
            m0 = self.new_mask()
            w(f"memset({m0}, 1, WG);")
            self.masks.append(m0)
            # no return in the kernel's own statements: the root mask stays all ones
            self.root_full = not any(isinstance(x, Return) for x in _walk(fn.body))
        self.targets.append(_Target("func", 0))
        body = (*entry, *fn.body)
        if barriers:
            self.group_block(body)
        else:
            self.emit_region(body)
        self.targets.pop()
        self.check_atomics()
        body_lines = w.lines
        L0, L1, L2 = g.local
        head.append('#include "prelude.h"')
        head.append('#include "engine.h"')
        head.append(f"/* clpy native engine: kernel {fn.name} ({fn.loc}) */")
        head.append(f"#define WG {g.wg}")
        head.append(f"#define L0 {L0}\n#define L1 {L1}\n#define L2 {L2}\n#define DIMS {g.dims}")
        head.extend(self.ptr_types.values())
        head.append(
            "static inline int clpy_any(const unsigned char *m, int64_t n) {\n"
            "    for (int64_t i = 0; i < n; i++) if (m[i]) return 1;\n    return 0;\n}"
        )
        head.extend(self.func_src)
        out = list(head)
        out.append("int clpy_run(void **A, const int64_t *N, int64_t g0, int64_t g1) {")
        out.extend("    " + x for x in prologue)
        out.extend("    " + x for x in self.group_decls)
        out.append("    for (int64_t clpy_grp = g0; clpy_grp < g1; clpy_grp++) {")
        out.append(
            "        const int64_t clpy_g[3] = {clpy_grp % N[3], (clpy_grp / N[3]) % N[4],"
            " clpy_grp / (N[3] * N[4])};"
        )
        out.extend(f"        memset({m}, 0, sizeof {m});" for m in self.local_mems)
        out.extend(body_lines)
        out.append("    }")
        out.append("    return 0;")
        out.append("}")
        return "\n".join(out) + "\n"


class _ParamValue(Expr):
    """A kernel parameter's value (the entry ``Declare`` of a parameter the body assigns)."""

    c: str

    def __init__(self, t: Type, loc: Loc, c: str) -> None:
        object.__setattr__(self, "type", t)
        object.__setattr__(self, "loc", loc)
        object.__setattr__(self, "c", c)


class _ParamPtr(Expr):
    """A kernel buffer parameter's pointer (the entry ``Declare`` of one the body assigns)."""

    p: Ptr

    def __init__(self, t: Type, loc: Loc, p: Ptr) -> None:
        object.__setattr__(self, "type", t)
        object.__setattr__(self, "loc", loc)
        object.__setattr__(self, "p", p)


def _size(t: Type) -> int:
    try:
        return int(t.size)
    except Exception:
        return 16


def _assigned_vars(stmts: Sequence[Stmt]) -> set[Var]:
    out: set[Var] = set()
    for s in _walk(stmts):
        if isinstance(s, Assign) and isinstance(s.target, VarRef):
            out.add(s.target.var)
        elif isinstance(s, For):
            out.add(s.var)
    return out


def _locals(stmts: Sequence[Stmt]) -> list[Var]:
    out: dict[Var, None] = {}
    for s in _walk(stmts):
        if isinstance(s, Declare):
            out[s.var] = None
        elif isinstance(s, For):
            out[s.var] = None
        elif isinstance(s, Assign) and isinstance(s.target, VarRef):
            out[s.target.var] = None
    return list(out)


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


def _has_calls(e: Any) -> bool:
    if isinstance(e, (CallFunc, CallBuiltin)):
        return True
    if isinstance(e, Expr):
        for v in vars(e).values():
            if isinstance(v, Expr) and _has_calls(v):
                return True
            if isinstance(v, tuple) and any(isinstance(x, Expr) and _has_calls(x) for x in v):
                return True
    return False


def generate(fn: Function, geom: Geometry) -> tuple[str, bool]:
    """The C source of kernel ``fn`` for ``geom`` and whether its groups must run in order on
    one thread; raises ``Unsupported`` naming the first construct the native engine does not
    run."""
    first = KernelGen(fn, geom, None)
    first.kernel()
    second = KernelGen(fn, geom, first.info)
    src = second.kernel()
    return src, second.ordered
