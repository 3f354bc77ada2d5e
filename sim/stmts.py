"""Typed IR statements → closures ``(frame) -> Jump | None``.

A statement returns ``None`` when every lane carries on, or a ``Jump`` naming the lanes that
left through ``break``, ``continue`` or ``return``. A block then runs its remaining
statements on the surviving lanes only (a compacted sub-frame) and scatters the variables they
assign back. ``if`` runs each branch on the lanes that take it; loops run until no lane is
left, shrinking the frame as lanes exit.

``StmtCompiler`` holds the ``ExprCompiler`` (``sim/exprs.py``) that compiles the expressions,
conditions and assignment targets of its statements.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from clpy.ir.nodes import (
    Assert,
    Assign,
    Break,
    CallBuiltin,
    Const,
    Continue,
    Declare,
    Expr,
    ExprStmt,
    For,
    If,
    Index,
    Print,
    Return,
    Stmt,
    Var,
    VarRef,
    While,
)
from clpy.types.catalog import void
from clpy.types.core import (
    AddressSpace,
    ArrayType,
    OpaqueType,
    PointerType,
    ScalarType,
    VectorType,
)
from clpy_sim import affine, fastpaths, ifconv, liveness, ops, privmem, stmtgen, tripvec
from clpy_sim.exprs import LOADED, ExprCompiler
from clpy_sim.frame import Frame, PtrVal, exclusive, select_lanes
from clpy_sim.jumps import Jump, assigned_keys, or_lanes, union
from clpy_sim.memory import make_local
from clpy_sim.parallel import Aborted
from clpy_sim.printf import format_print
from clpy_sim.values import RET, struct_zero

Value = Any


def _is_memory(e: Expr) -> bool:
    """An element of global/local memory (a store copies the value into memory)."""
    if not isinstance(e, Index):
        return False
    bt = e.base.type
    return isinstance(bt, PointerType) or (
        isinstance(bt, ArrayType) and bt.space is not AddressSpace.PRIVATE
    )


StmtFn = Callable[[Frame], "Jump | None"]


class StmtCompiler:
    """Compiles statements and blocks; ``exprs`` compiles the expressions in them."""

    def __init__(
        self, exprs: ExprCompiler, checks: frozenset[str], escaped: frozenset[Var] = frozenset()
    ) -> None:
        self.exprs = exprs
        self.checks = checks
        self.escaped = escaped  # private arrays held in memory (sim/privmem.py)
        # variables no branch needs to merge back (sim/liveness.py), from the function body:
        # the first block compiled (every other block is compiled inside it)
        self.local: frozenset[Var] | None = None

    def block(self, stmts: Sequence[Stmt]) -> StmtFn:
        if self.local is None:
            self.local = liveness.branch_local(stmts)
        fns = [self.stmt(s) for s in stmts]
        # What the statements from i on assign, computed when a jump first needs it (eagerly
        # for every i it was quadratic: minutes for a 10,000-statement kernel).
        suffix: dict[int, frozenset[Any]] = {}

        def after(i: int) -> frozenset[Any]:
            keys = suffix.get(i)
            if keys is None:
                keys = suffix[i] = assigned_keys(stmts[i:])
            return keys

        if not fns:
            return lambda fr: None
        if len(fns) == 1:
            return fns[0]

        def run(fr: Frame, start: int = 0) -> Jump | None:
            for i in range(start, len(fns)):
                j = fns[i](fr)
                if j is None:
                    continue
                if i + 1 == len(fns):
                    return j
                gone = j.gone(fr.shape)
                if gone is True:
                    return j
                sel = select_lanes(np.logical_not(gone), fr.shape)
                if sel is False:
                    return j
                if sel is True:
                    continue
                sub = fr.sub(sel)
                j2 = run(sub, i + 1)
                fr.merge(sub, after(i + 1))
                return j if j2 is None else union(j, j2.expand(fr, sub))
            return None

        return run

    def stmt(self, s: Stmt) -> StmtFn:
        method = getattr(self, f"s_{type(s).__name__}", None)
        if method is None:
            raise NotImplementedError(f"the simulator cannot run {type(s).__name__}")
        if type(s) is not Assign and type(s) is not Declare:
            fn: StmtFn = method(s)
            return fn
        # one generated function instead of the closures (stmtgen.py); its fallback (an
        # index that is not exact at run time) is the closures alone: generating the
        # fallback's value too doubled the compile time of long kernels
        exprs = self.exprs
        exprs.fuse = False
        try:
            general: StmtFn = method(s)
        finally:
            exprs.fuse = True
        if isinstance(s, Assign):
            gen = stmtgen.compile_assign(s, exprs, general)
        else:
            assert isinstance(s, Declare)
            gen = stmtgen.compile_declare(s, exprs, general)
        if gen is not None:
            return gen
        fn = method(s)  # the closures, with their values generated (exprgen.py)
        return fn

    # ------------------------------------------------------------------ simple

    def s_Declare(self, s: Declare) -> StmtFn:
        var = s.var
        t = var.type
        if isinstance(t, ArrayType):
            if var in self.escaped:
                return lambda fr: privmem.declare(fr, var, t)
            if t.space is AddressSpace.LOCAL:
                count = int(np.prod(t.shape))
                elem = t.elem

                def local(fr: Frame) -> None:
                    b = fr.batch
                    mem = b.locals.get(var)
                    if mem is None:
                        mem = make_local(b.launch, var.name, elem, count, b.G, b.watch)
                        b.locals[var] = mem
                    fr.env[var] = PtrVal(mem, np.int64(0))

                return local
            count = int(np.prod(t.shape))
            elem_t = t.elem
            if not isinstance(elem_t, (ScalarType, VectorType, OpaqueType)):
                loc = s.loc

                def unsupported(fr: Frame) -> None:
                    fr.batch.launch.fail(
                        "unsupported",
                        f"private array `{var.name}` of "
                        f"{elem_t}: the simulator holds private arrays of "
                        "scalars and vectors only",
                        loc,
                    )

                return unsupported
            lead = (elem_t.n,) if isinstance(elem_t, VectorType) else ()
            dt = ops.dtype_of(elem_t)

            def private(fr: Frame) -> None:
                fr.env[var] = np.zeros((count, *lead, *fr.shape), dtype=dt)

            return private
        if s.init is None:
            if isinstance(t, PointerType):
                z: Value = PtrVal(None, np.int64(0))
            elif hasattr(t, "fields"):
                z = struct_zero(t)
            else:
                z = ops.zeros(t)

            def decl0(fr: Frame) -> None:
                fr.env[var] = z

            return decl0
        # integer runs stay known (exact); other values one generated function (exprgen.py)
        init = affine.value_fn(s.init, self.exprs.fused)

        def decl(fr: Frame) -> None:
            fr.env[var] = init(fr)

        return decl

    def s_Assign(self, s: Assign) -> StmtFn:
        exprs = self.exprs
        if isinstance(s.target, VarRef) and s.op is None:
            var = s.target.var
            setval = affine.value_fn(s.value, exprs.fused)  # (as s_Declare's)

            def setvar(fr: Frame) -> None:
                fr.env[var] = setval(fr)

            return setvar
        ref, load, store = exprs.lvalue(s.target, copy=False)
        if s.op is None:
            # (a store copies the value into memory at once: a view is enough)
            value = exprs.fused(s.value, operand=_is_memory(s.target))

            def assign(fr: Frame) -> None:
                h = ref(fr)
                store(fr, h, value(fr))

            return assign
        op, t = s.op, s.target.type
        comb = exprs.compound(op, t, s.loc, s.value)

        def aug_at(fr: Frame, h: Any) -> None:
            fr.cache[LOADED] = load(fr, h)
            store(fr, h, comb(fr))

        def aug(fr: Frame) -> None:
            aug_at(fr, ref(fr))

        ufunc = fastpaths.INPLACE.get(op)
        if (
            ufunc is not None
            and fastpaths.private_element(s.target, self.escaped)
            and isinstance(t, (ScalarType, VectorType))
            and s.value.type is t
        ):
            return fastpaths.aug_private(ref, exprs.operand(s.value), ufunc, t, aug_at)
        if (
            ufunc is not None
            and isinstance(s.target, Index)
            and isinstance(s.target.base.type, PointerType)
            and isinstance(t, ScalarType)
            and s.value.type is t
        ):
            return fastpaths.aug_global(ref, store, exprs.operand(s.value), ufunc, t, aug_at)
        if not (
            isinstance(s.target, VarRef)
            and ufunc is not None
            and isinstance(t, (ScalarType, VectorType))
            and s.value.type is t
        ):
            return aug
        var = s.target.var
        rhs = exprs.operand(s.value)
        dt = ops.dtype_of(t)

        def aug_inplace(fr: Frame) -> None:
            old = fr.get(var)
            if (
                type(old) is np.ndarray
                and old.dtype == dt
                and old.flags.writeable
                and old.shape[-2:] == fr.shape
                and exclusive(old, 1 if fr.views.get(var) is old else 0)
            ):
                y = rhs(fr)
                if np.ndim(y) <= old.ndim:
                    fr.batch.forget_run(old)
                    if old.base is not None:
                        fr.batch.forget_run(old.base)
                    ops.ufunc_inplace(ufunc, old, y)
                    return
                fr.env[var] = ops.binary(op, t, old, y)
                return
            aug(fr)

        return aug_inplace

    def s_ExprStmt(self, s: ExprStmt) -> StmtFn:
        e = s.expr
        if isinstance(e, CallBuiltin) and e.builtin.atomic is not None:
            # result unused: a void-typed node lets sim/atomics.py skip fetch results
            e = replace(e, type=void)
        f = self.exprs.expr(e)

        def run(fr: Frame) -> None:
            f(fr)

        return run

    def s_Print(self, s: Print) -> StmtFn:
        parts: list[tuple[Any, Any]] = [
            (None, a.value)
            if isinstance(a, Const) and a.type.cl_name == "void"
            else (self.exprs.expr(a), a.type)
            for a in s.args
        ]
        sep, end = s.sep, s.end
        return lambda fr: format_print(fr, parts, sep, end)

    def s_Assert(self, s: Assert) -> StmtFn:
        cond = self.exprs.cond(s.cond)
        loc, msg = s.loc, s.message
        on = "assert" in self.checks

        def run(fr: Frame) -> None:
            if not on:
                return
            c = cond(fr)
            if not np.all(c):
                fr.batch.launch.fail_lanes(
                    fr, np.logical_not(c), "assertion", f"assertion failed: {msg}", loc
                )

        return run

    # ------------------------------------------------------------------ jumps

    def s_Break(self, s: Break) -> StmtFn:
        j = Jump(brk=True)
        return lambda fr: j

    def s_Continue(self, s: Continue) -> StmtFn:
        j = Jump(cont=True)
        return lambda fr: j

    def s_Return(self, s: Return) -> StmtFn:
        j = Jump(ret=True)
        if s.value is None:
            return lambda fr: j
        value = self.exprs.fused(s.value)

        def ret(fr: Frame) -> Jump:
            fr.env[RET] = value(fr)
            return j

        return ret

    # ------------------------------------------------------------------ control flow

    def s_If(self, s: If) -> StmtFn:
        cond = self.exprs.cond(s.cond)
        body = self.block(s.body)
        orelse = self.block(s.orelse) if s.orelse else None
        keys_t = assigned_keys(s.body)
        keys_f = assigned_keys(s.orelse)
        local = self.local or frozenset()
        merge_t, merge_f = keys_t - local, keys_f - local  # (the others are never read)

        def run_on(fr: Frame, c: Value) -> Jump | None:
            sel = select_lanes(c, fr.shape)
            if sel is True:
                return body(fr)
            if sel is False:
                return orelse(fr) if orelse is not None else None
            sub = fr.sub(sel)
            jt = body(sub)
            fr.merge(sub, merge_t)
            out = jt.expand(fr, sub) if jt is not None else None
            if orelse is not None:
                nsel = select_lanes(np.logical_not(c), fr.shape)
                assert not isinstance(nsel, bool)
                sub2 = fr.sub(nsel)
                jf = orelse(sub2)
                fr.merge(sub2, merge_f)
                if jf is not None:
                    out = union(out, jf.expand(fr, sub2))
            return out

        blend = ifconv.compile_if(s, cond, body, orelse, keys_t | keys_f, run_on)
        return blend or (lambda fr: run_on(fr, cond(fr)))

    def s_While(self, s: While) -> StmtFn:
        return self.loop(s, self.exprs.cond(s.cond), s.body, None)

    def s_For(self, s: For) -> StmtFn:
        var = s.var
        x = self.exprs.expr
        start, stop, step = x(s.start), x(s.stop), x(s.step)
        kstop, kstep = ("stop", id(s)), ("step", id(s))
        up = s.step.value > 0 if isinstance(s.step, Const) else (True if s.ascending else None)
        t = var.type

        def init(fr: Frame) -> None:
            fr.env[var] = start(fr)
            fr.env[kstop] = stop(fr)
            fr.env[kstep] = step(fr)

        def cond(fr: Frame) -> Value:
            i = fr.get(var)
            if up is True:
                return i < fr.get(kstop)
            if up is False:
                return i > fr.get(kstop)
            st = fr.get(kstep)
            return np.where(st > 0, i < fr.get(kstop), i > fr.get(kstop))

        def incr(fr: Frame) -> None:
            fr.env[var] = ops.binary("+", t, fr.get(var), fr.get(kstep))

        return self.loop(s, cond, s.body, (init, incr))

    def loop(
        self,
        s: Stmt,
        cond: Callable[[Frame], Value],
        body_stmts: Sequence[Stmt],
        for_parts: tuple[Callable[[Frame], None], Callable[[Frame], None]] | None,
    ) -> StmtFn:
        body = self.block(body_stmts)
        keys = assigned_keys(body_stmts) | (
            frozenset({s.var}) if isinstance(s, For) else frozenset()
        )
        is_while = for_parts is None
        progress = "progress" in self.checks and is_while
        loc = s.loc
        uniform = fastpaths.uniform_for(s, body, body_stmts, assigned_keys(body_stmts))
        vec = tripvec.compile_loop(s, self)  # independent trips at once (sim/tripvec.py)

        def looped(fr: Frame) -> Jump | None:
            if for_parts is not None:
                for_parts[0](fr)
                if (vec is not None and vec(fr)) or (uniform is not None and uniform(fr)):
                    return None
            cur = fr
            ret_acc: Any = None
            batch = fr.batch
            launch = batch.launch
            limit = launch.cfg.spin_limit
            stalls = 0
            suspect = False  # watch the stores of the next trip (progress checker)
            snap: dict[Any, Value] | None = None
            while True:
                c = cond(cur)
                sel = select_lanes(c, cur.shape)
                if sel is False:
                    break
                if sel is not True:
                    cur = _shrink(fr, cur, c, keys)
                    snap = None
                if batch.stop is not None and batch.stop.aborted(batch.index):
                    raise Aborted  # a parallel launch was interrupted (Ctrl-C) or failed
                stores = batch.stores
                if suspect:
                    # the last trip changed no variable: this one's stores count as progress
                    # only when they change memory (``x[i] = x[i]`` spins; sim/memory.py)
                    batch.watching += 1
                    try:
                        j = body(cur)
                    finally:
                        batch.watching -= 1
                else:
                    j = body(cur)
                if j is not None:
                    if j.ret is not None:
                        r = j.ret if cur is fr else fr.expand(cur, j.ret)
                        ret_acc = or_lanes(
                            ret_acc, r if r is not True else np.ones(fr.shape, dtype=bool)
                        )
                    leave = or_lanes(j.brk, j.ret)
                    if leave is not None:
                        if leave is True:
                            break
                        alive = np.logical_not(leave)
                        if not np.count_nonzero(alive):
                            break
                        cur = _shrink(fr, cur, alive, keys)
                        snap = None
                if for_parts is not None:
                    for_parts[1](cur)
                if progress:
                    suspect = snap is not None and _same(cur, snap, keys)
                    if suspect and batch.stores == stores:
                        stalls += 1
                        if stalls >= limit:
                            launch.fail_lanes(
                                cur,
                                True,
                                "no-progress",
                                f"loop made no progress for {limit} iterations "
                                "(no variable or memory changed): it would spin "
                                "forever",
                                loc,
                            )
                            break
                    else:
                        stalls = 0
                    snap = {k: cur.env.get(k) for k in keys}
            if cur is not fr:
                fr.merge(cur, keys)
            return Jump(ret=ret_acc) if ret_acc is not None else None

        return looped


def _shrink(fr: Frame, cur: Frame, alive: Any, keys: frozenset[Any]) -> Frame:
    """A frame of ``fr``'s lanes that are still in the loop (``alive`` over ``cur``)."""
    if cur is not fr:
        fr.merge(cur, keys)
        alive = fr.expand(cur, alive)
    sel = select_lanes(alive, fr.shape)
    if sel is True:
        return fr
    assert sel is not False
    return fr.sub(sel)


def _same(fr: Frame, snap: dict[Any, Value], keys: frozenset[Any]) -> bool:
    for k in keys:
        a, b = fr.env.get(k), snap.get(k)
        if a is b:
            continue
        if a is None or b is None:
            return False
        if not _same_value(a, b):
            return False
    return True


def _same_value(a: Value, b: Value) -> bool:
    """Lane values equal; a struct is a dict of its fields' values (sim/values.py)."""
    if isinstance(a, dict) or isinstance(b, dict):
        if not (isinstance(a, dict) and isinstance(b, dict)) or a.keys() != b.keys():
            return False
        return all(_same_value(a[k], b[k]) for k in a)
    try:
        return bool(np.array_equal(a, b))
    except (TypeError, ValueError):
        return False
