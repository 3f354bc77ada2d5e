"""Global, constant and local memory as NumPy arrays, with the memory checkers.

Every access goes through ``Memory.load``/``Memory.store`` with an element index per lane. The
index is first compiled into a ``Where`` (a slice when the lanes touch a run of consecutive
elements, a column slice of the ``(groups, count)`` local array when every group uses the same
indices, otherwise a flat gather/scatter); the data and the checkers' shadow arrays are then
read and written through the same ``Where``. With checks on, every access is bounds-checked
and recorded in the shadow memory (``sim.races``).
"""

from __future__ import annotations

import functools
import sys
from typing import Any

import numpy as np

from clpy.ir.nodes import Loc
from clpy.types.core import ScalarType, Type, VectorType
from clpy.types.structs import StructType
from clpy_sim import where as where_mod
from clpy_sim.affine import Run
from clpy_sim.frame import Frame
from clpy_sim.races import LocalShadow
from clpy_sim.races_global import GlobalShadow
from clpy_sim.state import Launch
from clpy_sim.values import full, same_contents
from clpy_sim.where import Where, row_grid, row_slice

Value = Any
# axis orders of np.moveaxis(a, -1, 0) and np.moveaxis(a, 0, -1), by a.ndim
_LAST_FIRST = {n: (n - 1, *range(n - 1)) for n in range(1, 8)}
_FIRST_LAST = {n: (*range(1, n), 0) for n in range(1, 8)}


def _from_raw(raw: np.ndarray, t: Type) -> Value:
    """Elements as stored (vectors with a trailing lane axis) → lane values."""
    if isinstance(t, VectorType):
        v = raw.transpose(_LAST_FIRST[raw.ndim])[: t.n]  # (np.moveaxis: µs of Python)
        # a uniform load has no lane axes; vectors keep (components, groups, items)
        return v.reshape(t.n, 1, 1) if v.ndim == 1 else v
    if isinstance(t, StructType):
        return {name: _from_raw(raw[name], ft) for name, ft in t.fields}
    if isinstance(raw, np.ndarray) and raw.ndim == 0:
        return raw[()]
    return raw


def _to_raw(v: Value, t: Type, shape: tuple[int, ...], trail: tuple[int, ...]) -> Any:
    if getattr(v, "shape", None) == shape and not isinstance(t, VectorType):
        return v
    if isinstance(t, VectorType):
        vv = np.broadcast_to(v, (t.n, *shape))
        vv = vv.transpose(_FIRST_LAST[vv.ndim])
        if t.n == 3 and trail == (4,):
            vv = np.concatenate([vv, np.zeros((*shape, 1), vv.dtype)], axis=-1)
        return vv
    return full(v, shape)


