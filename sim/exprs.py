"""Typed IR expressions → closures ``(frame) -> lane value``.

Each expression node is compiled once per ``Function`` into a small Python closure; running a
kernel calls closures, so the interpretation overhead is per statement and per batch, never per
work-item. Short-circuit ``and``/``or`` and ``?:`` evaluate their operands only on the lanes
that need them (lane compaction), unless the operands are free of side effects and errors, in
which case both sides are computed for every lane and blended.

``ExprCompiler`` holds the ``LvalueCompiler`` (memory loads, array rows) and a ``CallSites``
that compiles calls of built-ins and device functions (``sim/plan.py``); the statement
compiler holds an ``ExprCompiler``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from clpy.ir.blocks import BlockLiteral
from clpy.ir.nodes import (
    Binary,
    CallBuiltin,
    CallFunc,
    Cast,
    Compare,
    Const,
    Expr,
    Field,
    Index,
    Loc,
    Logical,
    NamedConst,
    Select,
    StructCons,
    Swizzle,
    Unary,
    Var,
    VarRef,
    VectorCons,
)
from clpy.ir.program_vars import ProgramVar
from clpy.types import catalog as C
from clpy.types.core import AddressSpace, ArrayType, PointerType, ScalarType, Type, VectorType
from clpy.types.structs import StructType
from clpy_sim import ops, program_scope
from clpy_sim.exprgen import compile_expr
from clpy_sim.frame import Frame, PtrVal, scatter_value, select_lanes, select_on
from clpy_sim.lvalues import Load, LvalueCompiler, Ref, Store

Value = Any
Fn = Callable[[Frame], Value]

_INT_DIV = ("/", "%", "floordiv", "floormod")
LOADED = "<compound lhs>"  # frame-cache key of the left side that ``compound`` combines
SAFE_FAMILIES = frozenset(
    {
        "math",
        "common",
        "geometric",
        "relational",
        "integer",
        "work-item",
        "conversions",
        "integer/common",
        "misc-vector",
    }
)


def is_safe(e: Expr) -> bool:
    """True when evaluating ``e`` on lanes that do not need it is harmless (no memory access,
    no integer division, no calls with effects)."""
    if isinstance(e, (Const, NamedConst, VarRef)):
        return True
    if isinstance(e, Binary):
        if (
            e.op in _INT_DIV
            and isinstance(e.type, (ScalarType, VectorType))
            and not ops.element_of(e.type).is_float
        ):
            return False
        return is_safe(e.left) and is_safe(e.right)
    if isinstance(e, (Compare, Logical)):
        return is_safe(e.left) and is_safe(e.right)
    if isinstance(e, Unary):
        return is_safe(e.operand)
    if isinstance(e, Cast):
        return is_safe(e.value)
    if isinstance(e, Select):
        return is_safe(e.cond) and is_safe(e.if_true) and is_safe(e.if_false)
    if isinstance(e, (Swizzle, Field)):
        return is_safe(e.base)
    if isinstance(e, VectorCons):
        return all(is_safe(p) for p in e.parts)
    if isinstance(e, StructCons):
        return all(is_safe(p) for p in e.fields)
    if isinstance(e, CallBuiltin):
        b = e.builtin
        return (
            b.family in SAFE_FAMILIES
            and not b.writes_args
            and not any(isinstance(a.type, PointerType) for a in e.args)
            and all(is_safe(a) for a in e.args)
        )
    return False


class CallSites(Protocol):
    """Compiles calls, given their compiled arguments."""

    def builtin_call(self, e: CallBuiltin, args: list[Fn]) -> Fn: ...

    def func_call(self, e: CallFunc, args: list[Fn]) -> Fn: ...


class Loaded(Expr):
    """The left side of ``x op= y``, loaded by the statement into ``fr.cache[LOADED]``."""

    def __init__(self, t: Any, loc: Any) -> None:
        object.__setattr__(self, "type", t)
        object.__setattr__(self, "loc", loc)


class ExprCompiler:
    """Compiles expressions; ``calls`` compiles built-in and device-function calls."""

    def __init__(
        self, calls: CallSites, checks: frozenset[str], escaped: frozenset[Var] = frozenset()
    ) -> None:
        self.calls = calls
        self.checks = checks
        self.escaped = escaped  # private arrays held in memory (sim/privmem.py)
        self.lvalues = LvalueCompiler(self, checks, escaped)
        self.fuse = True  # ``fused`` generates code (off: closures, for a fallback path)

    def lvalue(self, e: Expr, copy: bool = True) -> tuple[Ref, Load, Store]:
        """``(ref, load, store)`` of an assignable expression (``LvalueCompiler.lvalue``)."""
        return self.lvalues.lvalue(e, copy)

    def compound(self, op: str, t: Type, loc: Loc, value: Expr) -> Fn:
        """``loaded op value`` of type ``t`` for a statement ``x op= value`` at ``loc`` that
        has loaded ``x`` into ``fr.cache[LOADED]``: the ``Binary`` compiler's division checks
        and wrap-around."""
        return self.expr(Binary(t, loc, op, Loaded(t, loc), value))

    def safe(self, e: Expr) -> bool:
        """``is_safe(e)`` (for ``sim/exprgen.py``)."""
        return is_safe(e)

    def fused(self, e: Expr, operand: bool = False) -> Fn:
        """``expr(e)`` (``operand(e)`` with ``operand``) as one generated function where that
        saves closure calls (``sim/exprgen.py``): for the roots evaluated on their own (call
        arguments, conditions, values assigned or returned)."""
        fn: Fn | None = compile_expr(e, self, operand) if self.fuse else None
        if fn is not None:
            return fn
        return self.operand(e) if operand else self.expr(e)

    def expr(self, e: Expr) -> Fn:
        method = getattr(self, f"x_{type(e).__name__}", None)
        if method is None:
            raise NotImplementedError(f"the simulator cannot evaluate {type(e).__name__}")
        fn: Fn = method(e)
        return fn

    # ------------------------------------------------------------------ leaves

    def x_Const(self, e: Const) -> Fn:
        v = ops.const_value(e.value, e.type)
        return lambda fr: v

    def x_NamedConst(self, e: NamedConst) -> Fn:
        if e.type is C.sampler_t:  # clpy.sampler(...): its bit-field (sim/images.py)
            bits = np.int64(e.value)
            return lambda fr: bits
        v = ops.const_value(e.value, e.type)
        return lambda fr: v

    def x_VarRef(self, e: VarRef) -> Fn:
        var = e.var
        t = var.type
        if isinstance(var, ProgramVar):  # a program-scope table or variable
            return lambda fr: program_scope.value(fr, var)
        if isinstance(t, ArrayType) and t.space is AddressSpace.PRIVATE:
            assert var in self.escaped  # an array used as a value: held in memory

        def f(fr: Frame) -> Value:
            env = fr.env
            if var in env:
                return env[var]
            return fr.get(var)

        return f

    # ------------------------------------------------------------------ operators

    def operand(self, e: Expr) -> Fn:
        """An operand whose value is consumed at once into a new array: memory loads may
        then be views (no copy)."""
        if isinstance(e, Index) and not isinstance(e.type, ArrayType):
            ref_fn, load, _ = self.lvalue(e, copy=False)
            return lambda fr: load(fr, ref_fn(fr))
        return self.expr(e)

    def x_Binary(self, e: Binary) -> Fn:
        L, R = self.operand(e.left), self.operand(e.right)
        op, t = e.op, e.type
        lt, rt = e.left.type, e.right.type
        if isinstance(lt, PointerType) or isinstance(rt, PointerType):
            return self._pointer_binary(e, L, R)
        elem = ops.element_of(t)
        if (
            op in _INT_DIV
            and not elem.is_float
            and not (isinstance(e.right, Const) and e.right.value != 0)
        ):
            loc = e.loc
            check = "div_zero" in self.checks

            def div(fr: Frame) -> Value:
                a, b = L(fr), R(fr)
                zero = b == 0
                if np.count_nonzero(zero):  # (np.any: a Python wrapper, µs per call)
                    if check:
                        zl = (
                            zero
                            if not isinstance(zero, np.ndarray) or zero.ndim < 3
                            else zero.any(axis=0)
                        )
                        fr.batch.launch.fail_lanes(
                            fr, zl, "division-by-zero", f"integer {_opname(op)} by zero", loc
                        )
                    b = np.where(zero, elem.dtype.type(1), b).astype(elem.dtype)
                return ops.binary(op, t, a, b)

            return div
        if elem.is_float:
            fb = ops.float_binary
            dt = elem.dtype
            uf = _UFUNCS.get(op) or (np.true_divide if op == "/" else None)
            if uf is not None:  # the ufunc itself: no dispatch on the operator per call

                def fuf(fr: Frame) -> Value:
                    r = uf(L(fr), R(fr))
                    rd = getattr(r, "dtype", None)
                    if rd is not dt and rd != dt:
                        return ops.fix_dtype(r, elem)
                    return r

                return fuf

            def fop(fr: Frame) -> Value:
                r = fb(op, L(fr), R(fr))
                if getattr(r, "dtype", None) != dt:
                    return ops.fix_dtype(r, elem)
                return r

            return fop
        ib = ops.int_binary
        dt = elem.dtype

        if op in ("+", "-") and isinstance(t, ScalarType):
            sign = 1 if op == "+" else -1

            add = op == "+"

            def iop_run(fr: Frame) -> Value:
                a, b = L(fr), R(fr)
                r = a + b if add else a - b  # ops.int_binary's + and -
                rd = getattr(r, "dtype", None)
                if rd is not dt and rd != dt:
                    r = ops.fix_dtype(r, elem)
                # runs of consecutive ids stay runs: tmp[lid + 1] is a column slice, and so
                # is x[i * n + gid] (unless the sum wrapped around)
                if type(a) is np.ndarray:
                    if a.ndim and type(b) is not np.ndarray:
                        first = fr.batch.run_of(a)
                        if first is not None:
                            _note_shifted(fr, r, first + sign * int(b))
                elif sign == 1 and type(b) is np.ndarray and b.ndim:
                    first = fr.batch.run_of(b)
                    if first is not None:
                        _note_shifted(fr, r, first + int(a))
                return r

            return iop_run

        iuf = _UFUNCS.get(op) or _INT_UFUNCS.get(op)
        if iuf is not None:

            def iuop(fr: Frame) -> Value:
                r = iuf(L(fr), R(fr))
                rd = getattr(r, "dtype", None)
                if rd is not dt and rd != dt:
                    return ops.fix_dtype(r, elem)
                return r

            return iuop

        def iop(fr: Frame) -> Value:
            r = ib(op, L(fr), R(fr), elem)
            if getattr(r, "dtype", None) != dt:
                return ops.fix_dtype(r, elem)
            return r

        return iop

    def _pointer_binary(self, e: Binary, L: Fn, R: Fn) -> Fn:
        op = e.op
        if isinstance(e.left.type, PointerType) and isinstance(e.right.type, PointerType):

            def diff(fr: Frame) -> Value:
                a, b = L(fr), R(fr)
                return (
                    np.asarray(a.off - b.off, dtype=np.int64)[()]
                    if np.ndim(a.off - b.off) == 0
                    else np.asarray(a.off - b.off, dtype=np.int64)
                )

            return diff
        sign = 1 if op == "+" else -1

        def arith(fr: Frame) -> Value:
            p, k = L(fr), R(fr)
            off = np.asarray(p.off, dtype=np.int64) + sign * np.asarray(k).astype(np.int64)
            return PtrVal(p.mem, off[()] if off.ndim == 0 else off)

        return arith

    def x_Unary(self, e: Unary) -> Fn:
        A = self.expr(e.operand)
        op, t = e.op, e.type
        if op == "not" and isinstance(e.operand.type, PointerType):
            return lambda fr: np.bool_(A(fr).mem is None)
        un = ops.unary
        return lambda fr: un(op, t, A(fr))

    def x_Compare(self, e: Compare) -> Fn:
        L, R = self.operand(e.left), self.operand(e.right)
        op, t = e.op, e.type
        if isinstance(e.left.type, PointerType):
            return lambda fr: ops.compare(op, t, L(fr).off, R(fr).off)
        if isinstance(t, VectorType):
            return lambda fr: ops.compare(op, t, L(fr), R(fr))
        fn = ops._CMP[op]
        return lambda fr: fn(L(fr), R(fr))

    def x_Logical(self, e: Logical) -> Fn:
        L, R = self.cond(e.left), self.cond(e.right)
        is_and = e.op == "and"
        if is_safe(e.right):
            if is_and:
                return lambda fr: np.logical_and(L(fr), R(fr))
            return lambda fr: np.logical_or(L(fr), R(fr))

        def short(fr: Frame) -> Value:
            a = L(fr)
            need = a if is_and else np.logical_not(a)
            sel = select_lanes(need, fr.shape)
            if sel is False:
                return a
            if sel is True:
                return R(fr)
            sub = fr.sub(sel)
            b = R(sub)
            return scatter_value(fr.shape, sel, np.broadcast_to(a, fr.shape), b)

        return short

    def cond(self, e: Expr) -> Fn:
        """A scalar condition as a bool lane value."""
        f = self.fused(e)
        if e.type is C.bool_:
            return f
        if isinstance(e.type, PointerType):
            return lambda fr: np.bool_(f(fr).mem is not None)
        return lambda fr: ops.truth(f(fr))

    def x_Select(self, e: Select) -> Fn:
        C_, T, F = self.cond(e.cond), self.expr(e.if_true), self.expr(e.if_false)
        if (
            is_safe(e.if_true)
            and is_safe(e.if_false)
            and not isinstance(e.type, (StructType, PointerType))
        ):
            vec = isinstance(e.type, VectorType)

            def blend(fr: Frame) -> Value:
                c = C_(fr)
                if not isinstance(c, np.ndarray) or c.ndim == 0:
                    return T(fr) if c else F(fr)
                r = np.where(c, T(fr), F(fr)) if not vec else np.where(c[None], T(fr), F(fr))
                return r

            return blend
        shape_of = _value_template(e.type)

        def select(fr: Frame) -> Value:
            return select_on(fr, C_(fr), T, F, shape_of)

        return select

    def select_parts(self, e: Select) -> tuple[Fn, Fn, Callable[[Value], Value]]:
        """``x_Select``'s sides and template, for ``select_on`` (sim/exprgen.py)."""
        return self.expr(e.if_true), self.expr(e.if_false), _value_template(e.type)

    def x_Cast(self, e: Cast) -> Fn:
        A = self.expr(e.value)
        src, dst = e.value.type, e.type
        if isinstance(src, ArrayType):  # an array as a pointer to its first element

            def decay(fr: Frame) -> Value:
                h = A(fr)  # a pointer, or the (memory, offset) handle of a row
                return h if isinstance(h, PtrVal) else PtrVal(h[0], h[1])

            return decay
        if isinstance(dst, PointerType) or src is dst:
            return A
        # a work-item query converted to its index type: the launcher checked that the ids
        # fit (clpy/runtime/sizes.py), so runs of ids stay runs
        index = isinstance(e.value, CallBuiltin) and e.value.builtin.index
        fast = _fast_cast(src, dst, index)
        if fast is not None:
            return lambda fr: fast(A(fr), fr)
        conv = ops.convert
        return lambda fr: conv(A(fr), src, dst)

    # ------------------------------------------------------------------ vectors, structs

    def x_Swizzle(self, e: Swizzle) -> Fn:
        B = self.expr(e.base)
        lanes = e.lanes
        if len(lanes) == 1:
            i = lanes[0]
            return lambda fr: B(fr)[i]
        idx = list(lanes)
        return lambda fr: B(fr)[idx]

    def x_VectorCons(self, e: VectorCons) -> Fn:
        t = e.type
        assert isinstance(t, VectorType)
        parts = [(self.expr(p), isinstance(p.type, VectorType)) for p in e.parts]
        dt = t.elem.dtype
        n = t.n
        if len(parts) == 1 and not parts[0][1]:
            P = parts[0][0]

            def bcast(fr: Frame) -> Value:
                v = np.asarray(P(fr), dtype=dt)
                v2 = v.reshape(1, 1) if v.ndim == 0 else v
                return np.broadcast_to(v2, (n, *v2.shape))

            return bcast

        def cons(fr: Frame) -> Value:
            vals = []
            for P, is_vec in parts:
                v = np.asarray(P(fr), dtype=dt)
                if not is_vec:
                    v = v.reshape(1, 1, 1) if v.ndim == 0 else v[None]
                vals.append(v)
            shape = np.broadcast_shapes(*(v.shape[1:] for v in vals))
            return np.concatenate([np.broadcast_to(v, (v.shape[0], *shape)) for v in vals])

        return cons

    def x_Field(self, e: Field) -> Fn:
        B = self.expr(e.base)
        name = e.name
        return lambda fr: B(fr)[name]

    def x_StructCons(self, e: StructCons) -> Fn:
        t = e.type
        assert isinstance(t, StructType)
        names = [n for n, _ in t.fields]
        fs = [self.expr(f) for f in e.fields]
        return lambda fr: {n: f(fr) for n, f in zip(names, fs)}

    # ------------------------------------------------------------------ memory and calls

    def x_Index(self, e: Index) -> Fn:
        if isinstance(e.type, ArrayType):
            ref = self.lvalues.array_ref(e)
            return ref  # a row of a multi-dimensional array: (storage, offset) handle
        ref_fn, load, _ = self.lvalue(e)
        return lambda fr: load(fr, ref_fn(fr))

    def x_CallBuiltin(self, e: CallBuiltin) -> Fn:
        return self.calls.builtin_call(e, [self.fused(a) for a in e.args])

    def x_BlockLiteral(self, e: BlockLiteral) -> Fn:
        """A block (device-side enqueue): the node and its captured lane values (sim/enqueue.py)."""
        caps = [self.expr(c) for c in e.captures]
        return lambda fr: (e, [c(fr) for c in caps])

    def x_CallFunc(self, e: CallFunc) -> Fn:
        return self.calls.func_call(e, [self.fused(a) for a in e.args])

    def x_Loaded(self, e: Loaded) -> Fn:
        return lambda fr: fr.cache[LOADED]


