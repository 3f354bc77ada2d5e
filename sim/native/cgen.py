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
``#line`` directives to the Python file. Work-item statements: cgen_stmt.py; group level:
cgen_group.py; region loops without index clamps, split at a condition on the local id:
cgen_region.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clpy.ir.nodes import (
    Assign,
    CallFunc,
    Declare,
    Expr,
    For,
    Function,
    Loc,
    Return,
    Stmt,
    Var,
    VarRef,
)
from clpy.types.core import AddressSpace, ArrayType, PointerType, ScalarType, Type, VectorType
from clpy_sim.native.cgen_expr import ArrayRef, Ptr
from clpy_sim.native.cgen_group import (  # noqa: F401 - re-exported (checks.py)
    _C_WORDS,
    BARRIERS,
    MAX_STACK,
    GroupGen,
    Writer,
    _assigned_vars,
    _Info,
    _stmt_barrier,
    _Target,
    _walk,
    contains_barrier,
    func_barrier,
)
from clpy_sim.native.cgen_region import HEAD, Affine
from clpy_sim.native.cgen_splice import splice
from clpy_sim.native.cgen_stmt import StmtGen
from clpy_sim.native.ctypes_c import Geometry, Unsupported, c_type, ptr_struct
from clpy_sim.native.uniform import Uniformity, live_in, rematerializable


class KernelGen(StmtGen):
    """Generates the C source of kernel ``fn`` for ``geom``; ``Unsupported`` when it cannot."""

    def __init__(self, fn: Function, geom: Geometry, info: dict[Var, _Info] | None) -> None:
        self.geom = geom
        self.memo: dict[int, bool] = {}
        # device functions with barriers called once at top level: the kernel's own statements
        self.fn, self.splice_ptrs = splice(fn, self.memo)
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
        self.region_stmts: dict[int, Sequence[Stmt]] = {}  # each region's statements
        self.region_stmts_in: dict[int, Sequence[Stmt]] = {}  # pass 1's (for pass 2)
        self.atomic_sites: list[tuple[str, bool]] = []
        self.affine = Affine(self)
        self.aff_defs: dict[Var, Expr] = {}  # variables the affine analysis may expand
        self.aff_known: set[Var] = set()  # those of them defined where code is generated
        self.const_loops: dict[Var, tuple[int, int]] = {}  # counters of loops of few trips
        self.counter_alias: dict[Var, tuple[int, int]] = {}  # variables equal to one (i = i_)

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
        if not inf.in_group_loop or inf.first_is_top_declare:
            return False
        # in a loop run per group: local when its region never reads it before assigning it
        (r,) = inf.regions
        stmts = self.region_stmts_in.get(r)
        return stmts is None or live_in(v, stmts)

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

    def checked_ix(self, i: str, n: str, e: Expr) -> str:
        plan = self.plan
        if plan is not None and self.in_func is None and (n.isdigit() or n.startswith("clpy_n_")):
            x = self.affine(e)
            if x is not None:
                return f"clpy_hx{plan.site(x, n)}({i}, {n})"
        return f"clpy_ix({i}, {n})"

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

    # ------------------------------------------------------------------ the kernel

    def kernel(self) -> str:
        fn, g = self.fn, self.geom
        self.declared = set()
        if contains_barrier(fn.body, self.memo):
            self.uni = Uniformity(fn, lambda s: _stmt_barrier(s, self.memo))
            self.uni_vars = self.uni.vars
            self.remat = rematerializable(fn, self.uni)
        self.region_locals: dict[int, list[Var]] = {}
        if self.remat:
            self.aff_defs = dict(self.remat)
            self.aff_known = set(self.remat)
        elif not self.uni_vars:
            self.aff_defs = _once_defs(fn.body)
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
        for p, a in self.splice_ptrs.items():
            alias = self.static_ptr(a)
            if alias is None:  # (cgen_splice.py takes only what static_ptr resolves)
                raise Unsupported("a pointer argument of a spliced device function", a.loc)
            self.aliases[p] = alias
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
        head.append(_INDEX)
        head.append(f"/* clpy native engine: kernel {fn.name} ({fn.loc}) */")
        head.append(f"#define WG {g.wg}")
        head.append(f"#define L0 {L0}\n#define L1 {L1}\n#define L2 {L2}\n#define DIMS {g.dims}")
        head.extend(self.ptr_types.values())
        # a work-item's loop polls the cancel flag every 1024 trips (a counter in a register:
        # the flag's load on every trip cost 5% on gramschmidt and lud)
        head.append(
            "#define CLPY_POLL(t) do { if (__builtin_expect(!(++(t) & 1023u), 0)) "
            "CLPY_BACKEDGE(); } while (0)"
        )
        head.append(
            "static inline int clpy_any(const unsigned char *m, int64_t n) {\n"
            "    for (int64_t i = 0; i < n; i++) if (m[i]) return 1;\n    return 0;\n}"
        )
        head.extend(self.func_src)
        out = list(head)
        if self.versioned:
            out.append(HEAD)
        out.append("int clpy_run(void **A, const int64_t *N, int64_t g0, int64_t g1) {")
        # (this call runs every group of the launch: no other thread writes its memory)
        out.append("    const int clpy_solo = g0 == 0 && g1 == N[3] * N[4] * N[5];")
        out.extend("    " + x for x in prologue)
        out.extend("    " + x for x in self.group_decls)
        out.append("    for (int64_t clpy_grp = g0; clpy_grp < g1; clpy_grp++) {")
        out.append(
            "        const int64_t clpy_g[3] = {clpy_grp % N[3], (clpy_grp / N[3]) % N[4],"
            " clpy_grp / (N[3] * N[4])};"
        )
        out.extend(f"        memset({m}, 0, sizeof {m});" for m in self.local_mems)
        out.extend(body_lines)
        out.append("        CLPY_BACKEDGE();")
        out.append("    }")
        out.append("    return 0;")
        out.append("}")
        return "\n".join(out) + "\n"