class Memory:
    """A buffer of elements of type ``elem``; ``space`` is global, constant or local."""

    space = "global"
    # a flat ``data`` array read and written through ``where`` as defined here (subclasses
    # with their own layout or ``where`` set False): loads may skip the ``Where``
    direct = False

    def __init__(self, name: str, elem: Type, data: np.ndarray, launch: Launch) -> None:
        self.name = name
        self.elem = elem
        self.data = data
        self.launch = launch
        self.count = data.shape[0]
        self.shadow: Any = None
        self.trail = data.shape[1:]

    def describe(self) -> str:
        return f"{self.space} memory `{self.name}`"

    def _check(self, fr: Frame, addr: Value, loc: Loc, write: bool) -> Value:
        """Bounds check (reports) and returns a safe index."""
        a = addr
        if isinstance(a, np.ndarray) and a.ndim:
            if (a.dtype.kind == "u" or a.min() >= 0) and a.max() < self.count:
                return a
        elif 0 <= a < self.count:
            return a
        launch = self.launch
        bad = (a < 0) | (a >= self.count)
        if "bounds" in launch.checks:
            launch.fail_lanes(
                fr,
                bad,
                "out-of-bounds",
                f"{'write to' if write else 'read of'} {self.describe()} "
                f"out of bounds (it has {self.count} elements)",
                loc,
                self.name,
                a,
            )
        return np.where(bad, 0, a)

    def where(self, fr: Frame, addr: Value, loc: Loc, write: bool) -> Where:
        first = fr.batch.run_of(addr)
        if (
            first is not None
            and first >= 0
            and first + addr.size <= self.count
            and addr.shape == fr.shape
        ):
            return Where("run", fr.shape, sl=first)
        a = self._check(fr, addr, loc, write)
        return Where("flat", fr.shape, idx=full(a, fr.shape))

    def element_indices(self, fr: Frame, addr: Value, loc: Loc, write: bool = True) -> np.ndarray:
        """Bounds-checked indices, one per lane (shape ``fr.shape``), into ``flat_data()``.
        For built-ins that access memory themselves (atomics: exempt from race checks)."""
        return np.broadcast_to(self.where(fr, addr, loc, write).flat(), fr.shape)

    def flat_data(self) -> np.ndarray:
        """The elements as one flat array (local memory: all work-groups' regions)."""
        return self.data

    def _run_where(self, fr: Frame, r: Run) -> Where | None:
        """The ``Where`` that ``where`` gives for the indices of ``r`` (a ``Run``) when they
        are in bounds and it would treat them as a run; None: make them an array first."""
        first = r.first
        if (
            r.step == 1
            and first >= 0
            and first + r.n <= self.count
            and r.shape == fr.shape
            and type(self).where is Memory.where
        ):
            return Where("run", fr.shape, sl=first)
        return None

    def load(self, fr: Frame, addr: Value, loc: Loc, copy: bool = True) -> Value:
        if type(addr) is Run:
            if self.direct and (self.shadow is None or not fr.batch.watch):
                first, n = addr.first, addr.n
                if addr.step == 1 and first >= 0 and first + n <= self.count:
                    v = self.data[first : first + n].reshape(*addr.shape, *self.trail)
                    return _from_raw(v.copy() if copy else v, self.elem)
            else:
                rw = self._run_where(fr, addr)
                if rw is not None:
                    if self.shadow is not None and fr.batch.watch:
                        self.shadow.read(fr, rw, loc)
                    return _from_raw(rw.gather(self.data, copy), self.elem)
            addr = addr.array(fr)
        if self.direct and (self.shadow is None or not fr.batch.watch):
            return self._load_direct(fr, addr, loc, copy)
        w = self.where(fr, addr, loc, False)
        if self.shadow is not None and fr.batch.watch:
            self.shadow.read(fr, w, loc)
        if w.kind == "flat" and not w.local_count and not isinstance(addr, np.ndarray):
            return _from_raw(self.data[int(w.idx.flat[0])], self.elem)  # uniform address
        return _from_raw(w.gather(self.data, copy), self.elem)

    def _load_direct(self, fr: Frame, addr: Value, loc: Loc, copy: bool) -> Value:
        """``load`` of a flat buffer that no shadow watches, without a ``Where``: a uniform
        address reads one element, a run of consecutive addresses a slice, any other a
        ``take`` in the address's own (possibly broadcast) shape."""
        if type(addr) is np.ndarray and addr.ndim:
            first = fr.batch.run_of(addr)
            n = addr.size
            if first is not None and first >= 0 and first + n <= self.count:
                v = self.data[first : first + n].reshape(*addr.shape, *self.trail)
                return _from_raw(v.copy() if copy else v, self.elem)
            a = self._check(fr, addr, loc, False)
            if a.dtype != np.intp and a.size >= _INTP_MIN:
                a = a.astype(np.intp)  # (NumPy converts other dtypes more slowly itself)
            return _from_raw(self.data.take(a, axis=0), self.elem)
        i = int(addr)
        if not 0 <= i < self.count:
            i = int(self._check(fr, addr, loc, False))
        return _from_raw(self.data[i], self.elem)

    def store(self, fr: Frame, addr: Value, v: Value, loc: Loc) -> None:
        if type(addr) is Run:
            rw = None if fr.batch.watching else self._run_where(fr, addr)
            if rw is None:
                addr = addr.array(fr)
            else:
                fr.batch.stores += 1
                if self.shadow is not None and fr.batch.watch:
                    self.shadow.write(fr, rw, loc)
                if not self._adopt(fr, rw, v):
                    self._put(rw, v, fr.shape)
                return
        if fr.batch.watching:
            self._store_watched(fr, addr, v, loc)
            return
        fr.batch.stores += 1
        if (
            self.direct
            and type(addr) is not np.ndarray
            and self.shadow is None
            and type(self.elem) is ScalarType
        ):
            # a uniform address: every lane writes the same element, the last lane (in the
            # order a scatter would write them) wins
            i = int(addr)
            if not 0 <= i < self.count:
                i = int(self._check(fr, addr, loc, True))
            if type(v) is np.ndarray and v.ndim:
                v = v[(-1,) * v.ndim]
            self.data[i] = v
            return
        w = self.where(fr, addr, loc, True)
        if self.shadow is not None and fr.batch.watch:
            self.shadow.write(fr, w, loc)
        if self._adopt(fr, w, v):
            return
        self._put(w, v, fr.shape)

    def _store_watched(self, fr: Frame, addr: Value, v: Value, loc: Loc) -> None:
        """``store`` inside a ``while`` loop that the no-progress checker watches: it counts
        as progress only when the elements it writes change (``x[i] = x[i]`` spins)."""
        w = self.where(fr, addr, loc, True)
        if self.shadow is not None and fr.batch.watch:
            self.shadow.write(fr, w, loc)
        before = w.gather(self.data, True)
        self._put(w, v, fr.shape)
        if not same_contents(before, w.gather(self.data, False)):
            fr.batch.stores += 1

    def _adopt(self, fr: Frame, w: Where, v: Value) -> bool:
        """Take ``v`` as the new contents instead of copying it in (local memory only)."""
        return False

    def _put(self, w: Where, v: Value, shape: tuple[int, int]) -> None:
        _put_raw(self.data, w, v, self.elem, shape)


