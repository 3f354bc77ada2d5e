"""Assignable expressions: variables, ``p[i]``, array elements, struct fields, swizzles.

``LvalueCompiler.lvalue(e)`` compiles to ``(ref, load, store)``: ``ref(frame)`` evaluates the
address once (so ``x[f(i)] += 1`` computes the index once), ``load(frame, handle)`` reads and
``store(frame, handle, value)`` writes. Local arrays live in ``LocalMem`` (one region per
work-group); private arrays are per-lane arrays of shape ``(count, ..., g, w)`` held in a
variable, so lane compaction carries them like any other value, except those used as pointers
somewhere in their function, which live in memory like local ones (``sim/privmem.py``).

The expression compiler (``sim/exprs.py``) holds an ``LvalueCompiler`` and hands it itself as
the ``Exprs`` it compiles addresses and indices with.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from clpy.ir.nodes import Expr, Field, Index, Swizzle, Var, VarRef
from clpy.ir.program_vars import ProgramVar
from clpy.types.core import AddressSpace, ArrayType, PointerType, VectorType
from clpy_sim import program_scope
from clpy_sim.affine import Run, index_fn
from clpy_sim.frame import Frame, PtrVal
from clpy_sim.values import same_contents

Value = Any
_I64 = np.dtype(np.int64)
# ``a[i][j]`` of a 2-D local array: both indices evaluated exactly at once (``_tile2d``); read
# when a plan is compiled (tests compare plans made with it off)
TILE2D = True
_MEMO_MAX = 8  # element indices a frame remembers per 2-D local array shape (``_tile2d``)
Ref = Callable[[Frame], Any]
Load = Callable[[Frame, Any], Value]
Store = Callable[[Frame, Any, Value], None]


class Exprs(Protocol):
    """What compiling an address needs: index and pointer expressions as closures."""

    def expr(self, e: Expr) -> Callable[[Frame], Value]: ...


class PrivKey:
    """Storage handle of a private array variable."""

    __slots__ = ("var",)

    def __init__(self, var: Var) -> None:
        self.var = var


class LvalueCompiler:
    """Compiles assignable expressions and array rows; ``exprs`` compiles their indices."""

    def __init__(
        self, exprs: Exprs, checks: frozenset[str], escaped: frozenset[Var] = frozenset()
    ) -> None:
        self.expr = exprs.expr
        self.checks = checks
        self.escaped = escaped  # private arrays held in memory like local ones (sim/privmem.py)

    def lvalue(self, e: Expr, copy: bool = True) -> tuple[Ref, Load, Store]:
        """``copy=False``: loads may return views of memory (for consumers that build a new
        array at once, like arithmetic, or that store it)."""
        if isinstance(e, VarRef):
            var = e.var

            def vstore(fr: Frame, h: Any, v: Value) -> None:
                fr.env[var] = v

            return (lambda fr: None), (lambda fr, h: fr.get(var)), vstore
        if isinstance(e, Index):
            return self._index(e, copy)
        if isinstance(e, Field):
            ref, load, store = self.lvalue(e.base)
            name = e.name

            def fload(fr: Frame, h: Any) -> Value:
                return load(fr, h)[name]

            def fstore(fr: Frame, h: Any, v: Value) -> None:
                whole = dict(load(fr, h))
                whole[name] = v
                store(fr, h, whole)

            return ref, fload, fstore
        if isinstance(e, Swizzle):
            ref, load, store = self.lvalue(e.base)
            lanes = list(e.lanes)
            bt = e.base.type
            assert isinstance(bt, VectorType)

            def sload(fr: Frame, h: Any) -> Value:
                v = load(fr, h)
                return v[lanes[0]] if len(lanes) == 1 else v[lanes]

            def sstore(fr: Frame, h: Any, v: Value) -> None:
                old = np.asarray(load(fr, h))
                shape = np.broadcast_shapes(
                    old.shape[1:], np.shape(v)[-2:] if np.ndim(v) >= 2 else ()
                )
                new = np.array(np.broadcast_to(old, (old.shape[0], *shape)))
                if len(lanes) == 1:
                    new[lanes[0]] = v
                else:
                    new[lanes] = v
                store(fr, h, new)

            return ref, sload, sstore
        raise NotImplementedError(f"cannot assign to {type(e).__name__}")

    # ------------------------------------------------------------------ indexing

    def _index(self, e: Index, copy: bool = True) -> tuple[Ref, Load, Store]:
        bt = e.base.type
        loc = e.loc
        if isinstance(bt, PointerType):
            idx = index_fn(e.index, self.expr)  # exact ints or a Run (sim/affine.py)
            base = self.expr(e.base)

            def pref(fr: Frame) -> Any:
                p = base(fr)
                i = idx(fr)
                off = p.off
                if isinstance(off, np.integer) and off == 0:
                    return p.mem, i
                if type(i) is Run:
                    if type(off) is np.int64:
                        o = int(off)
                        return p.mem, Run(i.first + o, i.step, i.shape, i.n, _I64)
                    i = i.array(fr)
                return p.mem, np.asarray(i).astype(np.int64) + off

            def pload(fr: Frame, h: Any) -> Value:
                mem, a = h
                if mem is None:
                    fr.batch.launch.fail(
                        "unsupported", "dereference of a pointer that was never assigned", loc
                    )
                return mem.load(fr, a, loc, copy)

            def pstore(fr: Frame, h: Any, v: Value) -> None:
                mem, a = h
                mem.store(fr, a, v, loc)

            return pref, pload, pstore
        assert isinstance(bt, ArrayType)
        aref = (TILE2D and self._tile2d(e)) or self.array_ref(e)
        if bt.space is AddressSpace.PRIVATE and _root(e) not in self.escaped:
            elem_lead = _lead(e.type)

            def prload(fr: Frame, h: Any) -> Value:
                key, off = h
                arr = fr.get(key.var)
                if type(off) is not np.ndarray:  # the same element in every lane: one row
                    row = arr[int(off)]
                    return row.copy() if copy else row
                i = np.broadcast_to(off, arr.shape[-2:])
                ix = i.reshape((1,) * (1 + elem_lead) + i.shape)
                return np.take_along_axis(arr, ix, axis=0)[0]

            def prstore(fr: Frame, h: Any, v: Value) -> None:
                key, off = h
                arr = fr.get(key.var)
                if not arr.flags.writeable:
                    arr = arr.copy()
                # (a while loop's no-progress checker: only a store that changes the array
                # is progress)
                before = arr.copy() if fr.batch.watching else None
                if type(off) is not np.ndarray:  # the same element in every lane: one row
                    arr[int(off)] = np.asarray(v, dtype=arr.dtype)
                else:
                    i = np.broadcast_to(off, arr.shape[-2:])
                    ix = i.reshape((1,) * (1 + elem_lead) + i.shape)
                    vv = np.broadcast_to(np.asarray(v, dtype=arr.dtype), arr.shape[1:])[None]
                    np.put_along_axis(arr, ix, vv, axis=0)
                fr.env[key.var] = arr
                if before is None or not same_contents(before, arr):
                    fr.batch.stores += 1

            return aref, prload, prstore

        def lload(fr: Frame, h: Any) -> Value:
            mem, off = h
            return mem.load(fr, off, loc, copy)

        def lstore(fr: Frame, h: Any, v: Value) -> None:
            mem, off = h
            mem.store(fr, off, v, loc)

        return aref, lload, lstore

    def _tile2d(self, e: Index) -> Ref | None:
        """``a[i][j]`` of a 2-D local array variable: ``array_ref``'s two nested refs in one,
        the same index, reports and order (``i`` evaluated and checked, then ``j``). Index
        arrays of a signed type in bounds are checked in their own dtype and the element index
        made in one int64 pass (``array_ref`` converts each to int64 and checks it there);
        the element index of the same two index arrays is remembered by the frame (a
        hotspot trip reads ``t[ty][tx]`` of several tiles with the same ``ty`` and ``tx``).
        None where ``e`` is not such an access."""
        inner = e.base
        if not isinstance(inner, Index) or not isinstance(inner.base, VarRef):
            return None
        var = inner.base.var
        bt = var.type
        if (
            isinstance(var, ProgramVar)
            or not isinstance(bt, ArrayType)
            or bt.space is not AddressSpace.LOCAL
            or len(bt.shape) != 2
            or isinstance(e.type, ArrayType)
        ):
            return None
        d0, d1 = (int(d) for d in bt.shape)
        idx_i = self.expr(inner.index)
        idx_j = self.expr(e.index)
        loc_i, loc_j = inner.loc, e.loc
        check = "bounds" in self.checks
        name = var.name
        tag = ("tile2d", d0, d1)

        def ok(a: Any, dim: int) -> bool:
            """``a`` is an index array of a signed type, every element in ``[0, dim)``."""
            return (
                type(a) is np.ndarray
                and a.ndim > 0
                and a.dtype.kind == "i"
                and a.size > 0
                and a.min() >= 0
                and a.max() < dim
            )

        def ref2(fr: Frame) -> Any:
            p = fr.get(var)
            assert isinstance(p, PtrVal)
            storage, off = p.mem, p.off
            i = idx_i(fr)
            if type(i) is np.ndarray and type(off) is np.int64 and off == 0:
                # memo: id(i) -> (i, {id(j): (j, element index)}), for index arrays in bounds
                memo = fr.cache.get(tag)
                got = memo.get(id(i)) if memo is not None else None
                if got is not None and got[0] is not i:
                    got = None
                if got is not None or ok(i, d0):  # ``i`` in bounds: no report to come first
                    j = idx_j(fr)
                    if got is not None:
                        hit = got[1].get(id(j))
                        if hit is not None and hit[0] is j:
                            return storage, hit[1]
                    if ok(j, d1):
                        flat = np.multiply(i, d1, dtype=np.int64)
                        if flat.shape == np.broadcast_shapes(flat.shape, j.shape):
                            flat += j
                        else:
                            flat = flat + j
                        flat.flags.writeable = False  # (remembered: nothing may change it)
                        if memo is None:
                            memo = fr.cache[tag] = {}
                        if got is None:
                            if len(memo) >= _MEMO_MAX:
                                memo.clear()
                            byj: dict[int, tuple[Any, Any]] = {}
                            got = memo[id(i)] = (i, byj)
                        if len(got[1]) >= _MEMO_MAX:
                            got[1].clear()
                        got[1][id(j)] = (j, flat)
                        return storage, flat
                    off = _bound(fr, off, i, d0, d1, loc_i, check, name)
                    return storage, _bound(fr, off, j, d1, 1, loc_j, check, name)
            off = _bound(fr, off, i, d0, d1, loc_i, check, name)
            return storage, _bound(fr, off, idx_j(fr), d1, 1, loc_j, check, name)

        return ref2

    def array_ref(self, e: Expr) -> Ref:
        """``(storage, element offset)`` of an array or array element/row expression."""
        if isinstance(e, VarRef):
            var = e.var
            t = var.type
            assert isinstance(t, ArrayType)
            if isinstance(var, ProgramVar):  # a program-scope table or variable

                def pvref(fr: Frame) -> Any:
                    p = program_scope.value(fr, var)
                    return p.mem, p.off

                return pvref
            if t.space is AddressSpace.PRIVATE and var not in self.escaped:
                key = PrivKey(var)
                return lambda fr: (key, np.int64(0))

            def lref(fr: Frame) -> Any:
                p = fr.get(var)
                assert isinstance(p, PtrVal)
                return p.mem, p.off

            return lref
        assert isinstance(e, Index)
        bt = e.base.type
        assert isinstance(bt, ArrayType)
        base = self.array_ref(e.base)
        dim = bt.shape[0]
        stride = math.prod(bt.shape[1:])
        loc = e.loc
        check = "bounds" in self.checks
        name = _root_name(e)

        if isinstance(e.base, VarRef) and bt.space is AddressSpace.LOCAL and len(bt.shape) == 1:
            # the memory object checks bounds (same extent): just pass the index through
            arr_var = e.base.var
            idx = index_fn(e.index, self.expr)  # exact ints or a Run (sim/affine.py)

            def ref1(fr: Frame) -> Any:
                p = fr.get(arr_var)
                return p.mem, idx(fr)

            return ref1

        idx = self.expr(e.index)

        def ref(fr: Frame) -> Any:
            storage, off = base(fr)
            return storage, _bound(fr, off, idx(fr), dim, stride, loc, check, name)

        return ref


def _bound(
    fr: Frame, off: Any, i: Any, dim: int, stride: int, loc: Any, check: bool, name: str
) -> Any:
    """``off + i * stride`` for an index ``i`` of an array dimension of ``dim`` elements,
    lanes out of bounds reported (``check``) and made 0."""
    if type(i) is not np.ndarray and type(off) is not np.ndarray:
        k = int(i)  # a uniform index (an unrolled loop's counter): no lane arrays
        if 0 <= k < dim:
            return off + k * stride
    i = np.asarray(i)
    if i.dtype != np.int64:
        i = i.astype(np.int64)
    # two reductions decide; the lane mask only when some index is out of range
    if i.size and (i.min() < 0 or i.max() >= dim):
        bad = (i < 0) | (i >= dim)
        if check:
            fr.batch.launch.fail_lanes(
                fr,
                bad,
                "out-of-bounds",
                f"index out of bounds for array `{name}` (dimension of {dim})",
                loc,
                name,
                i,
            )
        i = np.where(bad, 0, i)
    return (off + i * stride) if stride != 1 else off + i


def _lead(t: Any) -> int:
    return 1 if isinstance(t, VectorType) else 0


def _root(e: Expr) -> Var | None:
    while isinstance(e, Index):
        e = e.base
    return e.var if isinstance(e, VarRef) else None


def _root_name(e: Expr) -> str:
    while isinstance(e, Index):
        e = e.base
    return e.var.name if isinstance(e, VarRef) else "?"
