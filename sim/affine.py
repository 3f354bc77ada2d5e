"""Memory indices evaluated as exact integers: a uniform index, or an arithmetic run of them.

Most indices of real kernels are sums and products of uniform integers (loop counters,
sizes, offsets) and at most one run of consecutive work-item ids (``x[i * n + gid]``,
``tile[(ty + 1) * BS + tx]``, ``tile[tx * BS + i]``). Computed node by node they cost one
NumPy call per operator on every trip of every loop: small arrays for the lane-varying
sums, NumPy scalars for the uniform ones. ``index_fn`` compiles such an index expression
into a second evaluator that works on Python ints instead: a uniform value is one int, a
lane-varying value a ``(first, step, shape, n)`` description of the lanes' values
``first, first + step, ...`` in C order over ``shape``. The index a load or store receives is
then a NumPy scalar (uniform) or a ``Run``: memory reads and writes a run of step 1 as a slice
(``sim/memory.py``), and anything that needs the index as an array gets it from ``Run.array``
(a view of a cached ``arange``), the same values, dtype and shape as the node-by-node result.

Exactness: ``+ - *`` in one integer type are computed modulo 2**bits (C's unsigned arithmetic;
signed overflow wraps in the simulator too), and reduction modulo 2**bits commutes with them,
so the exact value equals the wrapped one whenever it lies in the type's range; that is
checked at the root (both ends of a run: its values are monotonic) and at every conversion
(whose result depends on the converted value, not only on its residue). Anything else (a
value out of range, a leaf that is not a uniform int or a known run, an operator or leaf kind
the evaluator does not know) falls back to the node-by-node closure, which recomputes the
index from its pure leaves (variables, constants, work-item ids); a site whose exact
evaluation keeps failing (lane-varying indices that are not runs, as in gathers) stops trying.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from clpy.ir.nodes import Binary, CallBuiltin, Cast, Const, Expr, NamedConst, VarRef
from clpy.ir.program_vars import ProgramVar
from clpy.types.core import ScalarType
from clpy_sim import ops
from clpy_sim.affine_gen import compile_affine
from clpy_sim.frame import Frame

Value = Any
# an affine value: an int (uniform) or (first, step, shape, count), or None (not affine)
Aff = Any
AffFn = Callable[[Frame], Aff]


class Run:
    """Lane indices ``first + step * k`` for k = 0 .. n-1 in C order over ``shape``, of
    integer dtype ``dtype`` (a memory index not yet made into an array)."""

    __slots__ = ("first", "step", "shape", "n", "dtype")

    def __init__(self, first: int, step: int, shape: tuple[int, ...], n: int, dtype: Any) -> None:
        self.first = first
        self.step = step if n > 1 else 1
        self.shape = shape
        self.n = n
        self.dtype = dtype

    @property
    def last(self) -> int:
        return self.first + self.step * (self.n - 1)

    def array(self, fr: Frame) -> np.ndarray:
        """The indices as an array (read-only when a view of the cached ``arange``), noted as
        a run (``Batch.note_run``: step 1 as the node-by-node sum notes it, any other step for
        the exact evaluators that read it later)."""
        a = ramp(self.dtype, self.first, self.step, self.n).reshape(self.shape)
        fr.batch.note_run(a, self.first, self.step)
        return a


ENABLED = True  # read when a plan is compiled (tests compare plans made with it off)
# exact evaluators as one generated function per index (sim/affine_gen.py), not a closure
# tree; read when a plan is compiled (tests compare the two)
GENERATE = True
_GIVE_UP = 16  # an index site whose exact evaluation failed this many times in a row
_CAP = 1 << 22  # cached ramps go up to this many elements per dtype
_RAMPS: dict[Any, np.ndarray] = {}
_RAMPS_LOCK = threading.Lock()


def ramp(dtype: Any, first: int, step: int, n: int) -> np.ndarray:
    """``first, first + step, ...`` (n values) of ``dtype``: a view of a cached read-only
    ``arange`` when the values lie in ``[0, _CAP)``, else a new array."""
    last = first + step * (n - 1)
    lo, hi = (first, last) if first <= last else (last, first)
    if lo < 0 or hi >= _CAP:
        if hi < 1 << 62:
            a = np.arange(n, dtype=np.int64)
            a *= step
            a += first
            return a.astype(dtype)
        return np.array([first + step * k for k in range(n)], dtype=object).astype(dtype)
    dt = np.dtype(dtype)
    base = _RAMPS.get(dt)
    if base is None or len(base) <= hi:
        with _RAMPS_LOCK:
            base = _RAMPS.get(dt)
            if base is None or len(base) <= hi:
                size = min(_CAP, max(1024, 1 << int(hi).bit_length()))
                base = np.arange(size, dtype=dt)
                base.flags.writeable = False
                _RAMPS[dt] = base
    return base[first::step][:n]


def _int_type(t: Any) -> bool:
    return isinstance(t, ScalarType) and not t.is_float and not t.is_bool


def _bounds(t: Any) -> tuple[int, int]:
    info = np.iinfo(ops.dtype_of(t))
    return int(info.min), int(info.max)


def index_fn(e: Expr, expr: Callable[[Expr], Callable[[Frame], Value]]) -> Callable[[Frame], Value]:
    """The evaluator of index expression ``e``: exact (see the module docstring) where it
    can be, else ``expr(e)`` (the node-by-node closure, which ``expr`` compiles)."""
    normal = expr(e)
    return _exact(e, expr, normal) or normal


def _exact(
    e: Expr,
    expr: Callable[[Expr], Callable[[Frame], Value]],
    normal: Callable[[Frame], Value],
    arrays: bool = False,
) -> Callable[[Frame], Value] | None:
    """``index_fn``'s exact evaluator (falling back to ``normal``), or None where ``e`` is
    not one it knows. With ``arrays`` a run comes back as ``value_fn`` wants it: an array."""
    if not (ENABLED and _int_type(e.type) and isinstance(e, (Binary, Cast))):
        return None  # a leaf alone gains nothing
    aff = compile_affine(e, expr) if GENERATE else _compile(e, expr)
    if aff is None:
        return None
    t = e.type
    dt = ops.dtype_of(t)
    sct = dt.type
    lo, hi = _bounds(t)
    misses = [0]  # failed tries in a row: a site that keeps failing stops trying

    def index(fr: Frame) -> Value:
        if misses[0] >= _GIVE_UP:
            return normal(fr)
        r = aff(fr)
        if r is not None:
            if type(r) is int:
                if lo <= r <= hi:
                    misses[0] = 0
                    return sct(r)
            else:
                first, step, shape, n = r
                if step:
                    last = first + step * (n - 1)
                    if lo <= first <= hi and lo <= last <= hi:
                        misses[0] = 0
                        if not arrays:
                            return Run(first, step, shape, n, dt)
                        if n <= 1:
                            step = 1  # (as ``Run`` makes it)
                        a = ramp(dt, first, step, n).reshape(shape)
                        fr.batch.note_run(a, first, step)
                        return a
        misses[0] += 1
        return normal(fr)

    return index


def value_fn(e: Expr, expr: Callable[[Expr], Callable[[Frame], Value]]) -> Callable[[Frame], Value]:
    """The evaluator of an integer value assigned to a variable (``x = tx + 1``,
    ``y = m - tx``): like ``index_fn``, but a run comes back as an array (a view of the
    cached ramp, read-only, noted with its step), so that indices computed from the variable
    later are exact too; ``index``'s evaluation and ``Run.array`` in one closure (NW's
    ``x = tx + 1`` and ``y = m - tx + 1``, every trip of its tile loops). Same values, dtype
    and shape as ``expr(e)``."""
    normal = expr(e)
    return _exact(e, expr, normal, arrays=True) or normal


def _compile(e: Expr, expr: Callable[[Expr], Callable[[Frame], Value]]) -> AffFn | None:
    """The affine evaluator of ``e``, or None when some part of it is not one the evaluator
    knows (the whole index is then computed node by node)."""
    t = e.type
    if not _int_type(t):
        return None
    if isinstance(e, (Const, NamedConst)):
        v = int(ops.const_value(e.value, t))
        return lambda fr: v
    if isinstance(e, VarRef):
        if isinstance(e.var, ProgramVar):
            return None
        return _var_leaf(e, t)
    if isinstance(e, CallBuiltin):
        b = e.builtin
        if b.index and b.family == "work-item" and all(isinstance(a, Const) for a in e.args):
            return _leaf(expr(e), t)  # an id or a size: pure
        return None
    if isinstance(e, Cast):
        return _cast(e, expr)
    if isinstance(e, Binary) and e.op in ("+", "-", "*"):
        if e.left.type != t or e.right.type != t:
            return None
        L = _compile(e.left, expr)
        R = _compile(e.right, expr)
        if L is None or R is None:
            return None
        if isinstance(e.right, (Const, NamedConst)) and e.op != "-":
            return _with_const(e.op, L, int(ops.const_value(e.right.value, t)))
        if isinstance(e.right, (Const, NamedConst)):  # a - k
            return _with_const("+", L, -int(ops.const_value(e.right.value, t)))
        if isinstance(e.left, (Const, NamedConst)) and e.op != "-":
            return _with_const(e.op, R, int(ops.const_value(e.left.value, t)))
        return {"+": _add, "-": _sub, "*": _mul}[e.op](L, R)
    return None


def _var_leaf(e: VarRef, t: Any) -> AffFn:
    """``_leaf`` of a variable, its value read inline."""
    var = e.var
    dt = ops.dtype_of(t)
    sct = dt.type

    def leaf(fr: Frame) -> Aff:
        env = fr.env
        v = env[var] if var in env else fr.get(var)
        if type(v) is sct:
            return int(v)
        if type(v) is np.ndarray and v.ndim and v.dtype == dt:
            fs = fr.batch.ramp_of(v)
            if fs is not None:
                return (fs[0], fs[1], v.shape, v.size)
        return None

    return leaf


def _leaf(read: Callable[[Frame], Value], t: Any) -> AffFn:
    """A value read as is: a scalar of the type's dtype is its int, an array of that dtype
    that is a known run of consecutive ints is ``(first, 1, shape, size)``."""
    dt = ops.dtype_of(t)
    sct = dt.type

    def leaf(fr: Frame) -> Aff:
        v = read(fr)
        if type(v) is sct:
            return int(v)
        if type(v) is np.ndarray and v.ndim and v.dtype == dt:
            fs = fr.batch.ramp_of(v)
            if fs is not None:
                return (fs[0], fs[1], v.shape, v.size)
        return None

    return leaf


def _cast(e: Cast, expr: Callable[[Expr], Callable[[Frame], Value]]) -> AffFn | None:
    src, dst = e.value.type, e.type
    if not (_int_type(src) and _int_type(dst)):
        return None
    A = _compile(e.value, expr)
    if A is None:
        return None
    slo, shi = _bounds(src)
    dlo, dhi = _bounds(dst)
    lo, hi = max(slo, dlo), min(shi, dhi)  # the values a conversion leaves unchanged

    def cast(fr: Frame) -> Aff:
        r = A(fr)
        if r is None:
            return None
        if type(r) is int:
            return r if lo <= r <= hi else None
        first, step, _, n = r
        last = first + step * (n - 1)
        return r if lo <= first <= hi and lo <= last <= hi else None

    return cast


def _with_const(op: str, A: AffFn, k: int) -> AffFn:
    """``a + k`` or ``a * k`` (either order) for a constant ``k``."""
    if op == "+":

        def addk(fr: Frame) -> Aff:
            a = A(fr)
            if type(a) is int:
                return a + k
            if a is None:
                return None
            return (a[0] + k, a[1], a[2], a[3])

        return addk

    def mulk(fr: Frame) -> Aff:
        a = A(fr)
        if type(a) is int:
            return a * k
        if a is None:
            return None
        return (a[0] * k, a[1] * k, a[2], a[3])

    return mulk


def _add(L: AffFn, R: AffFn) -> AffFn:
    def add(fr: Frame) -> Aff:
        a = L(fr)
        if a is None:
            return None
        b = R(fr)
        if b is None:
            return None
        if type(a) is int:
            if type(b) is int:
                return a + b
            return (b[0] + a, b[1], b[2], b[3])
        if type(b) is int:
            return (a[0] + b, a[1], a[2], a[3])
        if a[2] != b[2]:
            return None
        return (a[0] + b[0], a[1] + b[1], a[2], a[3])

    return add


def _sub(L: AffFn, R: AffFn) -> AffFn:
    def sub(fr: Frame) -> Aff:
        a = L(fr)
        if a is None:
            return None
        b = R(fr)
        if b is None:
            return None
        if type(a) is int:
            if type(b) is int:
                return a - b
            return (a - b[0], -b[1], b[2], b[3])
        if type(b) is int:
            return (a[0] - b, a[1], a[2], a[3])
        if a[2] != b[2]:
            return None
        return (a[0] - b[0], a[1] - b[1], a[2], a[3])

    return sub


def _mul(L: AffFn, R: AffFn) -> AffFn:
    def mul(fr: Frame) -> Aff:
        a = L(fr)
        if a is None:
            return None
        b = R(fr)
        if b is None:
            return None
        if type(a) is int:
            if type(b) is int:
                return a * b
            return (b[0] * a, b[1] * a, b[2], b[3])
        if type(b) is int:
            return (a[0] * b, a[1] * b, a[2], a[3])
        return None

    return mul


__all__ = ["Run", "index_fn", "ramp", "value_fn"]
