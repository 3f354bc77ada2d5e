"""The checkers on the native engine, by conservative detection (docs/simulator.md "Native
engine"): the kernel runs with C detectors (sim/native/checks.h) that fire on every launch on
which the NumPy engine's checkers could report anything, and on a few more. A launch whose
detectors stay quiet keeps the native results (the NumPy engine's with checks on); one where
any fires is run again on the NumPy engine from the untouched inputs, so every report,
warning and exception is the NumPy engine's own.

The detectors, one per checker (``clpy_sim.config.CHECKS``):

- ``bounds``: every element index (``clpy_ix``: pointers, each dimension of local and
  private arrays, vloads/vstores, atomics) outside its memory (sim/memory.py ``_check``,
  sim/privmem.py, sim/lvalues.py).
- ``div_zero``: an integer ``/ % // %`` by zero (sim/exprs.py ``x_Binary``).
- ``barriers``: a barrier reached while not every work-item of the group is active (the mask
  of the construct around it; sim/builtins/sync.py).
- ``uninit``: a read of a local memory element that no work-item of the group wrote in an
  earlier barrier interval, nor this work-item earlier in this one (sim/races.py
  ``LocalShadow.read``: the NumPy engine runs the group in lockstep, so another work-item's
  write of the same interval may come after the read there).
- ``races``: per element a writer and a reader record with barrier epochs (checks.h), as the
  NumPy engine's shadows (sim/races.py, sim/races_global.py), for local memory and the global
  buffers the kernel writes; any two accesses of different work-items, at least one a plain
  write, in different groups or one group's same barrier interval. Atomics are exempt.
- ``progress``: a ``while`` loop past ``LONG_LOOP`` trips in one work-item (sim/stmts.py
  ``loop`` reports one whose lanes change nothing for ``spin_limit`` trips). Natively a
  work-item runs its loop alone, so such a loop never ends there: any bound finds it. Other
  work-items could end it through plain accesses (the race detector, always on with the
  checkers, finds those) or atomics: a while loop reading memory some atomic of the kernel
  may change runs on the NumPy engine.
- ``assert``: a failing assert.

The race detector runs whenever any checker does (sim/native/checked_run.py), so a racy
kernel's results are the NumPy engine's lockstep ones. Memory accesses through pointers the
generator cannot trace to one memory (pointer variables, device functions' pointer
parameters) find their shadow at run time by the memory's base address (``clpy_ck_dyn``).
Cheaper cases: a global buffer each of whose elements only one work-item can touch has no
shadow (sim/native/owned.py); a region alone in its barrier interval reads the local memories
it does not write with only the uninitialised-element test, and none at all when every
element was written before (``clpy_ck_allinit``). The kernel body's detections go to a local
status word of ``clpy_run``, device functions' to the thread's (``clpy_ck_st``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clpy.ir.nodes import (
    Assert,
    Assign,
    CallBuiltin,
    Expr,
    ExprStmt,
    For,
    Function,
    Index,
    Stmt,
    Swizzle,
    Var,
    While,
)
from clpy.types.core import AddressSpace, ArrayType, PointerType
from clpy_sim.native.cgen import BARRIERS, Geometry, KernelGen, _Info
from clpy_sim.native.cgen_expr import ArrayRef
from clpy_sim.native.cgen_group import _stmt_barrier, contains_barrier
from clpy_sim.native.check_facts import (
    atomic_roots,
    fixed_memories,
    has_atomics,
    has_jump,
    local_writes,
    memory_reads,
    read_roots,
    root_local,
)
from clpy_sim.native.ctypes_c import Unsupported, c_type
from clpy_sim.native.owned import owned

HEADER = (Path(__file__).resolve().parent / "checks.h").read_text()

# status bits of clpy_run (checks.h) -> the checker whose detector fired
STATUS = (
    (1, "bounds"),
    (2, "div_zero"),
    (4, "barriers"),
    (8, "uninit"),
    (16, "races"),
    (32, "progress"),
    (64, "assert"),
    (128, "races"),
)
# trips of a while loop whose work-item runs alone (no other work-item can end it) before the
# progress detector fires: a loop the NumPy engine reports never ends natively
LONG_LOOP = 1 << 22
_INT_CS = ("int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t")


def fired(status: int) -> str:
    """The checkers whose detectors set ``status``, for ``why_not``."""
    names = sorted({name for bit, name in STATUS if status & bit})
    return ", ".join(names) if names else f"status {status}"


@dataclass(frozen=True)
class CheckSpec:
    """What a checked kernel is generated for: the checkers on (``races`` among them: see
    ``_bound``), and the names of the global buffer parameters with race shadows (the kernel
    writes them, or they are the same array as one it writes; in this order their shadows
    follow the parameters in the argument array)."""

    checks: frozenset[str]
    shadowed: tuple[str, ...] = ()
    shared: tuple[str, ...] = ()  # parameters passed the same array as another


class CheckedGen(KernelGen):
    """``KernelGen`` with the detectors of ``spec.checks`` in the generated C."""

    # (the detectors' calls dominate a region: a fast copy pays where the split skips
    # work-items, like a tree reduction's; elsewhere it cost hotspot and convsep 10-30%)
    split_only = True
    # (the detectors' calls keep their loops scalar; blocking the vectorizer cost convsep's
    # checked run 17%)
    no_gathers = False

    def __init__(
        self, fn: Function, geom: Geometry, info: dict[Any, _Info] | None, spec: CheckSpec
    ) -> None:
        super().__init__(fn, geom, info)
        self.spec = spec
        self.ck = spec.checks
        self.track = bool(self.ck & {"races", "uninit"})
        self.mode = "read"
        self.known: dict[str, tuple[str, str, str] | None] = {}  # base -> shadow (kind, w, r)
        self.dynamic = False  # accesses through pointers looked up at run time
        # barrier intervals (``group_block``, ``emit_region``): whether the region being generated
        # is alone in its interval, and the local arrays it may write (None: any)
        self.iso_pending: tuple[bool, bool] = (False, False)
        self.iso_queues: list[list[tuple[int, bool]]] = []
        self.iso_default = False
        self.iso_around: dict[int, tuple[bool, bool]] = {}  # construct -> barriers around it
        # the local memories written in the region being generated when it is alone in its
        # barrier interval (reads of the others only test for uninitialised elements); None:
        # not alone, or it may write any
        self.iso_written: set[Var] | None = None
        self.local_of: dict[str, tuple[Var, int]] = {}  # local shadow -> memory, elements
        # in a region alone in its interval: per local shadow, a C flag "every element was
        # written before" (computed at the region's start: then its reads need no test)
        self.iso_ai: dict[str, str] = {}
        # the condition of the while loop being generated, its trip counter and bound
        self._trip: tuple[Expr, str, int] | None = None
        self.atomics = any(has_atomics(f.body) for f in (fn, *fn.callees))
        free = [n for n in spec.shadowed if n not in spec.shared]
        self.owned = owned(fn, geom.dims, free) if "races" in self.ck else frozenset()
        self.used = tuple(n for n in spec.shadowed if n not in self.owned)
        self.exact: set[str] = set()  # bases whose indices are bounds-checked whatever the checks

    # ------------------------------------------------------------------ memories

    def var_array(self, v: Any, loc: Any) -> ArrayRef:
        a = super().var_array(v, loc)
        t = v.type
        if t.space is AddressSpace.LOCAL:
            self.local_shadow(a.base, t.count, v)
        else:
            self.known.setdefault(a.base, None)
        return a

    def local_shadow(self, base: str, count: int, var: Var | None = None) -> None:
        if base in self.known or not self.track:
            self.known.setdefault(base, None)
            return
        if var is not None:
            self.local_of[f"clpy_lw_{base}"] = (var, count)
        w, r = f"clpy_lw_{base}", f"clpy_lr_{base}"
        self.group_array("int64_t", w, count, 8)
        self.local_mems.append(w)
        if "races" in self.ck:
            self.group_array("int64_t", r, count, 8)
            self.local_mems.append(r)
        else:
            r = "NULL"
        self.known[base] = ("l", w, r)

    def shadow_of(self, base: str, loc: Any) -> tuple[str, str, str] | None:
        """The shadow of the memory whose base pointer is ``base`` (C text); a pointer the
        generator cannot trace to one memory is looked up at run time (``clpy_ck_dyn``)."""
        if base in self.known:
            return self.known[base]
        if not self.track:
            return None
        self.dynamic = True
        return ("d", base, "")

    # ------------------------------------------------------------------ accesses

    def _place(self, e: Index) -> tuple[str, str, tuple[str, str, str] | None]:
        """(C pointer text of the base, element index text, shadow) of an element access;
        the index already bounds-checked."""
        bt = e.base.type
        if isinstance(bt, ArrayType):
            a = self.array(e)
            if a.dims:
                raise Unsupported("a whole array row as a value", e.loc)
            return a.base, a.off, self.known.get(a.base)
        assert isinstance(bt, PointerType)
        p = self.ptr(e.base)
        idx = self.expr(e.index)
        o = idx if p.off == "0" else f"{p.off} + (int64_t)({idx})"
        ix = "clpy_ixc" if p.base in self.exact else "clpy_ix"
        return p.base, f"{ix}({o}, {p.count})", self.shadow_of(p.base, e.loc)

    def _check(self, sh: tuple[str, str, str], k: str, write: bool) -> str:
        kind, w, r = sh
        if kind == "d":
            return f"clpy_ck_dyn({w}, {k}, wi, {int(write)});"
        if kind == "l":
            if write:
                return f"clpy_ck_lw({w}, {r}, {k}, wi, clpy_ep, CLPY_CK_RACES_ON, &clpy_ckl);"
            return (
                f"clpy_ck_lr({w}, {r}, {k}, wi, clpy_ep, CLPY_CK_UNINIT_ON, CLPY_CK_RACES_ON, "
                "&clpy_ckl);"
            )
        fn = "clpy_ck_gw" if write else "clpy_ck_gr"
        return f"{fn}({w}, {r}, {k}, clpy_grp, wi, WG, clpy_ep, &clpy_ckl);"

    def _shadowed(self, sh: tuple[str, str, str] | None, loc: Any) -> bool:
        if sh is None:
            return False
        if self.in_func is not None and sh[0] != "d":
            raise Unsupported("shadowed memory accessed in a device function", loc)
        return True

    def x_Index(self, e: Index) -> str:
        if isinstance(e.type, (ArrayType, PointerType)):
            return super().x_Index(e)
        return self.lvalue(e)

    def lvalue(self, e: Expr) -> str:
        if isinstance(e, Index) and not isinstance(e.type, ArrayType):
            base, k, sh = self._place(e)
            if not self._shadowed(sh, e.loc):
                return f"{base}[{k}]"
            assert sh is not None
            n = self.fresh("k")
            chk = self._check(sh, n, False)
            iw = self.iso_written
            if sh[0] == "l" and iw is not None and self.in_func is None:
                v = root_local(e.base)
                if v is not None and v not in iw:
                    chk = f"clpy_ck_lro({sh[1]}, {n}, CLPY_CK_UNINIT_ON, &clpy_ckl);"
                    ai = self.iso_ai.get(sh[1])
                    if ai is not None:
                        chk = f"if (!{ai}) {chk}"
            return f"(*({{ int64_t {n} = {k}; {chk} &{base}[{n}]; }}))"
        return super().lvalue(e)

    def s_Assign(self, s: Assign) -> None:
        tgt = s.target
        idx = tgt.base if isinstance(tgt, Swizzle) else tgt
        if not isinstance(idx, Index) or isinstance(idx.type, ArrayType):
            super().s_Assign(s)
            return
        base, k, sh = self._place(idx)
        if not self._shadowed(sh, s.loc):
            super().s_Assign(s)
            return
        assert sh is not None
        t = tgt.type
        if isinstance(t, (PointerType, ArrayType)):
            raise Unsupported("assignment of a pointer element or array", s.loc)
        ct = c_type(t, s.loc)
        n = self.fresh("k")
        w = self.w
        elem = f"{base}[{n}]"
        place = elem if not isinstance(tgt, Swizzle) else f"{elem}[{tgt.lanes[0]}]"
        rw = s.op is not None or isinstance(tgt, Swizzle)
        w(f"{{ int64_t {n} = {k};")
        if rw:
            w(f"  {self._check(sh, n, False)}")
        if isinstance(tgt, Swizzle) and len(tgt.lanes) > 1:
            if s.op is not None:
                raise Unsupported("compound assignment to a swizzle", s.loc)
            val = self._value(s, t)
            sets = " ".join(f"{elem}[{lane}] = clpy_sv[{i}];" for i, lane in enumerate(tgt.lanes))
            w(f"  {ct} clpy_sv = {val};")
            w(f"  {self._check(sh, n, True)} {sets} }}")
            return
        if s.op is None:
            val = self._value(s, t)
        else:
            val = self._compound(s, t, place)
        v = self.fresh("v")
        w(f"  {ct} {v} = {val};")
        w(f"  {self._check(sh, n, True)} {place} = {v}; }}")

    def _value(self, s: Assign, t: Any) -> str:
        val = self.expr(s.value)
        if s.value.type != t:
            val = self.convert(val, s.value.type, t, s.value)
        return val

    def _compound(self, s: Assign, t: Any, place: str) -> str:
        """``place op= value`` as cgen's ``s_Assign``."""
        assert s.op is not None
        return self.compound(s.op, t, place, s.value, s.loc)

    def vload(self, e: CallBuiltin, n: int, stride: int) -> str:
        p = self.ptr(e.args[1])
        sh = self.shadow_of(p.base, e.loc)
        if not self._shadowed(sh, e.loc):
            return super().vload(e, n, stride)
        assert sh is not None
        base = self._base(e.args[0], stride, p)
        b = self.fresh("vb")
        items = []
        for j in range(n):
            k = f"clpy_ix({b} + {j}, {p.count})"
            kk = self.fresh("k")
            items.append(
                f"(*({{ int64_t {kk} = {k}; {self._check(sh, kk, False)} &{p.base}[{kk}]; }}))"
            )
        body = items[0] if n == 1 else None
        if body is None:
            ct = c_type(e.type, e.loc)
            if n == 3:
                items.append("0")
            body = f"(({ct}){{{', '.join(items)}}})"
        return f"({{ int64_t {b} = {base}; {body}; }})"

    def vstore(self, e: CallBuiltin, n: int, stride: int) -> str:
        data, off, pe = e.args
        p = self.ptr(pe)
        sh = self.shadow_of(p.base, e.loc)
        if not self._shadowed(sh, e.loc):
            return super().vstore(e, n, stride)
        assert sh is not None
        base = self._base(off, stride, p)
        ct = c_type(data.type, e.loc)
        out = [f"{{ {ct} clpy_vs = {self.expr(data)}; int64_t clpy_vb = {base};"]
        for j in range(n):
            el = "clpy_vs" if n == 1 else f"clpy_vs[{j}]"
            kk = self.fresh("k")
            out.append(
                f"{{ int64_t {kk} = clpy_ix(clpy_vb + {j}, {p.count}); "
                f"{self._check(sh, kk, True)} {p.base}[{kk}] = {el}; }}"
            )
        return " ".join(out) + " }"

    # ------------------------------------------------------------------ statements

    def s_Assert(self, s: Assert) -> None:
        if "assert" in self.ck:
            self.w(f"if (!{self.cond(s.cond)}) clpy_ck_st |= CLPY_CK_ASSERT;")

    def _bound(self, s: While) -> int:
        """Trips of ``s`` per work-item before the progress detector fires. Natively a
        work-item runs its loop alone: a loop whose lanes change nothing never ends, unless
        other work-items change what it reads, through plain accesses (the race detector,
        always on here, finds those) or atomics: such a loop may end natively where the
        NumPy engine's lockstep run spins, so it runs there."""
        reads, calls = memory_reads(s.body, s.cond)
        if not (reads or calls):
            return LONG_LOOP
        if "races" in self.ck and not self.atomics:
            return LONG_LOOP
        if "races" in self.ck and not calls:
            # atomics only on memories this loop does not read (by the variable named; any
            # memory passed the same array as another counts as all of them)
            hit = atomic_roots(self.fn)
            seen = read_roots([*s.body], s.cond)
            fixed = fixed_memories(self.fn)
            if seen is not None and not seen <= fixed:
                seen = None  # (a pointer variable: any memory)
            shared = set(self.spec.shared)
            if hit is not None and seen is not None:
                if shared & {v.name for v in hit} and shared & {v.name for v in seen}:
                    hit = None
                elif not hit & seen:
                    return LONG_LOOP
        raise Unsupported(
            "a while loop that reads memory in a kernel with atomics, with the progress checker on",
            s.loc,
        )

    def cond(self, e: Expr) -> str:
        c = super().cond(e)
        trip = self._trip
        if trip is not None and trip[0] is e:
            self._trip = None
            return f"({c} && clpy_ck_trip(&{trip[1]}, {trip[2]}))"
        return c

    def s_While(self, s: While) -> None:
        if "progress" not in self.ck:
            super().s_While(s)
            return
        n = self.fresh("trips")
        self.w(f"{{ int64_t {n} = 0;")
        self._trip = (s.cond, n, self._bound(s))
        super().s_While(s)
        self._trip = None
        self.w("}")

    def group_while(self, s: While) -> None:
        if "progress" not in self.ck:
            super().group_while(s)
            return
        n = self.fresh("trips")
        bound = self._bound(s)
        if self.uni is not None and self.uni.loop(s):
            self.w(f"{{ int64_t {n} = 0;")
            self._trip = (s.cond, n, bound)
            super().group_while(s)
            self._trip = None
            self.w("}")
            return
        self.group_array("int64_t", n, self.geom.wg, 8)
        self.w(f"memset({n}, 0, sizeof {n});")
        self._trip = (s.cond, f"{n}[wi]", bound)
        # (the condition is generated once, inside the loop's first region)
        super().group_while(s)
        self._trip = None

    # ------------------------------------------------------------------ barrier intervals

    def _kind(self, s: Stmt, jumps: bool) -> str:
        """How ``group_block`` takes ``s``: ``u`` once per group, ``b`` a plain barrier, ``c``
        another construct with a barrier (or a region boundary), ``r`` part of a region."""
        if _stmt_barrier(s, self.memo):
            if (
                isinstance(s, ExprStmt)
                and isinstance(s.expr, CallBuiltin)
                and s.expr.builtin.name in BARRIERS
            ):
                return "b"
            return "c"
        if self.uni is not None and self.uni.stmt(s, jumps):
            return "u"
        return "r"

    def group_block(self, stmts: Sequence[Stmt]) -> None:
        """Marks each region of ``stmts`` that is alone in its barrier interval: the nearest
        statements around it, but for those run once per group (no memory access), are plain
        barriers (or the interval's ends that the block's context ``iso_pending`` vouches for:
        the kernel's start and end; a loop run once per group whose body starts and ends with
        barriers, with barriers around it)."""
        entry, exit_ = self.iso_pending
        self.iso_pending = (False, False)
        inner = next((t for t in reversed(self.targets) if t.kind != "func"), None)
        jumps = inner is not None and inner.kind == "uniform"
        kinds = [self._kind(s, jumps) for s in stmts]
        for j, (s, k) in enumerate(zip(stmts, kinds)):
            if k == "u" and has_jump(s):
                # a break or continue run once per group leaves the block: the code it goes
                # to runs in the interval of the code before it, unless that starts with the
                # jump (a barrier just before it)
                prev = [x for x in kinds[:j] if x != "u"]
                if not ((prev[-1] == "b") if prev else entry):
                    entry = exit_ = False
                    kinds = ["c" if x == "b" else x for x in kinds]
                    break
        queue: list[tuple[int, bool]] = []
        i = 0
        for j, s in enumerate(stmts):
            if kinds[j] == "c":
                prev = [k for k in kinds[:j] if k != "u"]
                nxt = [k for k in kinds[j + 1 :] if k != "u"]
                self.iso_around[id(s)] = (
                    (prev[-1] == "b") if prev else entry,
                    (nxt[0] == "b") if nxt else exit_,
                )
        while i < len(stmts):
            if kinds[i] != "r":
                i += 1
                continue
            j = i
            while j < len(stmts) and kinds[j] == "r":
                j += 1
            prev = [k for k in kinds[:i] if k != "u"]
            nxt = [k for k in kinds[j:] if k != "u"]
            ok = ((prev[-1] == "b") if prev else entry) and ((nxt[0] == "b") if nxt else exit_)
            queue.append((id(stmts[i]), ok))
            i = j
        self.iso_queues.append(queue)
        try:
            super().group_block(stmts)
        finally:
            self.iso_queues.pop()

    def group_stmt(self, s: Stmt) -> None:
        if (
            isinstance(s, ExprStmt)
            and isinstance(s.expr, CallBuiltin)
            and s.expr.builtin.name in BARRIERS
        ):
            test = f"clpy_ck_barrier({self.cur_mask()}, WG, &clpy_ep)"
            if "barriers" in self.ck:
                self.w(f"if (!{test}) clpy_ck_st |= CLPY_CK_BARRIER;")
            else:
                self.w(f"(void){test};")
            self.w("clpy_ckx.ep = clpy_ep;")
        self.iso_pending = (False, False)
        if isinstance(s, (For, While)) and self.uni is not None and self.uni.loop(s):
            # a loop run once per group: its body's first region follows the body's end or
            # what is before the loop, its last precedes the body's start or what follows
            before, after = self.iso_around.get(id(s), (False, False))
            body = [k for k in (self._kind(x, True) for x in s.body) if k != "u"]
            starts = bool(body) and body[0] == "b"
            ends = bool(body) and body[-1] == "b"
            self.iso_pending = (before and ends, after and starts)
        super().group_stmt(s)
        self.iso_pending = (False, False)

    def emit_region(self, stmts: Sequence[Stmt]) -> None:
        q = self.iso_queues[-1] if self.iso_queues else None
        alone = self.iso_default
        if q and stmts and q[0][0] == id(stmts[0]):
            alone = q.pop(0)[1]
        saved = self.iso_written, self.iso_ai
        self.iso_written = local_writes(stmts) if alone else None
        self.iso_ai = {}
        if self.iso_written is not None and "uninit" in self.ck:
            for w, (v, count) in self.local_of.items():
                if v not in self.iso_written:
                    ai = self.fresh("ai")
                    self.w(f"const int {ai} = clpy_ck_allinit({w}, {count});")
                    self.iso_ai[w] = ai
        try:
            super().emit_region(stmts)
        finally:
            self.iso_written, self.iso_ai = saved

    # ------------------------------------------------------------------ the kernel

    def kernel(self) -> str:
        fn = self.fn
        n = len(fn.params)
        shadowed = set(self.used) if "races" in self.ck else set()
        counts = dict(self.geom.local_counts)
        self.group_decls.append("int64_t clpy_ep = 0;")
        self.group_decls.append("clpy_ck_st = 0;")
        j = 0
        for p in fn.params:
            name = self.cname(p)
            t = p.type
            if not isinstance(t, PointerType):
                continue
            if p.name in counts:
                self.local_shadow(f"clpy_l_{name}", counts[p.name], p)
            elif p.name in shadowed:
                w, r = f"clpy_gw_{name}", f"clpy_gr_{name}"
                self.group_decls.append(f"int64_t *const {w} = (int64_t *)A[{n + j}];")
                self.group_decls.append(f"int64_t *const {r} = {w} + clpy_n_{name};")
                self.known[f"clpy_b_{name}"] = ("g", w, r)
                j += 1
            else:
                self.known[f"clpy_b_{name}"] = None
                if p.name in self.owned:
                    self.exact.add(f"clpy_b_{name}")
        self.iso_default = not contains_barrier(fn.body, self.memo)
        self.iso_pending = (True, True)  # (the kernel's start and end)
        src = super().kernel()
        head = [
            f"#define CLPY_CK_RACES_ON {int('races' in self.ck)}",
            f"#define CLPY_CK_UNINIT_ON {int('uninit' in self.ck)}",
            HEADER,
        ]
        if "bounds" in self.ck:
            head.append("#define clpy_ix(i, n) clpy_ixc((i), (n))")
        if "div_zero" in self.ck:
            for ct in _INT_CS:
                for op in ("div", "rem", "fdiv", "fmod"):
                    f = f"clpy_{op}_{ct}"
                    head.append(f"#define {f}(a, b) {f}((a), clpy_ckz_{ct}(b))")
        inc = '#include "engine.h"\n'
        assert inc in src
        src = src.replace(inc, inc + "\n".join(head) + "\n", 1)
        # the kernel body's detections go to clpy_ckl, a local of clpy_run (device functions,
        # compiled before it, use the thread's status word)
        body = ["/* clpy_run's own status word */"]
        if "bounds" in self.ck:
            body += ["#undef clpy_ix", "#define clpy_ix(i, n) clpy_ixl((i), (n), &clpy_ckl)"]
        if "div_zero" in self.ck:
            for ct in _INT_CS:
                for op in ("div", "rem", "fdiv", "fmod"):
                    f = f"clpy_{op}_{ct}"
                    body += [
                        f"#undef {f}",
                        f"#define {f}(a, b) {f}((a), clpy_ckzl_{ct}(b, &clpy_ckl))",
                    ]
        run = "int clpy_run(void **A, const int64_t *N, int64_t g0, int64_t g1) {\n"
        assert run in src
        src = src.replace(run, "\n".join(body) + "\n" + run + "    int clpy_ckl = 0;\n", 1)
        loop = "    for (int64_t clpy_grp = g0; clpy_grp < g1; clpy_grp++) {\n"
        assert loop in src
        table = [s for s in self.known.items() if s[1] is not None]
        if len(table) > 32:
            raise Unsupported("more than 32 shadowed memories")
        reg = ["clpy_ckx.n = 0;", "clpy_ckx.wg = WG;"]
        for i, (base, sh) in enumerate(table):
            assert sh is not None
            reg.append(
                f"clpy_ckx.base[{i}] = {base}; clpy_ckx.w[{i}] = {sh[1]}; "
                f"clpy_ckx.r[{i}] = {sh[2]}; clpy_ckx.global[{i}] = {int(sh[0] == 'g')};"
            )
        reg.append(f"clpy_ckx.n = {len(table)};")
        start = "        clpy_ck_st |= clpy_ckl;\n        if (clpy_ck_st) break;\n"
        start += "        clpy_ep = 0; clpy_ckx.grp = clpy_grp; clpy_ckx.ep = 0;\n"
        src = src.replace(loop, "".join("    " + x + "\n" for x in reg) + loop + start, 1)
        end = "    return 0;\n}\n"
        assert src.endswith(end)
        return src[: -len(end)] + "    return clpy_ck_st | clpy_ckl;\n}\n"


def generate_checked(
    fn: Function, geom: Geometry, spec: CheckSpec
) -> tuple[str, bool, tuple[str, ...]]:
    """``cgen.generate`` with the detectors of ``spec``: the C source of ``fn`` for ``geom``,
    whether its groups must run in order on one thread, and the buffers of ``spec.shadowed``
    that have race shadows (the others' elements are each one work-item's: sim/native/owned.py)
    in the order their shadows follow the parameters."""
    first = CheckedGen(fn, geom, None, spec)
    first.kernel()
    second = CheckedGen(fn, geom, first.info, spec)
    src = second.kernel()
    return src, second.ordered, second.used
