"""``if`` statements that only set variables, run on every lane and blended (if-conversion).

An ``if`` whose branches on arbitrary lanes (a condition that varies within and across
work-groups) normally compacts the lanes that take each side into a sub-frame (``Flat``: the
lane indices, a ``take`` of every value the side reads, a scatter of every variable it sets).
On wide frames that costs several passes over the lanes for a one-line branch (BitonicSort's
``if (tid // width) % 2 == 1: sort_increasing = 1 - sort_increasing``: ~130 µs of a 1.3 ms
launch of 32,768 work-items). When every statement of both sides sets a scalar or vector
variable from an expression that is harmless on lanes that do not need it (``exprs.is_safe``:
no memory access, no integer division, no call with effects), each side runs on all the lanes
of the frame instead and the variables it sets are blended with ``np.where``: the values of
the lanes that take a side are the ones the compacted side computes (the same operations,
lane by lane), the others keep their values, in the dtype and shape that the merge of the
compacted frame gives. Conditions that are uniform, or the same in every group or in every
lane of a group (tree reductions' ``lid < s``: column slices), keep the general path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from clpy.ir.nodes import Assign, Declare, If, Stmt, VarRef
from clpy.ir.program_vars import ProgramVar
from clpy.types.core import ScalarType, VectorType
from clpy_sim.exprs import is_safe
from clpy_sim.frame import Frame, Sel

Value = Any
ENABLED = True  # read when a plan is compiled (tests compare plans made with it off)
MAX_STMTS = 4  # longer branches: compaction does less work than running them on every lane


class _All(Sel):
    """Every lane of the parent frame (values are shared, not copied)."""

    def __init__(self, shape: tuple[int, int]) -> None:
        self.shape = shape

    def gather(self, v: Value) -> Value:
        return v

    def scatter(self, full: np.ndarray, v: Value) -> None:
        raise AssertionError("a blended branch is never merged back")


def _sets_variable(s: Stmt) -> bool:
    if isinstance(s, Declare):
        v, e = s.var, s.init
    elif isinstance(s, Assign) and isinstance(s.target, VarRef):
        v, e = s.target.var, s.value
        if s.op is not None and not is_safe_op(s):
            return False
    else:
        return False
    return (
        e is not None
        and not isinstance(v, ProgramVar)
        and isinstance(v.type, (ScalarType, VectorType))
        and is_safe(e)
    )


def is_safe_op(s: Assign) -> bool:
    """``v op= e`` without an integer division (which checks its divisor on every lane)."""
    t = s.target.type
    elem_float = isinstance(t, (ScalarType, VectorType)) and (
        t.is_float if isinstance(t, ScalarType) else t.elem.is_float
    )
    return elem_float or s.op not in ("/", "%", "floordiv", "floormod")


def compile_if(
    s: If,
    cond: Callable[[Frame], Value],
    body: Callable[[Frame], Any],
    orelse: Callable[[Frame], Any] | None,
    keys: frozenset[Any],
    general: Callable[[Frame, Value], Any],
) -> Callable[[Frame], Any] | None:
    """The blended form of ``s`` (``body``/``orelse``: its compiled sides, ``keys``: the
    variables they set), falling back to ``general(frame, condition)``; None when ``s`` does
    not qualify."""
    stmts: Sequence[Stmt] = (*s.body, *s.orelse)
    if not ENABLED or not stmts or len(stmts) > MAX_STMTS:
        return None
    if not all(_sets_variable(x) for x in stmts):
        return None
    order = tuple(keys)

    def run(fr: Frame) -> Any:
        c = cond(fr)
        if type(c) is not np.ndarray or c.shape != fr.shape or 1 in c.shape:
            return general(fr, c)
        n = int(np.count_nonzero(c))
        if n == 0 or n == c.size:
            return general(fr, c)
        on = Frame(fr.batch, fr.shape, fr.gslot, fr.llid, fr, _All(fr.shape), False)
        body(on)
        off = None
        if orelse is not None:
            off = Frame(fr.batch, fr.shape, fr.gslot, fr.llid, fr, _All(fr.shape), False)
            orelse(off)
        env = fr.env
        for k in order:
            a = on.env.get(k)
            b = off.env.get(k) if off is not None else None
            if a is None and b is None:
                continue
            if not fr.has(k):
                continue  # set only inside the branch: the merge would drop it too
            old = fr.get(k)
            new_t = old if a is None else a
            new_f = old if b is None else b
            env[k] = _blend(c, new_t, new_f, old)
        return None

    return run


def _blend(c: np.ndarray, t: Value, f: Value, old: Value) -> np.ndarray:
    """``t`` where ``c``, else ``f``, in the dtype and full shape a merge gives."""
    tv, fv, ov = np.asarray(t), np.asarray(f), np.asarray(old)
    dt = ov.dtype
    for v in (tv, fv):
        if v.dtype != dt:
            dt = np.result_type(dt, v.dtype)
    lead = (
        max(tv.shape[:-2], fv.shape[:-2], ov.shape[:-2], key=len)
        if max(tv.ndim, fv.ndim, ov.ndim) > 2
        else ()
    )
    cc = c.reshape((1,) * len(lead) + c.shape) if lead else c
    r = np.where(cc, tv, fv)
    if r.dtype != dt:
        r = r.astype(dt)
    if r.shape != (*lead, *c.shape):
        r = np.array(np.broadcast_to(r, (*lead, *c.shape)))
    return r
