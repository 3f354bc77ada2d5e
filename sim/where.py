"""``Where``: a memory index compiled for the lanes of one frame (``sim/memory.py``).

A run of consecutive elements is a slice, the same indices in every group's region of local
memory a column slice or ``take`` of the ``(groups, count)`` array, anything else flat element
indices; the data and the checkers' shadow arrays are read and written through the same
``Where``.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class Where:
    """A compiled memory index for the lanes of one frame (see the module docstring)."""

    __slots__ = ("kind", "rows", "sl", "idx", "shape", "local_count", "_flat", "unique")

    def __init__(
        self,
        kind: str,
        shape: tuple[int, int],
        rows: Any = None,
        sl: Any = None,
        idx: Any = None,
        local_count: int = 0,
        unique: bool = False,
    ) -> None:
        self.kind = kind
        # no two lanes touch the same element (the checkers then skip their duplicate tests)
        self.unique = unique or kind == "run" or kind == "slice"
        self.shape = shape
        self.rows = rows
        self.sl = sl
        self.idx = idx
        self.local_count = local_count
        self._flat: np.ndarray | None = None  # ``flat()``, once computed (data and shadows)

    def gather(self, arr: np.ndarray, copy: bool = True) -> np.ndarray:
        """The lanes' elements of ``arr``; ``copy=False`` may return a view (for reads that
        do not outlive the access, like the checkers')."""
        k = self.kind
        trail = arr.shape[2:] if self.local_count else arr.shape[1:]
        if k == "run":
            n = self.shape[0] * self.shape[1]
            v = arr[self.sl : self.sl + n].reshape(*self.shape, *trail)
            return v.copy() if copy else v
        if k == "slice":
            if isinstance(self.rows, slice):
                return arr[:, self.sl].copy() if copy else arr[:, self.sl]
            return arr[self.rows, self.sl]
        if k == "take":
            src = arr if isinstance(self.rows, slice) else arr[self.rows]
            return src.take(self.idx, axis=1)  # (the method: np.take adds Python layers)
        if k == "col":
            return arr[self.rows, self.idx][:, None]
        flat = self.flat()
        src = arr.reshape(-1, *trail) if self.local_count else arr
        return src.take(flat, axis=0)

    def put(self, arr: np.ndarray, v: Any) -> None:
        k = self.kind
        if k == "run":
            n = self.shape[0] * self.shape[1]
            trail = arr.shape[1:]
            arr[self.sl : self.sl + n].reshape(*self.shape, *trail)[...] = v
            return
        if k == "slice":
            arr[self.rows, self.sl] = v
            return
        if k == "take" and self.unique and type(self.rows) is slice:
            # the same columns of every group's row, all different: one assignment along the
            # column axis, without the flat indices (a new ``Where`` per trip of a loop whose
            # index moves, as in NW's anti-diagonals, computed them for every store)
            arr[self.rows, self.idx] = v
            return
        trail = arr.shape[2:] if self.local_count else arr.shape[1:]
        dst = arr.reshape(-1, *trail) if self.local_count else arr
        dst[self.flat()] = v

    def flat(self) -> np.ndarray:
        """Element indices (into the flattened array), one per lane."""
        f = self._flat
        if f is None:
            f = self._flat = self._flat_indices()
        return f

    def _flat_indices(self) -> np.ndarray:
        if self.kind == "flat":
            # as intp: NumPy converts other index dtypes (OpenCL's int and uint) on every
            # fancy read and write, which made a 16k-lane scatter ~2x slower
            a = np.asarray(self.idx)
            return a if a.dtype == np.intp else a.astype(np.intp)
        if self.kind == "run":
            n = self.shape[0] * self.shape[1]
            return np.arange(self.sl, self.sl + n, dtype=np.int64).reshape(self.shape)
        c = self.local_count
        rows = np.arange(self.shape[0]) if isinstance(self.rows, slice) else self.rows
        rows = np.asarray(rows, dtype=np.int64)[:, None] * c
        if self.kind == "slice":  # (of any step: NW's anti-diagonals step by -16)
            cols = np.arange(c, dtype=np.int64)[self.sl][None, :]
        elif self.kind == "col":
            cols = np.asarray(self.idx, dtype=np.int64).reshape(1, 1)
        else:
            cols = np.asarray(self.idx, dtype=np.int64)[None, :]
        return np.broadcast_to(rows + cols, self.shape)


def row_slice(row: np.ndarray) -> slice | None:
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
