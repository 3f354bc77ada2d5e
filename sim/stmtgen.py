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

The code writer, and the expression kinds inlined besides these, are ``sim/exprgen.py``'s.
Where the index is not exact at run time, or the memory is not one of those kinds, the whole
statement runs its general closure before anything is evaluated (index evaluation has no side
effects), so every checker sees the same accesses in the same order. Values, dtypes, shapes
and the stores counted for the no-progress checker are those of the general path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from clpy.ir.nodes import Assign, Declare, Index, VarRef
from clpy.ir.program_vars import ProgramVar
from clpy.types.core import ScalarType
from clpy_sim import ops
from clpy_sim.exprgen import FLOAT_UF as _FLOAT_UF
from clpy_sim.exprgen import ExprGen
from clpy_sim.exprgen import floatv as _floatv
from clpy_sim.exprgen import is_float as _float
from clpy_sim.exprgen import mem_site as _mem_site
from clpy_sim.fastpaths import INPLACE
from clpy_sim.frame import Frame
from clpy_sim.memory import LocalMem
from clpy_sim.values import full

ENABLED = True  # read when a plan is compiled (tests compare plans made with it off)


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
    g = ExprGen(exprs)
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
    g.saved += 2  # (the closures' reference and store)
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
        if v.startswith("_K"):  # a constant: a local name (the uniform store rebinds it)
            v, k = g.tmp(), v
            g.emit(f"{v} = {k}")
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
        else:
            _local_store(g, p, x, v, dtn)
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


def _local_store(g: ExprGen, p: str, x: str, v: str, dtn: str) -> None:
    """Emit ``LocalMem.store`` of a run of indices that is the same in every group, in bounds,
    into a memory no checker watches, outside a watched loop (``Memory.store``,
    ``LocalMem._run_where``, ``_put`` and ``Where.put`` of its column slice, step any): the
    slice assignment, then ``return``. (``_adopt`` takes only slices without a step, which a
    run's slice never is; a run over the whole region is left to ``store`` all the same.)"""
    g.ns["_LM"] = LocalMem
    g.ns["_full"] = full
    g.emit(
        f"if type({p}) is _LM and type({x}) is _Run and not batch.watching and "
        f"({p}.shadow is None or not batch.watch) and {p}.data.ndim == 2 and "
        f"{p}.data.dtype == {dtn}:"
    )
    g.emit(f"gs = fr.gslot; sh = {x}.shape; lst = {x}.last", 2)
    g.emit(
        "if len(sh) == 2 and sh[0] == 1 and type(gs) is _nd and gs.ndim == 2 and "
        f"gs.shape[1] == 1 and 0 <= {x}.first < {p}.count and 0 <= lst < {p}.count and "
        f"not ({x}.first == 0 and {x}.n == {p}.count):",
        2,
    )
    g.emit(f"stp = lst + {x}.step", 3)
    g.emit(f"sl = slice({x}.first, stp if stp >= 0 else None, {x}.step)", 3)
    g.emit("batch.stores += 1", 3)
    g.emit(f"if {p}.shared: {p}._unshare()", 3)
    g.emit(f"rows = slice(None) if gs.shape[0] == {p}.data.shape[0] else gs[:, 0]", 3)
    g.emit(f"{p}.data[rows, sl] = _full({v}, fr.shape)", 3)
    g.emit("return None", 3)


def compile_declare(s: Declare, exprs: Any, general: Callable[[Frame], Any]) -> Any:
    """``compile_assign`` of a float (scalar or vector) variable's initialisation, which sets
    the variable as ``v = init`` does (``s_Declare``'s ``decl``)."""
    if s.init is None or not _floatv(s.var.type) or isinstance(s.var, ProgramVar):
        return None
    target = VarRef(s.var.type, s.loc, s.var)
    return compile_assign(Assign(s.loc, target, s.init), exprs, general)


def _finish(g: ExprGen, s: Assign) -> Any:
    if g.inline < 2 and g.saved < 2:
        return None  # one inline node: the closures cost about the same
    return g.finish("def stmt(fr):", s.loc)


__all__ = ["compile_assign", "compile_declare"]