def _put_raw(data: np.ndarray, w: Where, v: Value, t: Type, shape: tuple[int, int]) -> None:
    if isinstance(t, StructType):
        for name, ft in t.fields:
            _put_raw(data[name], w, v[name], ft, shape)
        return
    trail = data.shape[2:] if w.local_count else data.shape[1:]
    w.put(data, _to_raw(v, t, shape, trail))


class GlobalMem(Memory):
    space = "global"
    direct = True


class ConstantMem(Memory):
    space = "constant"
    direct = True


class LocalMem(Memory):
    """Local memory of every work-group in the batch: ``data`` has a leading group axis.

    Accesses whose index is the same in every work-group (shape ``(1, w)``, e.g. ``tmp[lid]``)
    become column slices or ``take``s of the ``(groups, count)`` array, which is what makes
    barrier-heavy kernels fast; other accesses use flat indices.
    """

    space = "local"

    def __init__(self, name: str, elem: Type, data: np.ndarray, launch: Launch) -> None:
        super().__init__(name, elem, data, launch)
        self.count = data.shape[1]
        self.trail = data.shape[2:]
        self.shared = False  # ``data`` was adopted from a lane value (``_adopt``)
        # compiled indices, by element count, index and frame shape: shared by every local
        # memory (a ``Where`` depends on nothing else), so launches repeating the same
        # geometry and indices (LU's diagonal kernel, NW's anti-diagonals) find them again
        self._wheres: dict[Any, Where] = _WHERES

    def flat_data(self) -> np.ndarray:
        self._unshare()
        return self.data.reshape(-1, *self.trail)

    def _put(self, w: Where, v: Value, shape: tuple[int, int]) -> None:
        self._unshare()
        _put_raw(self.data, w, v, self.elem, shape)

    def _adopt(self, fr: Frame, w: Where, v: Value) -> bool:
        """A store of a whole ``(groups, count)`` lane value (``tmp[lid] = v`` with
        ``count`` work-items and every group present) makes ``v``'s array the memory's
        contents instead of copying it in: ``data`` then shares it with the variable that
        holds ``v``. Neither side changes it in place while the other may still see it:
        variables are only updated in place when nothing else refers to their array
        (``sim.stmts.exclusive``, ``Frame.merge``), and the next write into this memory copies
        ``data`` first while anything else refers to it (``_unshare``)."""
        data = self.data
        if (
            type(v) is not np.ndarray
            or w.kind != "slice"
            or type(w.rows) is not slice
            or w.rows != _ALL
            or w.sl != slice(0, self.count)
            or v.shape != data.shape
            or v.dtype != data.dtype
            or v.base is not None
            or not v.flags.c_contiguous
            or not v.flags.writeable
            or not isinstance(self.elem, ScalarType)
        ):
            return False
        fr.batch.forget_run(v)
        self.data = v
        self.shared = True
        return True

    def _unshare(self) -> None:
        """Before a write: copy ``data`` if a store adopted it and something else may still
        refer to it (reference count beyond this object's attribute)."""
        if self.shared:
            if sys.getrefcount(self.data) > _ATTR_REFS:
                self.data = self.data.copy()
            self.shared = False

    def _run_where(self, fr: Frame, r: Run) -> Where | None:
        """``where``'s column slice for a ``Run`` of indices that is the same in every group
        (shape ``(1, w)``), in bounds: a slice of step ``r.step`` (NW's anti-diagonals step by
        -16), the same elements in the same order as a ``take`` of the run's indices.

        Made anew for every access, not remembered: the tests below and the ``Where`` cost
        about what a memo's key and lookup cost, and a memo of every index a loop moves
        through (NW: ~8,000 per run, each seen once) churned the garbage collector."""
        gs = fr.gslot
        shape = r.shape
        if not (
            len(shape) == 2
            and shape[0] == 1
            and type(gs) is np.ndarray
            and gs.ndim == 2
            and gs.shape[1] == 1
        ):
            return None
        first, step = r.first, r.step
        last = first + step * (r.n - 1)
        c = self.count
        if first < 0 or last < 0 or first >= c or last >= c:
            return None
        stop: int | None = last + step
        if stop is not None and stop < 0:
            stop = None  # (a negative stop would count from the end)
        rows: Any = _ALL if gs.shape[0] == self.data.shape[0] else gs[:, 0]
        return Where("slice", fr.shape, rows=rows, sl=slice(first, stop, step), local_count=c)

    def _remember(self, key: Any, w: Where) -> None:
        """Keep ``w`` for the next access with the same indices (``Where`` objects are never
        changed once made, bar the flat indices they compute once)."""
        if len(self._wheres) >= _WHERE_MEMO_MAX:
            self._wheres.clear()
        self._wheres[key] = w

    def where(self, fr: Frame, addr: Value, loc: Loc, write: bool) -> Where:
        c = self.count
        gs = fr.gslot
        memo = None
        if (
            type(addr) is np.ndarray
            and not addr.flags.writeable
            and type(gs) is np.ndarray
            and gs.ndim == 2
            and gs.shape[1] != 1
        ):
            # a read-only index array (``lvalues._tile2d``'s remembered element indices) of a
            # frame of any lanes: its flat ``Where`` is remembered by the frame while no
            # checker watches (hotspot's ``t[ty][tx]`` of several tiles per trip)
            if self.shadow is None or not fr.batch.watch:
                memo = fr.cache.get(_FLAT_MEMO)
                if memo is None:
                    memo = fr.cache[_FLAT_MEMO] = {}
                hit = memo.get((id(addr), c))
                if hit is not None and hit[0] is addr and hit[1] is gs and hit[2] == fr.shape:
                    return hit[3]
        if (
            type(addr) is not np.ndarray
            and type(gs) is np.ndarray
            and gs.ndim == 2
            and gs.shape[1] == 1
            and gs.shape[0] == self.data.shape[0]
        ):
            # a uniform index with every group present (``tile[j * BS + i]`` in a loop): the
            # element's column of every group, remembered per index
            k = int(addr)
            if 0 <= k < c:
                key = (c, k, fr.shape)
                w = self._wheres.get(key)
                if w is None:
                    w = Where("col", fr.shape, rows=np.arange(gs.shape[0]), idx=k, local_count=c)
                    self._remember(key, w)
                return w
        first = fr.batch.run_of(addr)
        if (
            first is not None
            and addr.shape[0] == 1
            and first >= 0
            and first + addr.shape[1] <= c
            and gs.shape[1] == 1
        ):
            rows0: Any = slice(None) if gs.shape[0] == self.data.shape[0] else gs[:, 0]
            return Where(
                "slice", fr.shape, rows=rows0, sl=slice(first, first + addr.shape[1]), local_count=c
            )
        if (
            type(addr) is np.ndarray
            and addr.ndim == 2
            and addr.shape[0] == 1
            and 0 < addr.shape[1] <= _ROW_MEMO_MAX
            and type(gs) is np.ndarray
            and gs.ndim == 2
            and gs.shape[1] == 1
        ):
            # the same indices in every group (``tmp[ty * 16 + tx]``): the index row's bounds
            # and shape are remembered by its contents, which repeat across trips and launches
            lo, hi, sl, idx, uniq, grid = _row_info(addr.dtype.str, addr.tobytes())
            if lo >= 0 and hi < c:
                rows1: Any = slice(None) if gs.shape[0] == self.data.shape[0] else gs[:, 0]
                if sl is not None:
                    return Where("slice", fr.shape, rows=rows1, sl=sl, local_count=c)
                return Where(
                    "take", fr.shape, rows=rows1, idx=idx, local_count=c, unique=uniq, grid=grid
                )
        a = self._check(fr, addr, loc, write)
        if isinstance(gs, np.ndarray) and gs.ndim == 2 and gs.shape[1] == 1:
            rows: Any = slice(None) if gs.shape[0] == self.data.shape[0] else gs[:, 0]
            if not isinstance(a, np.ndarray) or a.ndim == 0:
                return Where(
                    "col",
                    fr.shape,
                    rows=rows if not isinstance(rows, slice) else np.arange(gs.shape[0]),
                    idx=int(a),
                    local_count=c,
                )
            if a.shape[0] == 1:
                sl = row_slice(a[0])
                if sl is not None:
                    return Where("slice", fr.shape, rows=rows, sl=sl, local_count=c)
                return Where("take", fr.shape, rows=rows, idx=a[0].astype(np.intp), local_count=c)
        flat = np.broadcast_to(
            np.asarray(gs, dtype=np.int64) * c + np.asarray(a, np.int64), fr.shape
        )
        w = Where("flat", fr.shape, idx=flat, local_count=c)
        if memo is not None and a is addr:  # (in bounds: nothing reported)
            if len(memo) >= _FLAT_MEMO_MAX:
                memo.clear()
            memo[(id(addr), c)] = (addr, gs, fr.shape, w)
        return w


