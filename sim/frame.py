"""Frames: a set of work-items (lanes) executing together, and lane compaction.

The root frame of a batch has shape ``(G, W)``: G work-groups of W work-items. Values
broadcast against that shape, so a value that is the same in every group (``get_local_id``)
has shape ``(1, W)`` and one that is the same within each group (``get_group_id``) ``(G, 1)``.

Divergent control flow never runs under a mask: the lanes that take a branch are *compacted*
into a sub-frame (``Frame.sub``) whose values are gathered lazily from the parent on first
use, and the variables the branch assigns are scattered back (``Frame.merge``). Three kinds of
selection keep the broadcast structure where they can:

- ``Rows``: whole work-groups (a condition uniform within each group);
- ``Cols``: the same work-items of every group (a condition on local ids only, e.g. the
  ``lid < s`` of a tree reduction) — memory traffic then scales with the active lanes;
- ``Flat``: any other subset, as shape ``(1, K)``.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.ir.nodes import NOWHERE
from clpy_sim.errors import Report, SimulationError

if TYPE_CHECKING:
    from clpy_sim.state import Batch

Value = Any


@dataclass
class PtrVal:
    """A pointer: a memory object and an element offset (a lane value)."""

    mem: Any
    off: Value


class Sel:
    """How a sub-frame's lanes are chosen from its parent's."""

    shape: tuple[int, int]

    def gather(self, v: Value) -> Value:
        raise NotImplementedError

    def scatter(self, full: np.ndarray, v: Value) -> None:
        raise NotImplementedError


class Rows(Sel):
    def __init__(self, rows: np.ndarray, w: int) -> None:
        self.rows = rows
        self.shape = (len(rows), w)

    def gather(self, v: Value) -> Value:
        if not isinstance(v, np.ndarray) or v.ndim < 2 or v.shape[-2] == 1:
            return v
        return v[..., self.rows, :]

    def scatter(self, full: np.ndarray, v: Value) -> None:
        full[..., self.rows, :] = v


class Cols(Sel):
    def __init__(self, cols: np.ndarray, g: int) -> None:
        self.cols = cols
        self.shape = (g, len(cols))
        # a contiguous run is a slice: views instead of copies
        n = len(cols)
        self.slice = (
            slice(int(cols[0]), int(cols[0]) + n)
            if n and int(cols[-1]) - int(cols[0]) == n - 1
            else None
        )

    def gather(self, v: Value) -> Value:
        if not isinstance(v, np.ndarray) or v.ndim < 2 or v.shape[-1] == 1:
            return v
        return v[..., self.slice if self.slice is not None else self.cols]

    def scatter(self, full: np.ndarray, v: Value) -> None:
        full[..., self.slice if self.slice is not None else self.cols] = v


class Flat(Sel):
    """Any subset of the lanes, in work-item (C) order, by their flat indices: ``take`` and
    ``put`` with integer indices are several times faster than boolean-mask indexing."""

    def __init__(self, mask: np.ndarray, parent_shape: tuple[int, int]) -> None:
        self.mask = mask
        self.parent_shape = parent_shape
        self.idx = np.flatnonzero(mask)
        self.shape = (1, len(self.idx))
        self._rc: tuple[np.ndarray, np.ndarray] | None = None

    def _rows_cols(self) -> tuple[np.ndarray, np.ndarray]:
        """The selected lanes' group slots and columns (for values broadcast along one)."""
        if self._rc is None:
            w = self.parent_shape[1]
            if w & (w - 1) == 0:  # a power of two (most work-groups): shift and mask, the
                # same quotient and remainder of these non-negative indices ~5x faster
                k = w.bit_length() - 1
                self._rc = (self.idx >> k, self.idx & (w - 1))
            else:
                self._rc = divmod(self.idx, w)
        return self._rc

    def gather(self, v: Value) -> Value:
        if not isinstance(v, np.ndarray) or v.ndim < 2:
            return v
        g, w = v.shape[-2:]
        if g == 1 and w == 1:
            return v
        lead = v.shape[:-2]
        if (g, w) == self.parent_shape:
            out = v.reshape(*lead, g * w).take(self.idx, axis=-1)
        elif g == 1 and w == self.parent_shape[1]:
            out = v[..., 0, :].take(self._rows_cols()[1], axis=-1)
        elif w == 1 and g == self.parent_shape[0]:
            out = v[..., 0].take(self._rows_cols()[0], axis=-1)
        else:
            out = np.broadcast_to(v, (*lead, *self.parent_shape))[..., self.mask]
        return out[..., None, :]

    def scatter(self, full: np.ndarray, v: Value) -> None:
        lead = full.shape[:-2]
        vals = np.broadcast_to(v, (*lead, *self.shape))[..., 0, :]
        if full.flags.c_contiguous and full.shape[-2:] == self.parent_shape:
            flat = full.reshape(*lead, -1)  # a view: writes land in ``full``
            if lead:
                flat[..., self.idx] = vals
            else:
                flat[self.idx] = vals
            return
        full[..., self.mask] = vals


