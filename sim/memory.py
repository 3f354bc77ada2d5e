"""Global, constant and local memory as NumPy arrays, with the memory checkers.

Every access goes through ``Memory.load``/``Memory.store`` with an element index per lane.
With checks on, each access is bounds-checked and recorded in a shadow memory used to find
data races between barriers (``sim.races``) and reads of never-written local memory.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from clpy.ir.nodes import Loc
from clpy.types.core import ScalarType, Type, VectorType
from clpy.types.structs import StructType
from sim.frame import Frame
from sim.races import Shadow
from sim.state import Launch

Value = Any


def _from_raw(raw: np.ndarray, t: Type) -> Value:
    """Elements as stored (vectors with a trailing lane axis) → lane values."""
    if isinstance(t, VectorType):
        return np.moveaxis(raw, -1, 0)[: t.n]
    if isinstance(t, StructType):
        return {name: _from_raw(raw[name], ft) for name, ft in t.fields}
    return raw


def _assign_raw(dst: np.ndarray, idx: tuple[Any, ...], v: Value, t: Type, shape: tuple[int, ...]
                ) -> None:
    """``dst[idx] = v`` for lane values of type ``t`` broadcast to the lane ``shape``."""
    if isinstance(t, VectorType):
        vv = np.broadcast_to(v, (t.n, *shape))
        if t.n == 3 and dst.shape[-1] == 4:
            dst[(*idx, slice(0, 3))] = np.moveaxis(vv, 0, -1)
        else:
            dst[idx] = np.moveaxis(vv, 0, -1)
        return
    if isinstance(t, StructType):
        for name, ft in t.fields:
            field = dst[name]
            _assign_raw(field, idx, v[name], ft, shape)
        return
    dst[idx] = np.broadcast_to(v, shape)


class Memory:
    """A buffer of elements of type ``elem``; ``space`` is global, constant or local."""

    space = "global"

    def __init__(self, name: str, elem: Type, data: np.ndarray, launch: Launch) -> None:
        self.name = name
        self.elem = elem
        self.data = data
        self.launch = launch
        self.count = data.shape[0]
        self.shadow: Shadow | None = None

    def describe(self) -> str:
        return f"{self.space} memory `{self.name}`"

    def _check(self, fr: Frame, addr: Value, loc: Loc, write: bool) -> Value:
        """Bounds check (reports) and returns a safe index array."""
        launch = self.launch
        a = addr
        if isinstance(a, np.ndarray) and a.ndim:
            signed = a.dtype.kind == "i"
            if (not signed or a.min() >= 0) and a.max() < self.count:
                return a
        elif 0 <= a < self.count:
            return a
        if "bounds" in launch.checks:
            bad = (a < 0) | (a >= self.count)
            if np.any(bad):
                launch.fail_lanes(fr, bad, "out-of-bounds",
                                  f"{'write to' if write else 'read of'} {self.describe()} "
                                  f"out of bounds (it has {self.count} elements)", loc,
                                  self.name, a)
                a = np.where(bad, 0, a)
        elif np.any((a < 0) | (a >= self.count)):
            a = np.clip(a, 0, max(self.count - 1, 0))
        return a

    def load(self, fr: Frame, addr: Value, loc: Loc) -> Value:
        first = fr.batch.run_of(addr)
        if first is not None and 0 <= first and first + addr.size <= self.count:
            if self.shadow is not None:
                self.shadow.read(fr, addr, loc)
            raw = self.data[first:first + addr.size].reshape(*addr.shape, *self.data.shape[1:])
            return _from_raw(raw.copy(), self.elem)
        a = self._check(fr, addr, loc, False)
        if self.shadow is not None:
            self.shadow.read(fr, self._flat(fr, a), loc)
        raw = np.take(self.data, a, axis=0) if isinstance(a, np.ndarray) else self.data[a]
        out = _from_raw(raw, self.elem)
        if isinstance(out, np.ndarray) and out.ndim == 0:
            return out[()]
        return out

    def store(self, fr: Frame, addr: Value, v: Value, loc: Loc) -> None:
        launch = self.launch
        launch.stores += 1
        first = fr.batch.run_of(addr)
        if first is not None and 0 <= first and first + addr.size <= self.count and \
                addr.shape == fr.shape:
            if self.shadow is not None:
                self.shadow.write(fr, addr, loc)
            view = self.data[first:first + addr.size].reshape(*addr.shape, *self.data.shape[1:])
            _assign_raw(view, (Ellipsis,), v, self.elem, fr.shape)
            return
        a = self._check(fr, addr, loc, True)
        ab = np.broadcast_to(a, fr.shape)
        if self.shadow is not None:
            self.shadow.write(fr, self._flat(fr, ab), loc)
        _assign_raw(self.data, (ab,), v, self.elem, fr.shape)

    def _flat(self, fr: Frame, a: Value) -> np.ndarray:
        return np.broadcast_to(a, fr.shape)


class GlobalMem(Memory):
    space = "global"


class ConstantMem(Memory):
    space = "constant"


def _row_slice(row: np.ndarray) -> slice | None:
    """``row`` as a slice when it is a run of consecutive indices (``tmp[lid + k]``)."""
    n = len(row)
    if n == 0:
        return None
    a0 = int(row[0])
    if int(row[-1]) - a0 != n - 1:
        return None
    if n > 2 and not bool((row[1:] - row[:-1] == 1).all()):
        return None
    return slice(a0, a0 + n)


class LocalMem(Memory):
    """Local memory of every work-group in the batch: ``data`` has a leading group axis.

    Accesses whose index is the same in every work-group (shape ``(1, w)``, e.g. ``tmp[lid]``)
    become column slices or ``take``s of the ``(groups, count)`` array, which is what makes
    barrier-heavy kernels fast; other accesses use flat indices.
    """

    space = "local"

    def _rows(self, fr: Frame) -> Any:
        gs = fr.gslot
        if not isinstance(gs, np.ndarray) or gs.ndim < 2 or gs.shape[1] != 1:
            return None
        if gs.shape[0] == self.data.shape[0]:
            return slice(None)
        return gs[:, 0]

    def _flat(self, fr: Frame, a: Value) -> np.ndarray:
        return np.broadcast_to(np.asarray(fr.gslot, dtype=np.int64) * self.count +
                               np.asarray(a, dtype=np.int64), fr.shape)

    def load(self, fr: Frame, addr: Value, loc: Loc) -> Value:
        a = self._check(fr, addr, loc, False)
        sh = self.shadow
        if sh is not None:
            flat = self._flat(fr, a)
            sh.read(fr, flat, loc)
            if "uninit" in self.launch.checks:
                sh.check_init(fr, flat, loc, self)
        raw = self._gather(fr, a)
        return _from_raw(raw, self.elem)

    def _gather(self, fr: Frame, a: Value) -> np.ndarray:
        data = self.data
        rows = self._rows(fr)
        if rows is not None:
            if not isinstance(a, np.ndarray) or a.ndim == 0:
                return data[rows, int(a)][:, None]
            if a.shape[0] == 1:
                row = a[0]
                sl = _row_slice(row)
                if sl is not None:
                    return data[rows, sl] if not isinstance(rows, slice) else data[:, sl].copy()
                src = data if isinstance(rows, slice) else data[rows]
                return np.take(src, row.astype(np.intp), axis=1)
        flat = self._flat(fr, a)
        return np.take(data.reshape(-1, *data.shape[2:]), flat, axis=0)

    def store(self, fr: Frame, addr: Value, v: Value, loc: Loc) -> None:
        a = self._check(fr, addr, loc, True)
        self.launch.stores += 1
        if self.shadow is not None:
            self.shadow.write(fr, self._flat(fr, a), loc)
        data = self.data
        rows = self._rows(fr)
        if rows is not None and isinstance(a, np.ndarray) and a.ndim == 2 and a.shape[0] == 1:
            sl = _row_slice(a[0])
            if sl is not None:
                _assign_raw(data, (rows, sl), v, self.elem, fr.shape)
                return
        flat = self._flat(fr, a)
        _assign_raw(data.reshape(-1, *data.shape[2:]), (flat,), v, self.elem, fr.shape)


def make_local(launch: Launch, name: str, elem: Type, count: int, G: int) -> LocalMem:
    if isinstance(elem, VectorType):
        data = np.zeros((G, count, 4 if elem.n == 3 else elem.n), dtype=elem.elem.dtype)
    elif isinstance(elem, (ScalarType, StructType)):
        data = np.zeros((G, count), dtype=elem.dtype)
    else:
        raise TypeError(f"local memory of {elem} is not supported")
    mem = LocalMem(name, elem, data, launch)
    mem.count = count
    if launch.checks & {"races", "uninit"}:
        mem.shadow = Shadow(launch, G * count, mem, local=True)
    return mem


def make_global(launch: Launch, name: str, elem: Type, arr: np.ndarray, constant: bool
                ) -> Memory:
    if isinstance(elem, VectorType):
        lanes = 4 if elem.n == 3 else elem.n
        data = arr.reshape(-1, lanes)
    else:
        data = arr.reshape(-1)
    cls = ConstantMem if constant else GlobalMem
    mem = cls(name, elem, data, launch)
    mem.count = data.shape[0]
    if "races" in launch.checks and not constant:
        mem.shadow = Shadow(launch, mem.count, mem, local=False)
    return mem