_ALL = slice(None)
_FLAT_MEMO = "local-flat-where"  # ``Frame.cache`` key of ``LocalMem.where``'s memo
_FLAT_MEMO_MAX = 16
_WHERE_MEMO_MAX = 4096  # compiled local indices kept (``LocalMem._remember``)
_INTP_MIN = 1024  # index arrays from this many lanes are made intp before a take
_WHERES: dict[Any, Where] = {}  # ``LocalMem._wheres`` of every local memory
_ROW_MEMO_MAX = 1024  # index rows up to this many lanes are remembered (``_row_info``)


@functools.lru_cache(maxsize=1024)
def _row_info(
    dtype: str, raw: bytes
) -> tuple[int, int, slice | None, np.ndarray, bool, tuple[int, int, int, int, int] | None]:
    """(least, greatest, the run as a slice or None, the indices as intp, whether they are
    all different, the row as a 2-D grid or None: ``where.row_grid``) of an index row given by
    its dtype and bytes."""
    row = np.frombuffer(raw, dtype=np.dtype(dtype))
    idx = row.astype(np.intp)
    idx.flags.writeable = False
    uniq = len(np.unique(idx)) == len(idx)
    sl = row_slice(row)
    grid = row_grid(row) if sl is None and where_mod.GRID else None
    return int(row.min()), int(row.max()), sl, idx, uniq, grid


