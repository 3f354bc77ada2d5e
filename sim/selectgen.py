"""``c ? a[i] : b[j]`` with memory loads on its sides, evaluated on every lane and blended.

``x_Select`` runs a side that may fault (a load) only on the lanes that take it: two
compacted sub-frames, every variable the sides read gathered into each, and two scatters into
the result (``frame.select_on``). stencil3d's halo reads (``a0[here + nx + i] if y_h_bound
else sh[sh_id + 2 * TX]``, three a trip on 16k lanes) spent ~60% of the program there. When
no checker watches the memories read (no shadow, or the batch unwatched), a load has no effect
but its value, so both sides can be read on every lane and blended with ``np.where``, as the
blend of safe sides is (``sim/exprgen.py``). A lane that does not take a side may index out of
bounds there: its index is clamped to element 0 (what ``Memory._check`` reads for an
out-of-bounds lane with the bounds checker off), and its value discarded. With the bounds
checker on an out-of-bounds index anywhere is left to the compacted path, which reports the
lanes that do take the side; so are a side whose memory is watched, a pointer that is not a
plain ``(memory, 0)``, and values whose dtype is not the expression's (the compacted path's
result dtype is then NumPy's promotion). A condition the same for every lane (or true or
false on all lanes) runs one side on the whole frame, as ``select_on`` does.

Same values: a lane that takes a side reads the element the compacted path reads (its index
does not depend on the other lanes), and ``np.where`` keeps exactly those lanes' values; the
result is a new array of the frame's shape and the expression's dtype, as the scatter makes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from clpy.ir.nodes import Expr, Index, Select
from clpy.types.core import PointerType
from clpy_sim import ops
from clpy_sim.affine import Run, index_fn
from clpy_sim.frame import select_on

ENABLED = True  # read when a plan is compiled (tests compare plans made with it off)


def _full(r: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """``r`` as a new array of the frame's shape (the compacted path's result is one)."""
    out = np.empty(shape, dtype=r.dtype)
    out[...] = r
    return out


def speculable(g: Any, e: Select, mem_site: Any) -> bool:
    """Both sides of ``e`` are safe or a load (``mem_site``) with a safe index, at least one
    a load, and ``e`` a scalar."""
    if not ENABLED:
        return False

    def side(x: Expr) -> bool:
        if g.exprs.safe(x):
            return True
        return isinstance(x, Index) and mem_site(x) is not None and g.exprs.safe(x.index)

    return side(e.if_true) and side(e.if_false)


def emit_select(g: Any, e: Select, mem_site: Any) -> str:
    """Emit ``e`` (see the module docstring) into ExprGen ``g``; returns the result's name."""
    c = g.cond_value(e.cond)
    T, F, tmpl = g.exprs.select_parts(e)
    ct, cf = g.name("_C", T), g.name("_C", F)
    args = f"fr, {c}, {ct}, {cf}, {g.name('_Tm', tmpl)}"
    sel = g.name("_sel", select_on)
    dtn = g.name("_D", ops.dtype_of(e.type))
    r = g.tmp()
    g.emit(f"if not isinstance({c}, _nd) or {c}.ndim == 0:")
    g.emit(f"{r} = {ct}(fr) if {c} else {cf}(fr)", 2)
    g.emit("else:")
    g.emit(f"nz = _cnz({c})", 2)
    g.emit(f"if nz == 0 or nz == {c}.size:", 2)
    g.emit(f"{r} = {sel}({args})", 3)
    g.emit("else:", 2)
    g.emit(f"{r} = None", 3)
    base = len(g.lines)
    vals = []
    for side in (e.if_true, e.if_false):
        if g.exprs.safe(side):
            vals.append(g.expr(side, False))
        else:
            assert isinstance(side, Index)  # (``speculable``)
            vals.append(_load(g, side))
    a, b = vals
    g.emit(
        f"if {a} is not None and {b} is not None and getattr({a}, 'dtype', None) == {dtn} "
        f"and getattr({b}, 'dtype', None) == {dtn}:"
    )
    g.emit(f"{r} = _where({c}, {a}, {b})", 2)
    g.emit(f"if {r}.shape != fr.shape: {r} = {g.name('_full', _full)}({r}, fr.shape)", 2)
    g.emit(f"if {r} is None: {r} = {sel}({args})")
    g.indent_from(base, 2)
    g.inline += 1
    g.saved += 1
    return r


def _load(g: Any, x: Index) -> str:
    """Emit the load ``x`` on every lane, indices out of bounds clamped to 0 (None when the
    memory is watched or, with the bounds checker on, an index is out of bounds)."""
    bounds = "bounds" in g.exprs.checks
    var = x.base.var  # type: ignore[attr-defined]
    vn = g.name("_V", var)
    p, i, v = g.tmp(), g.tmp(), g.tmp()
    g.emit(f"{p} = env[{vn}] if {vn} in env else fr.get({vn})")
    if isinstance(x.base.type, PointerType):  # (``pref``: a plain (memory, 0) pointer)
        g.emit(
            f"{p} = {p}.mem if type({p}.off) is _i64 and {p}.off == 0 "
            f"and isinstance({p}.mem, _Mem) else None"
        )
    else:
        g.emit(f"{p} = {p}.mem if isinstance({p}.mem, _Mem) else None")
    g.emit(f"{v} = None")
    g.emit(f"if {p} is not None and ({p}.shadow is None or not batch.watch):")
    g.emit(f"{i} = {g.name('_X', index_fn(x.index, g.exprs.expr))}(fr)", 2)
    g.emit(f"if type({i}) is _Run and not 0 <= {i}.first < {p}.count > {i}.last >= 0:", 2)
    g.emit(f"{i} = {i}.array(fr)", 3)
    g.emit(f"if type({i}) is _nd:", 2)
    g.emit(f"if _amin({i}, axis=None) < 0 or _amax({i}, axis=None) >= {p}.count:", 3)
    if bounds:
        g.emit(f"{p} = None", 4)
    else:
        g.emit(f"{i} = _where(({i} < 0) | ({i} >= {p}.count), 0, {i})", 4)
    g.emit(f"elif type({i}) is not _Run and not 0 <= {i} < {p}.count:", 2)
    if bounds:
        g.emit(f"{p} = None", 3)
    else:
        g.emit(f"{i} = type({i})(0)", 3)
    g.emit(f"if {p} is not None:", 2)
    g.emit(f"{v} = {p}.load(fr, {i}, {g.name('_L', x.loc)}, False)", 3)
    return v


NS = {
    "_cnz": np.count_nonzero,
    "_amin": np.minimum.reduce,
    "_amax": np.maximum.reduce,
    "_Run": Run,
}

__all__ = ["ENABLED", "NS", "emit_select", "speculable"]
