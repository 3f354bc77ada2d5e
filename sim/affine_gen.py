"""Exact index evaluation (``sim/affine.py``) compiled to one generated Python function per
index expression, instead of a tree of closures (one call, one tuple per node).

The generated function computes what ``affine._compile``'s closure tree computes, with the
same contract: an ``int`` for a uniform index, ``(first, step, shape, n)`` for a run of lane
values, ``None`` where exact evaluation does not apply. Every node holds a pair of Python
ints ``(f, s)``: a uniform value has ``s == 0``, and the lanes' values are ``f + s * k``
(k = 0 .. n-1 in C order over the one lane shape of every run leaf). The rules are those of
the closure tree:

- a leaf is a uniform int (a NumPy scalar of the type's own dtype) or an array of that dtype
  noted as a ramp (``Batch.ramp_of``); anything else gives ``None``;
- run leaves of different shapes give ``None`` (the closure tree combines every leaf through
  ``+``, ``-``, ``*`` or a conversion, and each of those gives ``None`` for two runs of
  different shapes);
- a product of two lane-varying values gives ``None`` (``run * run`` is not a run; the
  closure tree refuses it as soon as both operands are runs, whatever their steps);
- a conversion gives ``None`` unless the value (each end of a run) lies in the range that
  both types share.

Why the same: ``(f1 + s1 k) + (f2 + s2 k) = (f1 + f2) + (s1 + s2) k``; with ``s1 s2 = 0`` the
product is ``f1 f2 + (f1 s2 + s1 f2) k``; every node's result is a uniform int or a run exactly
when one of its leaves is a run, which the generated code tracks per node (``r<k>``). The
profile of the real programs (LU, NW, Gram-Schmidt: index arithmetic a third of the time,
~6 Python calls per index) is why: one call per index instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from clpy.ir.nodes import Binary, CallBuiltin, Cast, Const, Expr, NamedConst, VarRef
from clpy.ir.program_vars import ProgramVar
from clpy.types.core import ScalarType
from clpy_sim import ops
from clpy_sim.frame import Frame

AffFn = Callable[[Frame], Any]


def _int_type(t: Any) -> bool:
    return isinstance(t, ScalarType) and not t.is_float and not t.is_bool


def _bounds(t: Any) -> tuple[int, int]:
    info = np.iinfo(ops.dtype_of(t))
    return int(info.min), int(info.max)


class _Gen:
    def __init__(self, expr: Callable[[Expr], Callable[[Frame], Any]]) -> None:
        self.expr = expr
        self.lines: list[str] = []
        self.ns: dict[str, Any] = {"_nd": np.ndarray}
        self.k = 0
        # a variable read once per evaluation: its (f, s, is-run) names
        self.var_slots: dict[Any, tuple[str, str, str]] = {}

    def name(self, prefix: str, obj: Any) -> str:
        n = f"{prefix}{len(self.ns)}"
        self.ns[n] = obj
        return n

    def fresh(self) -> int:
        self.k += 1
        return self.k

    def emit(self, s: str) -> None:
        self.lines.append("    " + s)

    def leaf(self, read: str, t: Any) -> tuple[str, str, str]:
        """A leaf read by the Python expression ``read``: its (f, s, is-run) names."""
        k = self.fresh()
        dt = ops.dtype_of(t)
        sct = self.name("_S", dt.type)
        dtn = self.name("_D", dt)
        self.emit(f"v{k} = {read}")
        self.emit(f"if type(v{k}) is {sct}:")
        self.emit(f"    f{k} = int(v{k}); s{k} = 0; r{k} = False")
        self.emit(f"elif type(v{k}) is _nd and v{k}.ndim and v{k}.dtype == {dtn}:")
        self.emit(f"    fs = ramp_of(v{k})")
        self.emit("    if fs is None: return None")
        self.emit(f"    f{k}, s{k} = fs; r{k} = True")
        self.emit("    if shp is None:")
        self.emit(f"        shp = v{k}.shape; n = v{k}.size")
        self.emit(f"    elif v{k}.shape != shp: return None")
        self.emit("else: return None")
        return f"f{k}", f"s{k}", f"r{k}"

    def node(self, e: Expr) -> tuple[str, str, str] | None:
        """Emit the code of ``e``: its (f, s, is-run) Python expressions, or None when
        ``e`` is not one exact evaluation knows (as ``affine._compile``)."""
        t = e.type
        if not _int_type(t):
            return None
        if isinstance(e, (Const, NamedConst)):
            return repr(int(ops.const_value(e.value, t))), "0", "False"
        if isinstance(e, VarRef):
            if isinstance(e.var, ProgramVar):
                return None
            var = e.var
            got = self.var_slots.get((var, t))
            if got is not None:
                return got
            vn = self.name("_V", var)
            got = self.leaf(f"env[{vn}] if {vn} in env else fr.get({vn})", t)
            self.var_slots[(var, t)] = got
            return got
        if isinstance(e, CallBuiltin):
            bi = e.builtin
            if bi.index and bi.family == "work-item" and all(isinstance(x, Const) for x in e.args):
                fn = self.name("_R", self.expr(e))  # an id or a size: pure
                return self.leaf(f"{fn}(fr)", t)
            return None
        if isinstance(e, Cast):
            src = e.value.type
            if not (_int_type(src) and _int_type(t)):
                return None
            a = self.node(e.value)
            if a is None:
                return None
            slo, shi = _bounds(src)
            dlo, dhi = _bounds(t)
            lo, hi = max(slo, dlo), min(shi, dhi)
            f, s, r = a
            k = self.fresh()
            self.emit(f"f{k} = {f}; s{k} = {s}")
            self.emit(f"if not {lo} <= f{k} <= {hi}: return None")
            self.emit(f"if s{k} and not {lo} <= f{k} + s{k} * (n - 1) <= {hi}: return None")
            return f"f{k}", f"s{k}", r
        if isinstance(e, Binary) and e.op in ("+", "-", "*"):
            if e.left.type != t or e.right.type != t:
                return None
            a = self.node(e.left)
            if a is None:
                return None
            b = self.node(e.right)
            if b is None:
                return None
            fa, sa, ra = a
            fb, sb, rb = b
            k = self.fresh()
            if e.op == "+":
                self.emit(f"f{k} = {fa} + {fb}; s{k} = {sa} + {sb}")
            elif e.op == "-":
                self.emit(f"f{k} = {fa} - {fb}; s{k} = {sa} - {sb}")
            else:
                if ra != "False" and rb != "False":
                    self.emit(f"if {ra} and {rb}: return None")
                self.emit(f"f{k} = {fa} * {fb}; s{k} = {fa} * {sb} + {sa} * {fb}")
            if ra == "False":
                r = rb
            elif rb == "False":
                r = ra
            else:
                self.emit(f"r{k} = {ra} or {rb}")
                r = f"r{k}"
            return f"f{k}", f"s{k}", r
        return None


def compile_affine(e: Expr, expr: Callable[[Expr], Callable[[Frame], Any]]) -> AffFn | None:
    """One generated function computing ``affine._compile(e, expr)``'s result, or None when
    ``e`` is not one exact evaluation knows."""
    g = _Gen(expr)
    root = g.node(e)
    if root is None:
        return None
    f, s, r = root
    body = g.lines
    if r == "False":
        tail = [f"    return {f}"]
    else:
        tail = [f"    if {r}: return ({f}, {s}, shp, n)", f"    return {f}"]
    src = "\n".join(
        [
            "def aff(fr):",
            "    env = fr.env",
            "    ramp_of = fr.batch.ramp_of",
            "    shp = None; n = 1",
            *body,
            *tail,
        ]
    )
    ns = dict(g.ns)
    exec(compile(src, f"<clpy_sim.affine_gen {getattr(e, 'loc', '')}>", "exec"), ns)
    fn: AffFn = ns["aff"]
    fn.__doc__ = src  # (for debugging: the generated source)
    return fn


__all__ = ["compile_affine"]
