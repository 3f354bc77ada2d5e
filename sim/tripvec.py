"""Loops whose trips are independent, run as one frame of trips × lanes (trip vectorization).

The real programs' serial loops (Gram-Schmidt's ``r[k * n + j] += q[i * n + k] * a[i * n + j]``,
LU's ``s += col[ty * 16 + i] * row[i * 16 + tx]``, the tile copies of NW and LU) run a
one-statement body for tens of trips on a few lanes, and each trip pays the interpreter's fixed
cost (tens of µs) for a few µs of NumPy work. A ``for`` loop with uniform bounds whose body is
some ``Declare``s followed by one assignment, with no side effect but that assignment, runs
here as one evaluation over a frame of ``trips × lanes`` lanes (``Trips``: lane ``t * w + c``
is lane ``c`` of the loop's frame at trip ``t``; the counter is a lane value):

- **reduction** ``x op= e`` (``op`` in ``+ - *``, ``x`` a variable or a memory element whose
  address does not change over the trips): ``e`` for every trip at once, then the trips
  combined one after another by the operator's ``accumulate`` (sequential, in ``x``'s dtype:
  the same roundings in the same order as the trips);
- **map** ``m[f(i)] = e`` or ``m[f(i)] op= e``: the statement itself on the expanded frame, when
  no element is written twice.

Equal results need the trips not to see each other's writes: a run-time check that no load of
the statement reads an element it writes (same memory: element sets disjoint; other memory:
arrays that cannot overlap), and for a memory reduction that no two lanes write one element.
Checker reports stay those of the trip-by-trip loop: the race and uninitialised-memory
checkers' shadows see the expanded evaluation's accesses only after it, checked against the
records as the loop found them and then recorded, and logged trip by trip
(``sim/tripshadow.py``); where a check would find something, the attempt is undone and the
loop runs trip by trip. A finding of another checker (bounds, division by zero) in the
expanded evaluation is dropped before anything is written and the loop runs trip by trip,
which reports it as before. Variables the body declares end with their last trip's values,
the counter with its final value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, cast

import numpy as np

from clpy.ir.nodes import (
    Assign,
    Binary,
    CallBuiltin,
    Cast,
    Compare,
    Const,
    Declare,
    Expr,
    Field,
    For,
    Index,
    Logical,
    NamedConst,
    Select,
    Stmt,
    Swizzle,
    Unary,
    VarRef,
    VectorCons,
)
from clpy.ir.program_vars import ProgramVar
from clpy.ir.walk import walk
from clpy.types.core import AddressSpace, ArrayType, PointerType, ScalarType, VectorType
from clpy_sim import ops
from clpy_sim.errors import SimulationError
from clpy_sim.frame import Frame
from clpy_sim.tripframe import MEMS as _MEMS
from clpy_sim.tripframe import Trips, Written, accumulate, elements, last
from clpy_sim.tripshadow import ShadowTap

Value = Any
ENABLED = True  # read when a plan is compiled (tests compare plans made with it off)

_SHADOWED = frozenset({"races", "uninit"})  # checkers whose shadows record every access
_PURE_NODES = (
    Const,
    NamedConst,
    VarRef,
    Binary,
    Unary,
    Compare,
    Logical,
    Select,
    Cast,
    Index,
    Field,
    Swizzle,
    VectorCons,
    CallBuiltin,
)
_PURE_FAMILIES = frozenset(
    {"math", "common", "integer", "integer/common", "geometric", "relational", "conversions"}
)
_ACC = {"+": np.add, "-": np.subtract, "*": np.multiply}
MIN_TRIPS = 6  # fewer trips: the checks cost more than the trips (LU: 3 -> 6 trips, 10% faster)
# elements (trips x lanes x vector components) of one expanded evaluation: small enough to stay
# in cache (wider frames are array-bound; whole loops at once ran slower there than trip by
# trip), big enough that a NumPy call's fixed cost is spread over several trips
CHUNK_ELEMENTS = 1 << 16
MAP_ELEMENTS = 1 << 16
# wider frames are array-bound: a trip's fixed cost is small beside its NumPy passes, and the
# expanded frame adds passes (it copies the loop's invariant values once per trip)
MAX_LANES = 1024


def _nodes(e: Expr) -> Iterator[Any]:
    return walk(cast("list[Stmt]", [e]))


def _pure(e: Expr) -> bool:
    """``e`` reads and computes only: no call with effects, no program-scope variable."""
    for n in _nodes(e):
        if not isinstance(n, _PURE_NODES):
            return False
        if isinstance(n, VarRef) and isinstance(n.var, ProgramVar):
            return False
        if isinstance(n, CallBuiltin):
            b = n.builtin
            if b.family not in _PURE_FAMILIES or b.atomic is not None or b.writes_args or b.uniform:
                return False
    return True


def _refs(e: Expr) -> set[Any]:
    return {n.var for n in _nodes(e) if isinstance(n, VarRef)}


def _loads(exprs: Sequence[Expr]) -> list[Index]:
    """The memory reads among ``exprs`` (elements of pointers and of local arrays)."""
    out = []
    for e in exprs:
        for n in _nodes(e):
            if not isinstance(n, Index) or isinstance(n.type, ArrayType):
                continue
            root: Expr = n
            while isinstance(root, Index):
                root = root.base
            bt = root.type
            if isinstance(bt, PointerType) or (
                isinstance(bt, ArrayType) and bt.space is not AddressSpace.PRIVATE
            ):
                out.append(n)
    return out


def _mem_target(e: Expr) -> bool:
    """An element of a global pointer or of a 1-D local array (what ``Memory`` stores)."""
    if not isinstance(e, Index) or not isinstance(e.type, ScalarType):
        return False
    bt = e.base.type
    if not isinstance(e.base, VarRef) or isinstance(e.base.var, ProgramVar):
        return False
    if isinstance(bt, PointerType):
        return bt.space in (AddressSpace.GLOBAL, AddressSpace.LOCAL)
    return isinstance(bt, ArrayType) and bt.space is AddressSpace.LOCAL and len(bt.shape) == 1


def _set_var(d: Stmt) -> tuple[Any, Expr | None]:
    """The variable and value of ``Declare(v, e)`` or ``v = e`` (a scalar or vector)."""
    if isinstance(d, Declare):
        v, e = d.var, d.init
    elif isinstance(d, Assign) and d.op is None and isinstance(d.target, VarRef):
        v, e = d.target.var, d.value
    else:
        return None, None
    if isinstance(v, ProgramVar) or not isinstance(v.type, (ScalarType, VectorType)):
        return None, None
    return v, e


def _private_row(e: Expr, escaped: frozenset[Any]) -> bool:
    """An element of a 1-D private array of scalars held in a variable."""
    if not isinstance(e, Index) or not isinstance(e.type, ScalarType):
        return False
    bt = e.base.type
    return (
        isinstance(e.base, VarRef)
        and isinstance(bt, ArrayType)
        and bt.space is AddressSpace.PRIVATE
        and len(bt.shape) == 1
        and e.base.var not in escaped
        and not isinstance(e.base.var, ProgramVar)
    )


def _root_var(e: Expr) -> Any:
    """The pointer or local array variable whose memory an element ``e`` is in; None when
    not plain (pointer arithmetic keeps a pointer's memory)."""
    while isinstance(e, Index):
        e = e.base
    while isinstance(e, Binary) and isinstance(e.type, PointerType):
        e = e.left if isinstance(e.left.type, PointerType) else e.right
    if isinstance(e, VarRef) and not isinstance(e.var, ProgramVar):
        return e.var
    return None


def _conditional_loads(exprs: Sequence[Expr]) -> bool:
    """Some load is an operand of ``a if c else b``, ``and`` or ``or`` (it runs on the lanes
    that evaluate it: a sub-frame)."""
    return any(isinstance(n, (Select, Logical)) and _loads([n]) for e in exprs for n in _nodes(e))


def compile_loop(s: Stmt, sc: Any) -> Callable[[Frame], bool] | None:
    """For a ``for`` loop ``s`` that qualifies, a function run after the loop's ``init``:
    True when it ran every trip, False (nothing done) to run them one by one. ``sc``: the
    ``StmtCompiler``."""
    if not ENABLED or not isinstance(s, For):
        return None
    t = s.var.type
    if not (isinstance(t, ScalarType) and not t.is_float and not t.is_bool) or not s.body:
        return None
    *decls, last = s.body
    if not isinstance(last, Assign):
        return None
    declared: list[Any] = []
    inits: list[Expr] = []
    for d in decls:  # ``v = e`` of a variable set before it is read, in every trip
        dv, init = _set_var(d)
        if dv is None or init is None or dv is s.var or not _pure(init):
            return None
        declared.append(dv)
        inits.append(init)
    for k, init in enumerate(inits):
        if _refs(init) & set(declared[k:]):
            return None
    if len(set(declared)) != len(declared):
        return None
    target, value, op = last.target, last.value, last.op
    if not _pure(value):
        return None
    exprs = sc.exprs
    tt = target.type
    elem_ok = isinstance(tt, (ScalarType, VectorType)) and ops.element_of(tt).cl_name in (
        "float",
        "double",
        "char",
        "uchar",
        "short",
        "ushort",
        "int",
        "uint",
        "long",
        "ulong",
    )
    reduce_ok = op in _ACC and value.type is tt and elem_ok
    if isinstance(target, VarRef):
        v = target.var
        if (
            not reduce_ok
            or isinstance(v, ProgramVar)
            or v is s.var
            or v in declared
            or any(v in _refs(e) for e in [*inits, value])
        ):
            return None
        kind = "var"
    elif _mem_target(target):
        assert isinstance(target, Index)
        if not _pure(target.index):
            return None
        varying = _refs(target.index) & ({s.var} | set(declared))
        if varying:
            kind = "map"
        elif reduce_ok:
            kind = "mem"
        else:
            return None
    elif _private_row(target, sc.escaped):
        assert isinstance(target, Index) and isinstance(target.base, VarRef)
        v = target.base.var
        if (
            not (op is None or op in _ACC)
            or value.type is not tt
            or not elem_ok
            or not _pure(target.index)
            or v in declared
            or any(v in _refs(e) for e in [*inits, value, target.index])
        ):
            return None
        kind = "priv"
    else:
        return None
    loads = _loads([*inits, value] + ([target.index] if isinstance(target, Index) else []))
    roots: list[Any] = []
    if sc.checks & _SHADOWED:  # (sim/tripshadow.py)
        if _conditional_loads([*inits, value, target]):
            return None
        roots = [_root_var(n) for n in [*loads, target] if isinstance(n, Index)]
        if kind == "priv":
            roots.pop()
        if None in roots:
            return None
    load_refs = [exprs.lvalue(n, copy=False)[0] for n in loads]
    decl_fns = [sc.stmt(d) for d in decls]
    loop = _Loop(s, kind, decl_fns, declared, load_refs)
    loop.roots = list(dict.fromkeys(roots))
    if kind == "map":
        loop.stmt = sc.stmt(last)
        loop.ref = exprs.lvalue(target, copy=False)[0]
    elif kind == "priv":
        assert isinstance(target, Index) and isinstance(target.base, VarRef)
        loop.rhs = exprs.operand(value)
        loop.tvar = target.base.var
        loop.index = exprs.expr(target.index)
    elif kind == "var":
        loop.rhs = exprs.operand(value)
        assert isinstance(target, VarRef)
        loop.tvar = target.var
    else:
        loop.rhs = exprs.operand(value)
        loop.ref, loop.load, loop.store = exprs.lvalue(target, copy=False)
    loop.width = max(
        [t.n for t in [tt, value.type, *(v.type for v in declared)] if isinstance(t, VectorType)]
        or [1]
    )
    loop.ufunc = _ACC.get(op or "")
    loop.dt = ops.dtype_of(tt) if elem_ok else None
    return loop.run


class _Loop:
    """One qualifying loop: what ``compile_loop`` found, and its run-time part."""

    def __init__(
        self,
        s: For,
        kind: str,
        decl_fns: list[Callable[[Frame], Any]],
        declared: list[Any],
        load_refs: list[Callable[[Frame], Any]],
    ) -> None:
        self.var = s.var
        self.kstop, self.kstep = ("stop", id(s)), ("step", id(s))
        self.up = s.step.value > 0 if isinstance(s.step, Const) else (True if s.ascending else None)
        self.dt_var = ops.dtype_of(s.var.type)
        info = np.iinfo(self.dt_var)
        self.lo, self.hi = int(info.min), int(info.max)
        self.kind = kind
        self.decl_fns = decl_fns
        self.declared = declared
        self.load_refs = load_refs
        self.stmt: Callable[[Frame], Any] | None = None
        self.ref: Callable[[Frame], Any] | None = None
        self.load: Callable[[Frame, Any], Value] | None = None
        self.store: Callable[[Frame, Any, Value], None] | None = None
        self.rhs: Callable[[Frame], Value] | None = None
        self.tvar: Any = None
        self.index: Callable[[Frame], Value] | None = None
        self.ufunc: np.ufunc | None = None
        self.dt: Any = None
        self.width = 1  # the widest vector among the loop's values
        # the variables of the memories the loop accesses, when shadows watch them
        self.roots: list[Any] = []

    def trips(self, fr: Frame) -> tuple[int, int, int] | None:
        """(first counter value, step, trips) of a uniform loop that does not wrap around."""
        env = fr.env
        i, stop, step = env[self.var], env[self.kstop], env[self.kstep]
        sct = self.dt_var.type
        if not (type(i) is sct and isinstance(stop, np.integer) and isinstance(step, np.integer)):
            return None
        i0, st, sp = int(i), int(stop), int(step)
        asc = self.up if self.up is not None else sp > 0
        if asc:
            if sp <= 0:
                return None
            n = max(0, -(-(st - i0) // sp))
        else:
            if sp >= 0:
                return None
            n = max(0, -(-(i0 - st) // -sp))
        if not self.lo <= i0 + n * sp <= self.hi:
            return None
        return i0, sp, n

    def run(self, fr: Frame) -> bool:
        batch = fr.batch
        if batch.watching or batch.launch.cfg.on_error != "raise":
            return False
        tr = self.trips(fr)
        if tr is None:
            return False
        i0, step, n = tr
        size = fr.shape[0] * fr.shape[1] * self.width
        # a map runs as one evaluation (it writes memory: no chunk could be undone)
        per = n if self.kind == "map" else CHUNK_ELEMENTS // size
        if (
            n < MIN_TRIPS
            or size > MAX_LANES * self.width
            or per < MIN_TRIPS
            or (self.kind == "map" and n * size > MAP_ELEMENTS)
        ):
            return False
        launch = batch.launch
        tap = None
        if self.roots and batch.watch:
            shadows = self._shadows(fr)
            if shadows is None:
                return False
            tap = ShadowTap(batch, shadows) if shadows else None
        try:
            done = self._chunks(fr, i0, step, n, min(per, n), tap)
        except SimulationError as e:
            # a finding of the expanded evaluation (nothing written yet): the trip-by-trip
            # loop reports it, from the same state
            for r in e.reports:
                for k in range(len(launch.reports) - 1, -1, -1):
                    if launch.reports[k] is r:
                        del launch.reports[k]
                        break
            return False
        finally:
            if tap is not None:
                tap.stop()
        if not done:
            return False
        fr.env[self.var] = self.dt_var.type(i0 + n * step)
        return True

    def _shadows(self, fr: Frame) -> list[Any] | None:
        """The shadows of the memories the loop accesses (their accesses are held back,
        sim/tripshadow.py); None: run trip by trip (memories that share shadow arrays)."""
        shadows: list[Any] = []
        for v in self.roots:
            mem = getattr(fr.get(v), "mem", None)
            if mem is None:
                return None
            sh = getattr(mem, "shadow", None)
            if sh is not None and all(sh is not o for o in shadows):
                if sh.peers:
                    return None
                shadows.append(sh)
        return shadows

    def _frame(self, fr: Frame, trips: int) -> Frame:
        """An expanded frame of ``trips`` trips of ``fr``'s lanes."""
        sel = Trips(trips, fr.shape)
        return Frame(fr.batch, sel.shape, sel.gather(fr.gslot), sel.gather(fr.llid), fr, sel, False)

    def _chunks(
        self, fr: Frame, i0: int, step: int, n: int, per: int, tap: ShadowTap | None
    ) -> bool:
        """Every trip, ``per`` at a time; False (nothing changed) where a condition fails.
        Nothing is written before the last chunk has been evaluated (and the shadows'
        checks of every access, ``tap``, have found nothing)."""
        if tap is not None:
            tap.start()
        w = fr.shape[1]
        kind = self.kind
        acc: Value = None
        h: Any = None
        written: Written | None = None
        mem: Any = None
        work: np.ndarray | None = None
        used: np.ndarray | None = None
        if kind == "var":
            acc = fr.get(self.tvar)
        elif kind == "mem":
            assert self.ref is not None and self.load is not None
            h = self.ref(fr)
            mem, addr = h
            wr = elements(mem, fr, addr)
            if wr is None or not wr.size:
                return False
            written = Written(wr)
            if not written.unique:
                return False
            acc = self.load(fr, h)
        elif kind == "priv":
            arr = fr.get(self.tvar)
            if arr.ndim != 3 or arr.shape[1:] != fr.shape or arr.dtype != self.dt:
                return False
            work = arr.copy()
            used = np.zeros(arr.shape[0], dtype=bool)
        x: Frame | None = None
        t = 0
        while t < n:
            c = min(per, n - t)
            if x is None or c != x.shape[1] // w:
                x = self._frame(fr, c)
            else:  # the same lanes: values gathered from ``fr`` stay, the trip's go
                for v in self.declared:
                    x.env.pop(v, None)
                x.cache.clear()
            counter = (i0 + step * (t + np.arange(c, dtype=np.int64))).astype(self.dt_var)
            x.env[self.var] = np.repeat(counter, w)[None, :]
            if tap is not None:
                tap.chunk(x, t, c)
            for f in self.decl_fns:
                f(x)
            if tap is not None:
                tap.mark()
            if kind == "map":
                return self._map(x, tap, n)
            if kind == "priv":
                assert work is not None and used is not None
                if not self._private(fr, x, c, work, used):
                    return False
            else:
                if written is not None and not self._disjoint(x, mem, written):
                    return False
                assert self.rhs is not None and self.ufunc is not None
                acc = accumulate(self.ufunc, acc, self.rhs(x), self.dt, x, fr.shape)
                if acc is None:
                    return False
            t += c
        assert x is not None
        if tap is not None and not tap.settle(fr, kind == "mem"):
            return False
        env = fr.env
        if kind == "var":
            env[self.tvar] = acc
        elif kind == "mem":
            assert self.store is not None
            self.store(fr, h, acc)
        else:
            env[self.tvar] = work
            fr.batch.stores += 1
        c = x.shape[1] // w
        for v in self.declared:  # the last trip's values
            env[v] = last(x.env[v], c, w)
        if tap is not None:
            tap.commit(fr, n)
        return True

    def _map(self, x: Frame, tap: ShadowTap | None, n: int) -> bool:
        """``m[f(i)] = e`` (or ``op=``) on the expanded frame of every trip, when it writes
        no element twice and reads none it writes (with shadows, ``tap``: and their checks
        find nothing, else the elements written get their old contents back)."""
        assert self.ref is not None and self.stmt is not None
        mem, addr = self.ref(x)
        wr = elements(mem, x, addr)
        if wr is None or not wr.size:
            return False
        written = Written(wr)
        if not written.unique or not self._disjoint(x, mem, written):
            return False
        fr = x.parent
        assert fr is not None
        old = mem.flat_data()[wr] if tap is not None else None
        self.stmt(x)
        if tap is not None:
            if not tap.settle(fr, False):
                mem.flat_data()[wr] = old
                return False
            tap.commit(fr, n)
        w = fr.shape[1]
        c = x.shape[1] // w
        for v in self.declared:  # the last trip's values
            fr.env[v] = last(x.env[v], c, w)
        return True

    def _private(self, fr: Frame, x: Frame, c: int, work: np.ndarray, used: np.ndarray) -> bool:
        """``a[k] op= e`` on a private array, ``k`` the same in every lane of a trip and
        different in every trip: the rows of ``c`` trips at once into ``work`` (a copy of
        the array), in the row's dtype (what ``fastpaths.aug_private`` does row by row)."""
        assert self.index is not None and self.rhs is not None
        g, w = fr.shape
        k = np.asarray(self.index(x))
        if k.ndim < 2 or k.shape[-1] != x.shape[1]:
            return False
        rows = np.broadcast_to(k, x.shape).reshape(g, c, w)
        ks = rows[0, :, 0]
        if not np.array_equal(rows, np.broadcast_to(ks[None, :, None], rows.shape)):
            return False
        if ks.min() < 0 or ks.max() >= work.shape[0]:
            return False
        ks = ks.astype(np.intp)
        if np.count_nonzero(used[ks]):
            return False
        before = int(np.count_nonzero(used))
        used[ks] = True
        if int(np.count_nonzero(used)) - before != c:
            return False  # a row twice in this chunk
        y = self.rhs(x)
        if getattr(y, "dtype", None) != self.dt:
            return False
        yt = np.broadcast_to(y, x.shape).reshape(g, c, w).swapaxes(0, 1)
        if self.ufunc is None:
            work[ks] = yt
        else:
            old = work[ks]
            self.ufunc(old, yt, out=old)
            work[ks] = old
        return True

    def _disjoint(self, x: Frame, mem: Any, written: Written) -> bool:
        """No two lanes write one element, and no load of the body reads a written one."""
        if not written.unique:
            return False
        for ref in self.load_refs:
            m, a = ref(x)
            if m is mem:
                rd = elements(m, x, a)
                if rd is None or written.hit(rd):
                    return False
            elif type(m) not in _MEMS or np.may_share_memory(m.data, mem.data):
                return False
        return True
