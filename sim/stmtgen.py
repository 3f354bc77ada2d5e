"""Assignments compiled to one generated Python function each (statement fusion).

The closures of ``sim/exprs.py`` and ``sim/lvalues.py`` cost several Python calls per IR node:
a load ``x[i * n + j]`` inside an arithmetic operand goes through the operand closure, the
reference, the pointer's variable, the exact index and its wrapper, the load closure and
``Memory.load`` (about ten calls, ~60 per trip of Gram-Schmidt's one-statement loop; the
profile of the real programs' loops showed these layers, not the NumPy work, as the cost of
small frames). ``compile_assign`` turns an assignment whose target is a variable, an element
of a global buffer or of a 1-D local array into straight-line code with those layers inlined:

- float arithmetic (``+ - * /``) calls its ufunc inline, with the same dtype fix-up as the
  closure (``ExprCompiler.x_Binary``'s ``fuf``);
- a load through a pointer variable or a local array reads its index exactly
  (``sim/affine_gen.py``); from a flat buffer no checker watches it reads the element (a
  uniform index) or the slice (a run of step 1) itself, as ``Memory.load`` does, and otherwise
  calls ``Memory.load`` with the index the closure would pass (a scalar or a ``Run``);
- anything else in the expression is its compiled closure, called in the same order;
- the store is ``Memory.store`` with that index, or, for a run of step 1 of a flat buffer no
  checker watches, the slice assignment ``Memory.store`` does (``x[i] op= v`` updated in place
  as ``fastpaths.aug_global`` does).

Where the index is not exact at run time, or the memory is not one of those kinds, the whole
statement runs its general closure before anything is evaluated (index evaluation has no side
effects), so every checker sees the same accesses in the same order. Values, dtypes, shapes
and the stores counted for the no-progress checker are those of the general path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from clpy.ir.nodes import Assign, Binary, Const, Declare, Expr, Index, NamedConst, VarRef
from clpy.ir.program_vars import ProgramVar
from clpy.types.core import AddressSpace, ArrayType, PointerType, ScalarType, VectorType
from clpy_sim import ops
from clpy_sim.affine import Run
from clpy_sim.affine_gen import compile_affine
from clpy_sim.fastpaths import INPLACE
from clpy_sim.frame import Frame, exclusive
from clpy_sim.memory import GlobalMem, Memory

ENABLED = True  # read when a plan is compiled (tests compare plans made with it off)

_FLOAT_UF = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide}


def _float(t: Any) -> bool:
    return isinstance(t, ScalarType) and t.is_float


def _floatv(t: Any) -> bool:
    """A float scalar or vector (the Binary compiler's ``fuf``: one ufunc over the lanes,
    the components on the leading axis)."""
    return _float(t) or (isinstance(t, VectorType) and t.elem.is_float)


def _int(t: Any) -> bool:
    return isinstance(t, ScalarType) and not t.is_float and not t.is_bool


def _mem_site(e: Expr) -> str | None:
    """``global`` for an element of a pointer variable, ``local`` for one of a 1-D local array
    variable, None for other lvalues."""
    if not isinstance(e, Index) or not isinstance(e.type, ScalarType):
        return None
    base = e.base
    if not isinstance(base, VarRef) or isinstance(base.var, ProgramVar):
        return None
    if not _int(e.index.type):
        return None
    bt = base.type
    if isinstance(bt, PointerType) and bt.space in (AddressSpace.GLOBAL, AddressSpace.CONSTANT):
        return "global"
    if isinstance(bt, ArrayType) and bt.space is AddressSpace.LOCAL and len(bt.shape) == 1:
        return "local"
    return None


class _Gen:
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
        }
        self.k = 0
        self.inline = 0  # nodes made inline (a statement with none gains nothing)

    def name(self, prefix: str, obj: Any) -> str:
        n = f"{prefix}{len(self.ns)}"
        self.ns[n] = obj
        return n

    def tmp(self) -> str:
        self.k += 1
        return f"t{self.k}"

    def emit(self, s: str, ind: int = 1) -> None:
        self.lines.append("    " * ind + s)

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
        self.emit(f"{a} = {self.name('_A', aff)}(fr)")
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
        fn = self.exprs.operand(e) if operand else self.exprs.expr(e)
        t = self.tmp()
        self.emit(f"{t} = {self.name('_C', fn)}(fr)")
        return t

    def expr(self, e: Expr, operand: bool) -> str:
        """Emit ``e``'s value into a temporary (``operand``: consumed at once, loads may be
        views); returns its name."""
        if isinstance(e, (Const, NamedConst)) and isinstance(e.type, ScalarType):
            return self.name("_K", ops.const_value(e.value, e.type))
        if (
            isinstance(e, VarRef)
            and isinstance(e.type, (ScalarType, VectorType))
            and not isinstance(e.var, ProgramVar)
        ):
            vn = self.name("_V", e.var)
            t = self.tmp()
            self.emit(f"{t} = env[{vn}] if {vn} in env else fr.get({vn})")
            return t
        if isinstance(e, Binary) and _floatv(e.type) and e.op in _FLOAT_UF:
            if not (_floatv(e.left.type) and _floatv(e.right.type)):
                return self.closure(e, operand)
            a = self.expr(e.left, True)
            b = self.expr(e.right, True)
            uf = self.name("_U", _FLOAT_UF[e.op])
            dt = ops.dtype_of(e.type)
            dtn = self.name("_D", dt)
            eln = self.name("_E", ops.element_of(e.type))
            t = self.tmp()
            self.emit(f"{t} = {uf}({a}, {b})")
            self.emit(f"if getattr({t}, 'dtype', None) != {dtn}: {t} = _fix({t}, {eln})")
            self.inline += 1
            return t
        site = _mem_site(e) if isinstance(e, Index) else None
        if site is not None:
            assert isinstance(e, Index)
            return self.load(e, site, operand)
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
            self._generic_load(p, a, dt, loc, copy, fb, t, 1)
        return t

    def _generic_load(
        self, p: str, a: str, dt: Any, loc: str, copy: bool, fb: str, t: str, ind: int
    ) -> None:
        base = len(self.lines)
        x = self.addr_value(a, dt)
        # re-indent what addr_value emitted
        self.lines[base:] = ["    " * (ind - 1) + ln for ln in self.lines[base:]]
        self.emit(f"if {p} is not None and {x} is not None:", ind)
        self.emit(f"{t} = {p}.load(fr, {x}, {loc}, {copy})", ind + 1)
        self.emit("else:", ind)
        self.emit(f"{t} = {fb}(fr)", ind + 1)


def compile_assign(s: Assign, exprs: Any, general: Callable[[Frame], Any]) -> Any:
    """The generated function of assignment ``s`` (see the module docstring), falling back to
    ``general`` (its compiled closure); None when ``s`` is not one it makes faster."""
    if not ENABLED:
        return None
    target, op, value = s.target, s.op, s.value
    t = target.type
    if value.type is not t or not (
        isinstance(t, ScalarType) or (isinstance(target, VarRef) and _floatv(t))
    ):
        return None
    g = _Gen(exprs)
    gen = g.name("_G", general)
    if isinstance(target, VarRef):
        if isinstance(target.var, ProgramVar) or not _floatv(t):
            return None  # (integer variables keep their runs: sim/affine.py's value_fn)
        vn = g.name("_V", target.var)
        if op is None:
            v = g.expr(value, False)
        elif op in _FLOAT_UF:
            old = g.tmp()
            g.emit(f"{old} = env[{vn}] if {vn} in env else fr.get({vn})")
            dtn = g.name("_D", ops.dtype_of(t))
            if op in INPLACE:
                # ``s_Assign``'s ``aug_inplace``: an array nothing else refers to is updated in
                # place (a loop's accumulator over big frames allocates nothing per trip)
                g.emit(
                    f"if type({old}) is _nd and {old}.dtype == {dtn} and {old}.flags.writeable "
                    f"and {old}.shape[-2:] == fr.shape and "
                    f"_excl({old}, 1 if fr.views.get({vn}) is {old} else 0):"
                )
                base = len(g.lines)
                y = g.expr(value, True)
                g.lines[base:] = ["    " + ln for ln in g.lines[base:]]
                g.emit(f"if _ndim({y}) <= {old}.ndim:", 2)
                g.emit(f"batch.forget_run({old})", 3)
                g.emit(f"if {old}.base is not None: batch.forget_run({old}.base)", 3)
                g.emit(f"_uip({g.name('_U', INPLACE[op])}, {old}, {y})", 3)
                g.emit("return None", 3)
                g.emit(f"env[{vn}] = _bin({op!r}, {g.name('_T', t)}, {old}, {y})", 2)
                g.emit("return None", 2)
            y = g.expr(value, True)
            v = g.tmp()
            g.emit(f"{v} = {g.name('_U', _FLOAT_UF[op])}({old}, {y})")
            eln = g.name("_E", ops.element_of(t))
            g.emit(f"if getattr({v}, 'dtype', None) != {dtn}: {v} = _fix({v}, {eln})")
            g.inline += 1
        else:
            return None
        g.emit(f"env[{vn}] = {v}")
        return _finish(g, s)
    site = _mem_site(target)
    if site is None:
        return None
    assert isinstance(target, Index)
    if op is not None and not (
        (_float(t) and op in _FLOAT_UF) or (op in INPLACE and site == "global")
    ):
        return None
    got = g.address(target)
    if got is None:
        return None
    p, a, dt = got
    loc = g.name("_L", target.loc)  # (the lvalue's, as the closures report it)
    dtn = g.name("_D", ops.dtype_of(t))
    hi = int(np.iinfo(dt).max)
    if site == "global" and op in INPLACE:
        # ``fastpaths.aug_global``: a run of step 1 of a flat buffer no checker watches,
        # updated in place
        g.emit(
            f"if {p} is not None and type({a}) is tuple and {a}[1] == 1 and {p}.direct and "
            f"({p}.shadow is None or not batch.watch) and not batch.watching and "
            f"{a}[2] == fr.shape and {p}.data.dtype == {dtn} and {a}[0] >= 0 and "
            f"{a}[0] + {a}[3] <= {p}.count and {a}[0] + {a}[3] - 1 <= {hi} and "
            f"{p}.data.ndim == 1:"
        )
        g.emit(f"row = {p}.data[{a}[0]:{a}[0] + {a}[3]].reshape({a}[2])", 2)
        base = len(g.lines)
        y = g.expr(value, True)
        g.lines[base:] = ["    " + ln for ln in g.lines[base:]]
        uf = g.name("_U", INPLACE[op])
        g.emit(f"if getattr({y}, 'dtype', None) == {dtn}:", 2)
        g.emit("batch.stores += 1", 3)
        g.emit(f"{uf}(row, {y}, out=row)", 3)
        g.emit("return None", 3)
        g.emit(f"r = {uf}(row, {y})", 2)
        g.emit(f"if getattr(r, 'dtype', None) != {dtn}: r = _fix(r, {g.name('_E', t)})", 2)
        g.emit(f"{p}.store(fr, _Run({a}[0], 1, {a}[2], {a}[3], {g.name('_D', dt)}), r, {loc})", 2)
        g.emit("return None", 2)
        if not _float(t):
            g.emit(f"return {gen}(fr)")
            g.inline += 1
            return _finish(g, s)
    x = g.addr_value(a, dt)
    g.emit(f"if {p} is None or {x} is None: return {gen}(fr)")
    if op is None:
        v = g.expr(value, True)  # stored at once: a view is enough (``s_Assign``)
        if site == "global":
            # ``Memory.store`` of a flat buffer without a shadow: a run of step 1 is a slice
            # assignment, a uniform index one element (the last lane's value)
            g.emit(
                f"if type({p}) is _GM and {p}.shadow is None and not batch.watching "
                f"and {p}.data.dtype == {dtn} and {p}.data.ndim == 1:"
            )
            g.emit(f"if type({x}) is _Run:", 2)
            g.emit(
                f"if {x}.step == 1 and {x}.first >= 0 and {x}.first + {x}.n <= {p}.count "
                f"and {x}.shape == fr.shape:",
                3,
            )
            g.emit("batch.stores += 1", 4)
            g.emit(f"{p}.data[{x}.first:{x}.first + {x}.n].reshape({x}.shape)[...] = {v}", 4)
            g.emit("return None", 4)
            g.emit(f"elif 0 <= {a} < {p}.count:", 2)
            g.emit("batch.stores += 1", 3)
            g.emit(f"if type({v}) is _nd and {v}.ndim: {v} = {v}[(-1,) * {v}.ndim]", 3)
            g.emit(f"{p}.data[{a}] = {v}", 3)
            g.emit("return None", 3)
        g.emit(f"{p}.store(fr, {x}, {v}, {loc})")
        g.inline += 1
        return _finish(g, s)
    # ``aug_at``: load (a view), ``loaded op value`` as the Binary compiler computes it, store
    old = g.tmp()
    g.emit(f"{old} = {p}.load(fr, {x}, {loc}, False)")
    y = g.expr(value, True)
    r = g.tmp()
    g.emit(f"{r} = {g.name('_U', _FLOAT_UF[op])}({old}, {y})")
    g.emit(f"if getattr({r}, 'dtype', None) != {dtn}: {r} = _fix({r}, {g.name('_E', t)})")
    g.emit(f"{p}.store(fr, {x}, {r}, {loc})")
    g.inline += 1
    return _finish(g, s)


def compile_declare(s: Declare, exprs: Any, general: Callable[[Frame], Any]) -> Any:
    """``compile_assign`` of a float (scalar or vector) variable's initialisation, which sets
    the variable as ``v = init`` does (``s_Declare``'s ``decl``)."""
    if s.init is None or not _floatv(s.var.type) or isinstance(s.var, ProgramVar):
        return None
    target = VarRef(s.var.type, s.loc, s.var)
    return compile_assign(Assign(s.loc, target, s.init), exprs, general)


def _finish(g: _Gen, s: Assign) -> Any:
    if g.inline < 2:
        return None  # one inline node: the closures cost about the same
    src = "\n".join(["def stmt(fr):", "    env = fr.env", "    batch = fr.batch", *g.lines])
    ns = dict(g.ns)
    exec(compile(src, f"<clpy_sim.stmtgen {s.loc}>", "exec"), ns)
    fn = ns["stmt"]
    fn.__doc__ = src
    return fn


__all__ = ["compile_assign", "compile_declare"]