# An element index out of its memory is element 0 (engine.h clpy_ix), tested by a branch
# marked predictable (so GCC keeps it a branch rather than a conditional move): the load need not
# wait for the comparison, and tests of one index are shared. Work-item loops that keep such
# tests are not vectorized (cgen_group.py _no_gathers). 14 programs, process_time: pathfinder
# 1.7x, hotspot 1.24x, srad 1.08x, spmv 1.1x, bitonic 1.03x less CPU. (The checked generator's
# own clpy_ix, defined before this, stays.)
_INDEX = """#if defined(__has_builtin)
#if __has_builtin(__builtin_expect_with_probability)
#define CLPY_RARE(c) __builtin_expect_with_probability((c), 0, 0.9999)
#endif
#endif
#ifndef CLPY_RARE
#define CLPY_RARE(c) __builtin_expect((c), 0)
#endif
static inline int64_t clpy_ixb(int64_t i, int64_t n) {
    if (CLPY_RARE((uint64_t)i >= (uint64_t)n)) return 0;
    return i;
}
#ifndef clpy_ix
#define clpy_ix(i, n) clpy_ixb((i), (n))
#endif"""


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


def _once_defs(body: Sequence[Stmt]) -> dict[Var, Expr]:
    """Scalar integer variables declared once at the top level of ``body`` (a kernel without
    barriers: one region) and never assigned again, with their values."""
    assigned = _assigned_vars(body)
    decls: dict[Var, int] = {}
    for s in _walk(body):
        if isinstance(s, Declare):
            decls[s.var] = decls.get(s.var, 0) + 1
    return {
        s.var: s.init
        for s in body
        if isinstance(s, Declare)
        and s.init is not None
        and decls[s.var] == 1
        and s.var not in assigned
        and isinstance(s.var.type, ScalarType)
        and s.var.type.is_int
    }


def generate(fn: Function, geom: Geometry) -> tuple[str, bool]:
    """The C source of kernel ``fn`` for ``geom`` and whether its groups must run in order on
    one thread; raises ``Unsupported`` naming the first construct the native engine does not
    run."""
    first = KernelGen(fn, geom, None)
    first.kernel()
    second = KernelGen(fn, geom, first.info)
    second.region_stmts_in = first.region_stmts
    src = second.kernel()
    return src, second.ordered
