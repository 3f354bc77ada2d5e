"""Expressions compiled to straight-line Python (the code writer of statement fusion).

``ExprGen`` emits the code of an expression tree into one generated function, with the
closures of ``sim/exprs.py`` inlined node by node: each inlined node computes what its closure
computes (same NumPy calls on the same operands, same dtype fix-ups, same runs noted for the
exact index evaluators), in the same order; a node it does not know is its compiled closure,
called where the closure tree would call it. ``sim/stmtgen.py`` uses it for whole assignments;
``compile_expr`` makes one function of an expression that is evaluated on its own (a call's
argument, a condition, a returned or assigned value), so that a trip of a loop pays one call
per such root instead of one per node (the profile of NW, N-body and LU: 5 to 15 closure calls
of 1 to 3 us per root, on lane arrays of 16 to 2,048 elements).

Inlined, besides loads and float arithmetic (see ``sim/stmtgen.py``): integer ``+ -`` (with
``ExprCompiler``'s run noting), integer ``* & | ^``, scalar comparisons, ``?:`` whose sides are
safe (the blend), swizzles, scalar conversions and a scalar made a vector of its own element
type, unary operators, ``and``/``or`` with a safe right side, variables and constants; ``?:``
with loads on its sides (``sim/selectgen.py``) and calls of small device functions
(``sim/inlinegen.py``) where they apply. Indices are exact (``sim/affine_gen.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from clpy.ir.nodes import (
    Binary,
    CallBuiltin,
    CallFunc,
    Cast,
    Compare,
    Const,
    Expr,
    Index,
    Logical,
    NamedConst,
    Select,
    Swizzle,
    Unary,
    VarRef,
)
from clpy.ir.program_vars import ProgramVar
from clpy.types import catalog as C
from clpy.types.core import AddressSpace, ArrayType, PointerType, ScalarType, VectorType
from clpy.types.structs import StructType
from clpy_sim import inlinegen, ops, selectgen
from clpy_sim.affine import Run
from clpy_sim.affine_gen import compile_affine
from clpy_sim.frame import exclusive
from clpy_sim.inlinegen import NoInline
from clpy_sim.memory import GlobalMem, LocalMem, Memory

ENABLED = True  # ``compile_expr``; read when a plan is compiled (tests compare both ways)

FLOAT_UF: dict[str, Any] = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide}
_INT_UF: dict[str, Any] = {
    "*": np.multiply,
    "&": np.bitwise_and,
    "|": np.bitwise_or,
    "^": np.bitwise_xor,
}
_GIVE_UP = 16
_MAX_LINES = 400  # a root that would generate more stays closures (deep ?: nests)


def is_float(t: Any) -> bool:
    return isinstance(t, ScalarType) and t.is_float


def floatv(t: Any) -> bool:
    """A float scalar or vector (the Binary compiler's ``fuf``: one ufunc over the lanes,
    the components on the leading axis)."""
    return is_float(t) or (isinstance(t, VectorType) and t.elem.is_float)


def is_int(t: Any) -> bool:
    return isinstance(t, ScalarType) and not t.is_float and not t.is_bool


def _intv(t: Any) -> bool:
    return is_int(t) or (isinstance(t, VectorType) and not t.elem.is_float and not t.elem.is_bool)


def mem_site(e: Expr) -> str | None:
    """``global`` for an element of a pointer variable, ``local`` for one of a 1-D local array
    variable, None for other lvalues."""
    if not isinstance(e, Index) or not isinstance(e.type, ScalarType):
        return None
    base = e.base
    if not isinstance(base, VarRef) or isinstance(base.var, ProgramVar):
        return None
    if not is_int(e.index.type):
        return None
    bt = base.type
    if isinstance(bt, PointerType) and bt.space in (AddressSpace.GLOBAL, AddressSpace.CONSTANT):
        return "global"
    if isinstance(bt, PointerType) and bt.space is AddressSpace.LOCAL:
        return "local"  # (a ``Local[T]`` parameter: ``pref``'s pointer, local memory's paths)
    if isinstance(bt, ArrayType) and bt.space is AddressSpace.LOCAL and len(bt.shape) == 1:
        return "local"
    return None


def _widens(src: Any, dst: Any) -> bool:
    """A scalar made a vector of its own (non-bool) element type."""
    return (
        isinstance(src, ScalarType)
        and isinstance(dst, VectorType)
        and dst.elem is src
        and not src.is_bool
    )


def _note_shift(fr: Any, r: Any, first: int) -> None:
    """``exprs._note_shifted``: ``r`` (a run shifted by a uniform amount) noted as the run
    starting at ``first`` unless the shift wrapped around somewhere."""
    if type(r) is np.ndarray and r.item(0) == first and r.item(-1) == first + r.size - 1:
        fr.batch.note_run(r, first)


class ExprGen:
    """The lines and namespace of one generated function; ``exprs`` (an ``ExprCompiler``)
    compiles what is not inlined."""

    def __init__(self, exprs: Any) -> None:
        self.exprs = exprs
        self.lines: list[str] = []
        self.ns: dict[str, Any] = {
            "_Run": Run,
            "_i64": np.int64,
            "_fix": ops.fix_dtype,
            "_nd": np.ndarray,
            "_Mem": Memory,
            "_GM": GlobalMem,
            "_excl": exclusive,
            "_ndim": np.ndim,
            "_uip": ops.ufunc_inplace,
            "_bin": ops.binary,
            "_shift": _note_shift,
            "_where": np.where,
            "_bcast": np.broadcast_to,
            "_conv": ops.convert,
            "_un": ops.unary,
            **selectgen.NS,
        }
        self.k = 0
        self.inline = 0  # operators and accesses made inline
        self.saved = 0  # closure calls saved (a root with few gains nothing)
        # inlining a device function's body: its variables' temporaries (no closures then)
        self.bound: dict[Any, str] | None = None

    def name(self, prefix: str, obj: Any) -> str:
        n = f"{prefix}{len(self.ns)}"
        self.ns[n] = obj
        return n

    def tmp(self) -> str:
        self.k += 1
        return f"t{self.k}"

    def emit(self, s: str, ind: int = 1) -> None:
        self.lines.append("    " * ind + s)

    def indent_from(self, base: int, by: int = 1) -> None:
        """Indent what was emitted since line ``base`` by ``by`` more levels."""
        self.lines[base:] = ["    " * by + ln for ln in self.lines[base:]]

    # ------------------------------------------------------------------ addresses

    def address(self, e: Index) -> tuple[str, str, Any] | None:
        """Emit the pointer/array read and the exact index of ``e``: the names of the memory
        object and of the affine result, and the index dtype; None when the index is not one
        exact evaluation knows."""
        aff = compile_affine(e.index, self.exprs.expr)
        if aff is None:
            return None
        var = e.base.var  # type: ignore[attr-defined]
        vn = self.name("_V", var)
        p, a = self.tmp(), self.tmp()
        if isinstance(e.base.type, PointerType):
            # (``pref``: a pointer with a zero offset passes the index through)
            self.emit(f"{p} = env[{vn}] if {vn} in env else fr.get({vn})")
            self.emit(
                f"{p} = {p}.mem if type({p}.off) is _i64 and {p}.off == 0 "
                f"and isinstance({p}.mem, _Mem) else None"
            )
        else:
            self.emit(f"{p} = fr.get({vn}).mem")
            self.emit(f"if not isinstance({p}, _Mem): {p} = None")
        # (``affine.index``'s give-up: a site whose index is not exact 16 times in a row, as
        # in a gather, stops trying and goes straight to the fallback)
        m = self.name("_M", [0])
        self.emit(f"{a} = {self.name('_A', aff)}(fr) if {m}[0] < {_GIVE_UP} else None")
        self.emit(f"if {a} is None: {m}[0] += 1")
        self.emit(f"else: {m}[0] = 0")
        return p, a, ops.dtype_of(e.index.type)

    def addr_value(self, a: str, dt: Any) -> str:
        """Emit the index ``Memory`` receives from the exact result ``a`` (as ``affine.index``
        makes it), or a jump to the fallback; returns its name."""
        lo, hi = (int(x) for x in (np.iinfo(dt).min, np.iinfo(dt).max))
        sct = self.name("_S", dt.type)
        dtn = self.name("_D", dt)
        x = self.tmp()
        self.emit(f"if type({a}) is int and {lo} <= {a} <= {hi}:")
        self.emit(f"{x} = {sct}({a})", 2)
        self.emit(
            f"elif {a} is not None and {a}[1] and {lo} <= {a}[0] <= {hi} "
            f"and {lo} <= {a}[0] + {a}[1] * ({a}[3] - 1) <= {hi}:"
        )
        self.emit(f"{x} = _Run({a}[0], {a}[1], {a}[2], {a}[3], {dtn})", 2)
        self.emit("else:")
        self.emit(f"{x} = None", 2)
        return x

    # ------------------------------------------------------------------ expressions

    def closure(self, e: Expr, operand: bool) -> str:
        if self.bound is not None:
            raise NoInline  # (a closure would read the callee's variables from its frame)
        fn = self.exprs.operand(e) if operand else self.exprs.expr(e)
        t = self.tmp()
        self.emit(f"{t} = {self.name('_C', fn)}(fr)")
        return t

    def expr(self, e: Expr, operand: bool) -> str:
        """Emit ``e``'s value into a temporary (``operand``: consumed at once, loads may be
        views); returns its name."""
        if isinstance(e, (Const, NamedConst)) and isinstance(e.type, ScalarType):
            self.saved += 1
            return self.name("_K", ops.const_value(e.value, e.type))
        if self.bound is not None and isinstance(e, VarRef):
            got = self.bound.get(e.var)
            if got is None or not isinstance(e.type, ScalarType):
                raise NoInline
            self.saved += 1
            return got
        if (
            isinstance(e, VarRef)
            and isinstance(e.type, (ScalarType, VectorType))
            and not isinstance(e.var, ProgramVar)
        ):
            vn = self.name("_V", e.var)
            t = self.tmp()
            self.emit(f"{t} = env[{vn}] if {vn} in env else fr.get({vn})")
            self.saved += 1
            return t
        if isinstance(e, Binary):
            return self.binary(e, operand)
        if isinstance(e, Compare):
            return self.compare(e, operand)
        if isinstance(e, Select):
            return self.select(e, operand)
        if isinstance(e, CallFunc) and self.bound is None:
            return self.call(e, operand)
        if isinstance(e, Logical) and self.exprs.safe(e.right):
            # ``x_Logical`` with a safe right side: both conditions, then one ufunc
            a = self.cond_value(e.left)
            b = self.cond_value(e.right)
            t = self.tmp()
            uf = np.logical_and if e.op == "and" else np.logical_or
            self.emit(f"{t} = {self.name('_U', uf)}({a}, {b})")
            self.saved += 1
            return t
        if isinstance(e, Swizzle):
            b = self.expr(e.base, False)
            t = self.tmp()
            lanes = e.lanes
            ix = str(lanes[0]) if len(lanes) == 1 else self.name("_I", list(lanes))
            self.emit(f"{t} = {b}[{ix}]")
            self.saved += 1
            return t
        if isinstance(e, Cast):
            return self.cast(e, operand)
        if isinstance(e, Unary) and not isinstance(e.operand.type, PointerType):
            a = self.expr(e.operand, False)
            t = self.tmp()
            self.emit(f"{t} = _un({e.op!r}, {self.name('_T', e.type)}, {a})")
            self.saved += 1
            return t
        site = mem_site(e) if isinstance(e, Index) and self.bound is None else None
        if site is not None:
            assert isinstance(e, Index)
            return self.load(e, site, operand)
        return self.closure(e, operand)

    def call(self, e: CallFunc, operand: bool) -> str:
        """A device function call, made inline where it can be (``sim/inlinegen.py``)."""
        return inlinegen.emit_call(self, e, operand)

    def binary(self, e: Binary, operand: bool) -> str:
        """``ExprCompiler.x_Binary``'s ``fuf`` (float), ``iop_run`` (integer ``+ -``) and
        ``iuop`` (integer ``* & | ^``); other operators are the closure."""
        lt, rt, t, op = e.left.type, e.right.type, e.type, e.op
        if isinstance(lt, PointerType) or isinstance(rt, PointerType):
            return self.closure(e, operand)
        if floatv(t) and op in FLOAT_UF:
            if not (floatv(lt) and floatv(rt)):
                return self.closure(e, operand)
            uf = FLOAT_UF[op]
        elif is_int(t) and op in ("+", "-"):
            return self.int_add(e)
        elif _intv(t) and op in _INT_UF:
            uf = _INT_UF[op]
        else:
            return self.closure(e, operand)
        a = self.side(e.left, rt)
        b = self.side(e.right, lt)
        dt = ops.dtype_of(t)
        dtn = self.name("_D", dt)
        eln = self.name("_E", ops.element_of(t))
        r = self.tmp()
        self.emit(f"{r} = {self.name('_U', uf)}({a}, {b})")
        self.emit(f"if getattr({r}, 'dtype', None) != {dtn}: {r} = _fix({r}, {eln})")
        self.inline += 1
        self.saved += 1
        return r

    def side(self, e: Expr, other: Any) -> str:
        """An operand of an element-wise ufunc whose other operand is of type ``other``. A
        scalar made a vector of its own element type (``acc += s * r``) against a vector of
        as many components is the scalar itself (an array gets a leading axis of one): the
        ufunc broadcasts it to the same values, dtype and shape as ``ops.convert``'s
        broadcast would give, without making the broadcast (``np.broadcast_to``: several us)."""
        if not (
            isinstance(e, Cast)
            and _widens(e.value.type, e.type)
            and isinstance(other, VectorType)
            and other.n == e.type.n  # type: ignore[attr-defined]
        ):
            return self.expr(e, True)
        a = self.expr(e.value, False)
        src, dst = e.value.type, e.type
        dt = ops.dtype_of(dst)
        r = self.tmp()
        self.emit(f"if type({a}) is _nd and {a}.ndim == 2 and {a}.dtype == {self.name('_D', dt)}:")
        self.emit(f"{r} = {a}[None]", 2)
        self.emit(f"elif type({a}) is {self.name('_S', dt.type)}:")
        self.emit(f"{r} = {a}", 2)
        self.emit("else:")
        self.emit(f"{r} = _conv({a}, {self.name('_T', src)}, {self.name('_T', dst)})", 2)
        self.saved += 1
        return r

    def int_add(self, e: Binary) -> str:
        """``iop_run``: the sum, its dtype fixed, noted as a run when an operand is a run
        shifted by a uniform amount (``tmp[lid + 1]`` stays a slice)."""
        a = self.expr(e.left, True)
        b = self.expr(e.right, True)
        dt = ops.dtype_of(e.type)
        dtn = self.name("_D", dt)
        eln = self.name("_E", ops.element_of(e.type))
        r = self.tmp()
        plus = e.op == "+"
        self.emit(f"{r} = {a} + {b}" if plus else f"{r} = {a} - {b}")
        self.emit(f"if getattr({r}, 'dtype', None) != {dtn}: {r} = _fix({r}, {eln})")
        # (a constant, ``_K``, is a NumPy scalar: the tests on its type are known here)
        ka, kb = a.startswith("_K"), b.startswith("_K")
        sign = "+" if plus else "-"
        if not ka:
            self.emit(f"if type({a}) is _nd:")
            self.emit(f"if {a}.ndim" + ("" if kb else f" and type({b}) is not _nd") + ":", 2)
            self.emit(f"fs = batch.run_of({a})", 3)
            self.emit(f"if fs is not None: _shift(fr, {r}, fs {sign} int({b}))", 3)
        if plus and not kb:
            self.emit(("if" if ka else "elif") + f" type({b}) is _nd and {b}.ndim:")
            self.emit(f"fs = batch.run_of({b})", 2)
            self.emit(f"if fs is not None: _shift(fr, {r}, fs + int({a}))", 2)
        self.inline += 1
        self.saved += 1
        return r

    def compare(self, e: Compare, operand: bool) -> str:
        if isinstance(e.left.type, PointerType) or isinstance(e.type, VectorType):
            return self.closure(e, operand)
        a = self.expr(e.left, True)
        b = self.expr(e.right, True)
        r = self.tmp()
        self.emit(f"{r} = {self.name('_U', ops._CMP[e.op])}({a}, {b})")
        self.inline += 1
        self.saved += 1
        return r

    def select(self, e: Select, operand: bool) -> str:
        """``x_Select``'s blend (both sides safe): a uniform condition evaluates one side
        (its closure), a lane-varying one both, in order, and ``np.where``."""
        if not (
            self.exprs.safe(e.if_true)
            and self.exprs.safe(e.if_false)
            and not isinstance(e.type, (StructType, PointerType))
        ):
            if isinstance(e.type, ScalarType) and selectgen.speculable(self, e, mem_site):
                return selectgen.emit_select(self, e, mem_site)  # (loads on its sides)
            return self.closure(e, operand)
        c = self.cond_value(e.cond)
        r = self.tmp()
        self.emit(f"if not isinstance({c}, _nd) or {c}.ndim == 0:")
        if self.bound is None:
            ct = self.name("_C", self.exprs.expr(e.if_true))
            cf = self.name("_C", self.exprs.expr(e.if_false))
            self.emit(f"{r} = {ct}(fr) if {c} else {cf}(fr)", 2)
        else:  # (inlined: the side's code, not its closure)
            self.emit(f"if {c}:", 2)
            base = len(self.lines)
            self.emit(f"{r} = {self.expr(e.if_true, False)}")
            self.indent_from(base, 2)
            self.emit("else:", 2)
            base = len(self.lines)
            self.emit(f"{r} = {self.expr(e.if_false, False)}")
            self.indent_from(base, 2)
        self.emit("else:")
        base = len(self.lines)
        a = self.expr(e.if_true, False)
        b = self.expr(e.if_false, False)
        cc = f"{c}[None]" if isinstance(e.type, VectorType) else c
        self.emit(f"{r} = _where({cc}, {a}, {b})")
        self.indent_from(base)
        self.inline += 1
        self.saved += 1
        return r

    def cond_value(self, e: Expr) -> str:
        """Emit the bool lane value of condition ``e`` (``ExprCompiler.cond``)."""
        if e.type is C.bool_:
            return self.expr(e, False)
        if self.bound is not None:
            raise NoInline
        c = self.tmp()
        self.emit(f"{c} = {self.name('_C', self.exprs.cond(e))}(fr)")
        return c

    def cast(self, e: Cast, operand: bool) -> str:
        """``x_Cast``: the value itself (same type, pointers), ``_fast_cast`` (scalar
        conversions), the broadcast of a scalar array to a vector of its own element type
        (``ops.convert``'s), else ``ops.convert``."""
        src, dst = e.value.type, e.type
        if isinstance(src, ArrayType):
            return self.closure(e, operand)
        if isinstance(dst, PointerType) or src is dst:
            return self.expr(e.value, False)
        if isinstance(src, ScalarType) and isinstance(dst, ScalarType):
            if dst.is_bool or src.is_bool or (src.is_float and not dst.is_float):
                return self.closure(e, operand)
            a = self.expr(e.value, False)
            dtn = self.name("_D", ops.dtype_of(dst))
            r = self.tmp()
            self.emit(f"{r} = {a}.astype({dtn})")
            index = isinstance(e.value, CallBuiltin) and e.value.builtin.index
            if not (src.is_float or dst.is_float) and (index or dst.bits >= src.bits):
                self.emit(f"if isinstance({a}, _nd) and {a}.ndim:")
                self.emit(f"fs = batch.run_of({a})", 2)
                self.emit(f"if fs is not None: batch.note_run({r}, fs)", 2)
            self.saved += 1
            return r
        if _widens(src, dst):
            assert isinstance(dst, VectorType)
            a = self.expr(e.value, False)
            dtn = self.name("_D", ops.dtype_of(dst))
            r = self.tmp()
            self.emit(f"if type({a}) is _nd and {a}.ndim == 2 and {a}.dtype == {dtn}:")
            self.emit(f"{r} = _bcast({a}, ({dst.n}, *{a}.shape))", 2)
            self.emit("else:")
            self.emit(f"{r} = _conv({a}, {self.name('_T', src)}, {self.name('_T', dst)})", 2)
            self.saved += 1
            return r
        return self.closure(e, operand)

    def load(self, e: Index, site: str, operand: bool) -> str:
        got = self.address(e)
        if got is None:
            return self.closure(e, operand)
        p, a, dt = got
        copy = not operand
        fb = self.name("_C", self.exprs.operand(e) if operand else self.exprs.expr(e))
        loc = self.name("_L", e.loc)
        t = self.tmp()
        self.inline += 1
        self.saved += 1
        if site == "global":
            # ``Memory.load``/``_load_direct`` of a flat buffer of scalars no checker watches
            hi = int(np.iinfo(dt).max)
            dtn = self.name("_D", ops.dtype_of(e.type))
            self.emit(
                f"if {p} is not None and {p}.direct and "
                f"({p}.shadow is None or not batch.watch) and {p}.data.dtype == {dtn} "
                f"and {p}.data.ndim == 1:"
            )
            self.emit(f"if type({a}) is int and 0 <= {a} < {p}.count and {a} <= {hi}:", 2)
            self.emit(f"{t} = {p}.data[{a}]", 3)
            self.emit(
                f"elif {a} is not None and type({a}) is tuple and {a}[1] == 1 and {a}[0] >= 0 "
                f"and {a}[0] + {a}[3] <= {p}.count and {a}[0] + {a}[3] - 1 <= {hi}:",
                2,
            )
            view = f"{p}.data[{a}[0]:{a}[0] + {a}[3]].reshape({a}[2])"
            self.emit(f"{t} = {view}" + (".copy()" if copy else ""), 3)
            self.emit("else:", 2)
            self.emit(f"{t} = {fb}(fr)", 3)
            self.emit("else:")
            self._generic_load(p, a, dt, loc, copy, fb, t, 2)
        else:
            self._local_load(p, a, dt, e, copy, t)
            self.emit(f"if {t} is None:")
            self._generic_load(p, a, dt, loc, copy, fb, t, 2)
        return t

    def _local_load(self, p: str, a: str, dt: Any, e: Index, copy: bool, t: str) -> None:
        """Emit ``LocalMem.load`` of a run of indices that is the same in every group, in
        bounds, of a memory no checker watches (``Memory.load``, ``LocalMem._run_where``,
        ``Where.gather`` of its column slice, step any), into ``t``; else ``t`` is None."""
        hi = int(np.iinfo(dt).max)
        dtn = self.name("_D", ops.dtype_of(e.type))
        lm = self.name("_LM", LocalMem)
        self.emit(f"{t} = None")
        self.emit(
            f"if type({p}) is {lm} and type({a}) is tuple and {a}[1] and "
            f"({p}.shadow is None or not batch.watch) and {p}.data.ndim == 2 and "
            f"{p}.data.dtype == {dtn}:"
        )
        self.emit("gs = fr.gslot; sh = " + f"{a}[2]; lst = {a}[0] + {a}[1] * ({a}[3] - 1)", 2)
        self.emit(
            "if len(sh) == 2 and sh[0] == 1 and type(gs) is _nd and gs.ndim == 2 and "
            f"gs.shape[1] == 1 and 0 <= {a}[0] < {p}.count and 0 <= lst < {p}.count and "
            f"{a}[0] <= {hi} and lst <= {hi}:",
            2,
        )
        self.emit(f"st = {a}[1] if {a}[3] > 1 else 1; stp = lst + st  # (``Run``'s step)", 3)
        self.emit(f"sl = slice({a}[0], stp if stp >= 0 else None, st)", 3)
        self.emit(f"if gs.shape[0] == {p}.data.shape[0]:", 3)
        self.emit(f"{t} = {p}.data[:, sl]" + (".copy()" if copy else ""), 4)
        self.emit("else:", 3)
        self.emit(f"{t} = {p}.data[gs[:, 0], sl]", 4)

    def _generic_load(
        self, p: str, a: str, dt: Any, loc: str, copy: bool, fb: str, t: str, ind: int
    ) -> None:
        base = len(self.lines)
        x = self.addr_value(a, dt)
        self.indent_from(base, ind - 1)
        self.emit(f"if {p} is not None and {x} is not None:", ind)
        self.emit(f"{t} = {p}.load(fr, {x}, {loc}, {copy})", ind + 1)
        self.emit("else:", ind)
        self.emit(f"{t} = {fb}(fr)", ind + 1)

    def finish(self, head: str, where: Any) -> Any:
        """The generated function ``head`` (``def f(fr):``) with the emitted lines."""
        src = "\n".join([head, "    env = fr.env", "    batch = fr.batch", *self.lines])
        ns = dict(self.ns)
        exec(compile(src, f"<clpy_sim.exprgen {where}>", "exec"), ns)
        fn = ns[head[4 : head.index("(")]]
        fn.__doc__ = src  # (for debugging: the generated source)
        return fn


def compile_expr(e: Expr, exprs: Any, operand: bool = False) -> Any:
    """One generated function computing what ``exprs.expr(e)`` (``exprs.operand(e)`` with
    ``operand``) computes, or None where that gains nothing (a leaf, a call, fewer than two
    closure calls saved, a very large tree)."""
    if not ENABLED or isinstance(e, (Const, NamedConst, VarRef)):
        return None
    g = ExprGen(exprs)
    r = g.expr(e, operand)
    if g.saved < 2 or len(g.lines) > _MAX_LINES:
        return None
    g.emit(f"return {r}")
    return g.finish("def expr(fr):", e.loc)


__all__ = ["ENABLED", "ExprGen", "compile_expr"]