def _fast_cast(src: Type, dst: Type, fits: bool = False) -> Callable[[Value, Frame], Value] | None:
    """Scalar integer/float conversions without the general ``ops.convert`` dispatch; an
    integer run of ids stays a run when widened or re-signed."""
    if not (isinstance(src, ScalarType) and isinstance(dst, ScalarType)):
        return None
    if dst.is_bool or src.is_bool or (src.is_float and not dst.is_float):
        return None
    dt = ops.dtype_of(dst)
    if src.is_float or dst.is_float:
        return lambda v, fr: v.astype(dt)
    keeps = fits or dst.bits >= src.bits

    def cast(v: Value, fr: Frame) -> Value:
        r = v.astype(dt)
        if keeps and isinstance(v, np.ndarray) and v.ndim:
            first = fr.batch.run_of(v)
            if first is not None:
                fr.batch.note_run(r, first)
        return r

    return cast


def _note_shifted(fr: Frame, r: Value, first: int) -> None:
    """Note ``r`` (a run shifted by a uniform amount) as the run starting at ``first``,
    unless the shift wrapped around the integer type somewhere (its ends tell)."""
    if type(r) is np.ndarray and r.item(0) == first and r.item(-1) == first + r.size - 1:
        fr.batch.note_run(r, first)


def _opname(op: str) -> str:
    return {
        "/": "division",
        "%": "remainder",
        "floordiv": "floor division //",
        "floormod": "modulo %",
    }[op]


def _value_template(t: Type) -> Callable[[Value], Value]:
    """A blank value shaped like ``v`` (for scattering the two sides of ``?:``)."""

    def tmpl(v: Value) -> Value:
        if isinstance(v, dict):
            return {k: tmpl(x) for k, x in v.items()}
        if isinstance(v, PtrVal):
            return PtrVal(v.mem, np.int64(0))
        a = np.asarray(v)
        return (
            np.zeros(a.shape[:-2] if a.ndim > 2 else (), dtype=a.dtype)[(...,) + (None,) * 2]
            if a.ndim > 2
            else a.dtype.type(0)
        )

    return tmpl


# operators that are one NumPy ufunc (the others: sim/ops.py)
_UFUNCS = {"+": np.add, "-": np.subtract, "*": np.multiply}
_INT_UFUNCS = {"&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor}