def gather(sel: Sel, v: Value) -> Value:
    if isinstance(v, np.ndarray):
        return sel.gather(v)
    if isinstance(v, PtrVal):
        return PtrVal(v.mem, sel.gather(v.off))
    if isinstance(v, dict):
        return {k: gather(sel, x) for k, x in v.items()}
    return v


def scatter_value(parent_shape: tuple[int, int], sel: Sel, old: Value, new: Value) -> Value:
    """``old`` (a parent value) with the selected lanes replaced by ``new``."""
    if isinstance(new, dict):
        return {k: scatter_value(parent_shape, sel, old[k], new[k]) for k in new}
    if isinstance(new, PtrVal):
        if not isinstance(old, PtrVal) or old.mem is not new.mem:
            if isinstance(old, PtrVal) and old.mem is None:
                return new  # never pointed anywhere before (declared, unassigned)
            raise _pointer_mix()
        return PtrVal(new.mem, scatter_value(parent_shape, sel, old.off, new.off))
    o = np.asarray(old)
    n = np.asarray(new)
    lead = n.shape[:-2] if n.ndim > 2 else o.shape[:-2] if o.ndim > 2 else ()
    dt = o.dtype if o.dtype == n.dtype else np.result_type(o.dtype, n.dtype)
    shape = (*lead, *parent_shape)
    if o.shape == shape and o.dtype == dt:
        full = o.copy()
    else:
        full = np.empty(shape, dtype=dt)
        full[...] = o
    sel.scatter(full, n)
    return full


def _owned(old: Any, shape: tuple[int, int], new: Any) -> bool:
    """``old`` is a full-shape array that nothing but the caller's local variable refers to
    (CPython reference count), so scattering into it in place cannot be observed."""
    if type(old) is not np.ndarray or old.base is not None or not old.flags.writeable:
        return False
    if old.shape[-2:] != shape or old.dtype != getattr(new, "dtype", None):
        return False
    if np.ndim(new) > 2 and old.shape[:-2] != np.shape(new)[:-2]:
        return False
    # references: the caller's variable, this parameter and getrefcount's argument
    return sys.getrefcount(old) <= _OWNED_REFS


def _calibrate_owned() -> int:
    """What ``_owned`` sees for an array only the caller's local variable holds."""

    def count(old: Any) -> int:
        return sys.getrefcount(old)

    def caller() -> int:
        old = np.zeros(2)
        return count(old)

    return caller()


_OWNED_REFS = _calibrate_owned()


def _pointer_mix() -> Exception:
    return SimulationError(
        [
            Report(
                "unsupported",
                "a pointer variable points into different memory objects in different work-items",
                NOWHERE,
            )
        ]
    )


