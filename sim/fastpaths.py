"""Fast paths of the statement compiler (``sim/stmts.py``) for the shapes real programs
repeat in their loops: ``op=`` updated in place on a private row or a run of a global buffer,
and ``for`` loops whose trips are the same for every lane. Each falls back to the general
path (passed in) whenever its condition does not hold at run time, and computes the same
values in the same dtype.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from clpy.ir.nodes import Break, Const, Continue, Expr, For, Index, Return, Stmt, Var, VarRef
from clpy.ir.walk import walk
from clpy.types.core import AddressSpace, ArrayType, ScalarType
from clpy_sim import ops
from clpy_sim.affine import Run
from clpy_sim.frame import Frame
from clpy_sim.parallel import Aborted
from clpy_sim.values import same_contents

Value = Any

# the in-place ufunc of each ``op=`` operator the fast paths take
INPLACE = {
    "+": np.add,
    "-": np.subtract,
    "*": np.multiply,
    "&": np.bitwise_and,
    "|": np.bitwise_or,
    "^": np.bitwise_xor,
}


def private_element(e: Expr, escaped: frozenset[Var]) -> bool:
    """``e`` is an element of a private array held in a variable (``sim/lvalues.py``)."""
    if not isinstance(e, Index) or isinstance(e.type, ArrayType):
        return False
    bt = e.base.type
    if not (isinstance(bt, ArrayType) and bt.space is AddressSpace.PRIVATE):
        return False
    root: Expr = e
    while isinstance(root, Index):
        root = root.base
    return isinstance(root, VarRef) and root.var not in escaped


def aug_private(
    ref: Callable[[Frame], Any],
    rhs: Callable[[Frame], Value],
    ufunc: np.ufunc,
    t: Any,
    aug_at: Callable[[Frame, Any], None],
) -> Callable[[Frame], None]:
    """``a[k] op= v`` on a private array with the same index ``k`` in every lane (a register
    tile's accumulator): the row is updated in place by the operator's ufunc, instead of a new
    array for ``a[k] op v`` copied back into the row; the same arithmetic in the same dtype
    (``aug_at`` otherwise, e.g. for an index that varies over the lanes)."""
    dt = ops.dtype_of(t)

    def run(fr: Frame) -> None:
        h = ref(fr)
        key, off = h
        if type(off) is np.ndarray:
            aug_at(fr, h)
            return
        arr = fr.get(key.var)
        if not arr.flags.writeable:
            arr = arr.copy()
        row = arr[int(off)]
        y = rhs(fr)
        before = row.copy() if fr.batch.watching else None
        if getattr(y, "dtype", None) == dt and row.dtype == dt:
            ufunc(row, y, out=row)
        else:
            r = ufunc(row, y)
            if getattr(r, "dtype", None) != dt:
                r = ops.fix_dtype(r, ops.element_of(t))
            arr[int(off)] = np.asarray(r, dtype=arr.dtype)
        fr.env[key.var] = arr
        if before is None or not same_contents(before, row):
            fr.batch.stores += 1

    return run


def aug_global(
    ref: Callable[[Frame], Any],
    store: Callable[[Frame, Any, Value], None],
    rhs: Callable[[Frame], Value],
    ufunc: np.ufunc,
    t: Any,
    aug_at: Callable[[Frame, Any], None],
) -> Callable[[Frame], None]:
    """``p[i] op= v`` where the lanes' addresses are a run of consecutive elements of a
    buffer no checker watches (``x[i * n + gid] += ...``, every trip of a loop): the
    elements are updated in place by the operator's ufunc, as ``aug_at`` would compute them
    (load, ``op`` in the same dtype, store), without the new array and the store's index.
    ``aug_at`` otherwise."""
    dt = ops.dtype_of(t)

    def run(fr: Frame) -> None:
        h = ref(fr)
        mem, a = h
        batch = fr.batch
        is_run = type(a) is Run
        first = None
        if (
            (is_run or type(a) is np.ndarray)
            and getattr(mem, "direct", False)
            and (mem.shadow is None or not batch.watch)
            and not batch.watching
            and a.shape == fr.shape
            and mem.data.dtype == dt
        ):
            if is_run:
                first = a.first if a.step == 1 else None
            else:
                first = batch.run_of(a)
        if first is not None:
            n = a.n if is_run else a.size
            if first >= 0 and first + n <= mem.count:
                row = mem.data[first : first + n].reshape(a.shape)
                y = rhs(fr)
                if getattr(y, "dtype", None) == dt:
                    batch.stores += 1
                    ufunc(row, y, out=row)
                    return
                r = ufunc(row, y)
                if getattr(r, "dtype", None) != dt:
                    r = ops.fix_dtype(r, t)
                store(fr, h, r)
                return
        if is_run:
            h = (mem, a.array(fr))
        aug_at(fr, h)

    return run


def uniform_for(
    s: Stmt, body: Callable[[Frame], Any], body_stmts: Sequence[Stmt], assigned: frozenset[Any]
) -> Callable[[Frame], bool] | None:
    """The fast path of a ``for`` loop whose trips are the same for every lane: when the
    start, stop and step are uniform integers, no lane can leave early (no ``break``,
    ``continue`` or ``return`` in the body) and the body does not assign the counter, the
    trips need no lane selection. The comparison and the increment are the same NumPy
    scalar operations as the general loop's (``cond``/``incr`` of ``s_For``, whose
    ``int_binary`` is ``a + b``), so the counter takes the same values, wrap-around included.
    Returns False (nothing run) when the values are not uniform."""
    if not isinstance(s, For):
        return None
    t = s.var.type
    if not (isinstance(t, ScalarType) and not t.is_float and not t.is_bool):
        return None
    if any(isinstance(n, (Break, Continue, Return)) for n in walk(list(body_stmts))):
        return None
    var = s.var
    if var in assigned:
        return None
    kstop, kstep = ("stop", id(s)), ("step", id(s))
    up = s.step.value > 0 if isinstance(s.step, Const) else (True if s.ascending else None)
    dt = ops.dtype_of(t)
    sct = dt.type

    def run(fr: Frame) -> bool:
        env = fr.env
        i, stop, step = env[var], env[kstop], env[kstep]
        if not (type(i) is sct and isinstance(stop, np.integer) and isinstance(step, np.integer)):
            return False
        asc = up if up is not None else bool(step > 0)
        batch = fr.batch
        halt = batch.stop
        while (i < stop) if asc else (i > stop):
            if halt is not None and halt.aborted(batch.index):
                raise Aborted  # a parallel launch was interrupted (Ctrl-C) or failed
            body(fr)
            i = env[var] + step
            if type(i) is not sct:
                i = ops.fix_dtype(i, t)
            env[var] = i
        return True

    return run