def _calibrate_attr() -> int:
    """What ``_unshare`` sees for an array that only an attribute refers to."""

    class Holder:
        def __init__(self) -> None:
            self.data = np.zeros(2)

        def count(self) -> int:
            return sys.getrefcount(self.data)

    return Holder().count()


_ATTR_REFS = _calibrate_attr()


def make_local(
    launch: Launch, name: str, elem: Type, count: int, G: int, watch: bool = True
) -> LocalMem:
    """Local memory of ``G`` work-groups; with a shadow for the checkers when ``watch``."""
    if isinstance(elem, VectorType):
        data = np.zeros((G, count, 4 if elem.n == 3 else elem.n), dtype=elem.elem.dtype)
    elif isinstance(elem, (ScalarType, StructType)):
        data = np.zeros((G, count), dtype=elem.dtype)
    else:
        raise TypeError(f"local memory of {elem} is not supported")
    mem = LocalMem(name, elem, data, launch)
    if watch and launch.checks & {"races", "uninit"}:
        mem.shadow = LocalShadow(launch, G, count, mem)
    return mem


def make_global(
    launch: Launch, name: str, elem: Type, arr: np.ndarray, constant: bool, written: bool = True
) -> Memory:
    data: np.ndarray
    if isinstance(elem, VectorType):
        data = arr.reshape(-1, 4 if elem.n == 3 else elem.n)
    else:
        data = arr.reshape(-1)
    cls = ConstantMem if constant else GlobalMem
    mem = cls(name, elem, data, launch)
    # a buffer the kernel never writes cannot take part in a race
    if "races" in launch.checks and not constant and written:
        mem.shadow = GlobalShadow(launch, mem.count, mem)
        if launch.saved is not None:  # made during a parallel launch (sim/parallel.py)
            launch.saved.append((mem, mem.data.copy()))
    return mem