def select_lanes(c: Value, shape: tuple[int, int]) -> Sel | bool:
    """Compaction for the lanes where the bool lane value ``c`` is true; True/False when all
    or none are (the caller then runs the whole frame or nothing)."""
    if not isinstance(c, np.ndarray) or c.ndim == 0:
        return bool(c)
    if c.ndim == 1 and c.size == 1:  # a uniform value a NumPy helper made 1-d
        return bool(c[0])
    g, w = shape
    cg, cw = c.shape
    if cg == 1 and cw == 1:
        return bool(c[0, 0])
    if cg == 1:
        if cw <= _COLS_MEMO_MAX:  # conditions on local ids repeat: remembered by contents
            return _cols_of(c.dtype.str, c.tobytes(), g)
        return _cols(c[0], g)
    if cw == 1:
        col = c[:, 0]
        rows = np.flatnonzero(col)
        if len(rows) == cg:
            return True
        if len(rows) == 0:
            return False
        return Rows(rows, w)
    n = int(np.count_nonzero(c))
    if n == c.size:
        return True
    if n == 0:
        return False
    return Flat(c, (g, w))


def select_on(
    fr: Frame,
    c: Value,
    T: Callable[[Frame], Value],
    F: Callable[[Frame], Value],
    shape_of: Callable[[Value], Value],
) -> Value:
    """``c ? T : F`` on the lanes of ``fr`` given the condition's value ``c``: each side on
    the lanes that take it only (lane compaction), scattered into one value."""
    sel = select_lanes(c, fr.shape)
    if sel is True:
        return T(fr)
    if sel is False:
        return F(fr)
    nsel = select_lanes(np.logical_not(c), fr.shape)
    assert not isinstance(nsel, bool)
    vt = T(fr.sub(sel))
    vf = F(fr.sub(nsel))
    base = scatter_value(fr.shape, sel, shape_of(vt), vt)
    return scatter_value(fr.shape, nsel, base, vf)


def _cols(row: np.ndarray, g: int) -> Cols | bool:
    cols = np.flatnonzero(row)
    if len(cols) == len(row):
        return True
    if len(cols) == 0:
        return False
    return Cols(cols, g)


_COLS_MEMO_MAX = 1024


@functools.lru_cache(maxsize=1024)
def _cols_of(dtype: str, raw: bytes, g: int) -> Cols | bool:
    """``select_lanes`` of a ``(1, w)`` condition given by its dtype and bytes (a ``Cols``
    is never changed once made, so frames may share one)."""
    return _cols(np.frombuffer(raw, dtype=np.dtype(dtype)), g)


