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

    def _index(self, fr: Frame, addr: Value) -> tuple[Any, ...]:
        return (addr,)

    def _check(self, fr: Frame, addr: Value, loc: Loc, write: bool) -> Value:
        """Bounds check (reports) and returns a safe index array."""
        launch = self.launch
        a = addr
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
        a = self._check(fr, addr, loc, False)
        if self.shadow is not None:
            self.shadow.read(fr, self._flat(fr, a), loc)
        raw = self.data[self._index(fr, a)]
        out = _from_raw(raw, self.elem)
        if isinstance(out, np.ndarray) and out.ndim == 0:
            return out[()]
        return out

    def store(self, fr: Frame, addr: Value, v: Value, loc: Loc) -> None:
        a = self._check(fr, addr, loc, True)
        launch = self.launch
        launch.stores += 1
        ab = np.broadcast_to(a, fr.shape)
        if self.shadow is not None:
            self.shadow.write(fr, self._flat(fr, ab), loc)
        _assign_raw(self.data, self._index(fr, ab), v, self.elem, fr.shape)

    def _flat(self, fr: Frame, a: Value) -> np.ndarray:
        return np.broadcast_to(a, fr.shape)


class GlobalMem(Memory):
    space = "global"


class ConstantMem(Memory):
    space = "constant"


class LocalMem(Memory):
    """Local memory of every work-group in the batch: ``data`` has a leading group axis."""

    space = "local"

    def _index(self, fr: Frame, addr: Value) -> tuple[Any, ...]:
        return (fr.gslot, addr)

    def _flat(self, fr: Frame, a: Value) -> np.ndarray:
        return np.broadcast_to(np.asarray(fr.gslot, dtype=np.int64) * self.count + a, fr.shape)

    def load(self, fr: Frame, addr: Value, loc: Loc) -> Value:
        out = super().load(fr, addr, loc)
        if self.shadow is not None and "uninit" in self.launch.checks:
            self.shadow.check_init(fr, self._flat(fr, np.asarray(addr)), loc, self)
        return out


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