class Frame:
    """Lanes executing in lockstep, their variables and their lane coordinates.

    ``gslot``: index of each lane's work-group in the batch (shape (G, 1) at the root);
    ``llid``: local linear id (shape (1, W) at the root). ``complete``: every work-group present
    has all its work-items here (a barrier may be reached).
    """

    __slots__ = (
        "batch",
        "parent",
        "sel",
        "shape",
        "env",
        "gslot",
        "llid",
        "cache",
        "complete",
        "views",
    )

    def __init__(
        self,
        batch: Batch,
        shape: tuple[int, int],
        gslot: Value,
        llid: Value,
        parent: Frame | None = None,
        sel: Sel | None = None,
        complete: bool = True,
    ) -> None:
        self.batch = batch
        self.parent = parent
        self.sel = sel
        self.shape = shape
        self.env: dict[Any, Value] = {}
        self.gslot = gslot
        self.llid = llid
        self.cache: dict[Any, Value] = {}
        self.complete = complete
        # values gathered from the parent as views of its arrays (a column slice): when the
        # same object comes back at a merge, its lanes are already in the parent's array
        self.views: dict[Any, Value] = {}

    def get(self, key: Any) -> Value:
        env = self.env
        if key in env:
            return env[key]
        p = self.parent
        if p is None:
            raise KeyError(key)
        sel = self.sel
        assert sel is not None
        pv = p.get(key)
        v = gather(sel, pv)
        if type(sel) is Cols and sel.slice is not None and type(pv) is np.ndarray and v is not pv:
            if pv.base is None:
                self.views[key] = v
            if pv.ndim == 2 and pv.shape[0] == 1:
                fs = self.batch.ramp_of(pv)
                if fs is not None:  # a slice of a row of ids in steps is one too
                    self.batch.note_run(v, fs[0] + sel.slice.start * fs[1], fs[1])
        env[key] = v
        return v

    def has(self, key: Any) -> bool:
        f: Frame | None = self
        while f is not None:
            if key in f.env:
                return True
            f = f.parent
        return False

    def sub(self, sel: Sel) -> Frame:
        complete = self.complete and isinstance(sel, Rows)
        return Frame(
            self.batch,
            sel.shape,
            sel.gather(self.gslot),
            sel.gather(self.llid),
            self,
            sel,
            complete,
        )

    def scope(self) -> Frame:
        """A frame with the same lanes and a fresh variable scope (device function call)."""
        f = Frame(self.batch, self.shape, self.gslot, self.llid, None, None, self.complete)
        f.cache = self.cache
        return f

    def merge(self, sub: Frame, keys: frozenset[Any] | tuple[Any, ...]) -> None:
        """Scatter the variables ``keys`` assigned in ``sub`` back into this frame."""
        sel = sub.sel
        assert sel is not None
        views = sub.views
        news = [(k, sub.env[k]) for k in keys if k in sub.env]
        if not news:
            return
        same = {k for k, new in news if views.get(k) is new}
        views.clear()
        # drop the sub-frame's views of our values, so that values only we hold can be
        # updated in place (see _owned)
        sub.env.clear()
        for k, new in news:
            if k in self.env:
                old = self.env.pop(k)
            elif self.has(k):
                old = self.get(k)
                del self.env[k]
            else:
                continue
            if k in same and type(new) is np.ndarray and new.base is old:
                self.env[k] = old  # unchanged, or updated in place through the view
            elif _owned(old, self.shape, new):
                self.batch.forget_run(old)
                sel.scatter(old, new)
                self.env[k] = old
            else:
                self.env[k] = scatter_value(self.shape, sel, old, new)
            del old

    def expand(self, sub: Frame, m: Value) -> np.ndarray:
        """A bool mask of ``sub``'s lanes, in this frame's lane coordinates."""
        assert sub.sel is not None
        full = np.zeros(self.shape, dtype=bool)
        sub.sel.scatter(full, np.broadcast_to(np.asarray(m, dtype=bool), sub.shape))
        return full

    @property
    def size(self) -> int:
        return self.shape[0] * self.shape[1]


def exclusive(old: np.ndarray, known: int = 0) -> bool:
    """Whether ``old`` (a frame's variable value) may be updated in place: nothing else refers
    to it, or it is a sub-frame's view of a parent's value that nothing else refers to (the
    update is then exactly what the merge would write). CPython reference counts: the env
    entry, the caller's variable, this function's parameter and getrefcount's argument;
    ``known`` more references that are the frame's own bookkeeping (``Frame.views``)."""
    base = old.base
    if base is None:
        return sys.getrefcount(old) <= _OWN_REFS + known
    return (
        type(base) is np.ndarray
        and base.base is None
        and base.flags.writeable
        and sys.getrefcount(old) <= _OWN_REFS + known
        and sys.getrefcount(base) <= _BASE_REFS
    )


def _calibrate() -> tuple[int, int]:
    """The reference counts ``exclusive`` sees for values nothing else refers to, measured
    through the same call pattern (an env dict, a caller's local, this module's function), so
    that interpreters that count references differently stay on the safe side."""

    def count(o: np.ndarray) -> tuple[int, int]:
        b = o.base
        return sys.getrefcount(o), (sys.getrefcount(b) if b is not None else 0)

    def probe(env: dict[str, np.ndarray]) -> tuple[int, int]:
        old = env["v"]
        return count(old)

    parent = {"v": np.zeros((2, 3))}
    own, _ = probe({"v": np.zeros((2, 3))})
    _, base = probe({"v": parent["v"][:, 1:]})
    return own, base


_OWN_REFS, _BASE_REFS = _calibrate()
