"""``Where``: a memory index compiled for the lanes of one frame (``sim/memory.py``).

A run of consecutive elements is a slice, the same indices in every group's region of local
memory a column slice or ``take`` of the ``(groups, count)`` array, anything else flat element
indices; the data and the checkers' shadow arrays are read and written through the same
``Where``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# a ``take`` Where whose columns form a 2-D grid (``Where.grid``) reads and writes it as a
# strided view instead of a gather/scatter; read when a Where is made (tests compare both)
GRID = True
# elements read / written from which the view is used (measured: a take of fewer elements is
# as fast or faster, the view's own cost being a few microseconds)
_GRID_READ_MIN = 65536
_GRID_WRITE_MIN = 16384
_ALL = slice(None)


class Where:
    """A compiled memory index for the lanes of one frame (see the module docstring)."""

    __slots__ = ("kind", "rows", "sl", "idx", "shape", "local_count", "_flat", "unique", "grid")

    def __init__(
        self,
        kind: str,
        shape: tuple[int, int],
        rows: Any = None,
        sl: Any = None,
        idx: Any = None,
        local_count: int = 0,
        unique: bool = False,
        grid: tuple[int, int, int, int, int] | None = None,
    ) -> None:
        self.kind = kind
        # a "take" whose columns ``idx`` are ``first + sy * y + sx * x`` over ``(ny, nx)`` in C
        # order, with sx, sy > 0: ``(first, ny, nx, sy, sx)``, read and written as a strided
        # view of every group's row (the 2-D tiles of 2-D work-groups, ``tile[ly][lx + k]``);
        # the same elements in the same order as the take, which the checkers still see
        self.grid = grid
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
            if (
                self.grid is not None
                and src.shape[0] * len(self.idx) >= _GRID_READ_MIN
                and src.flags.c_contiguous
            ):
                out = _grid_view(src, self.grid).reshape(src.shape[0], len(self.idx), *trail)
                return out if out.flags.owndata else out.copy()
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
            if self.grid is not None:
                base = arr if self.rows == _ALL else arr[self.rows]
                if (
                    base.shape[0] * len(self.idx) >= _GRID_WRITE_MIN
                    and base.flags.c_contiguous
                    and base.flags.writeable
                ):
                    dst = _grid_view(base, self.grid)
                    vv = np.broadcast_to(v, (dst.shape[0], len(self.idx), *dst.shape[3:]))
                    dst[...] = vv.reshape(dst.shape)
                    return
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


def _grid_view(src: np.ndarray, grid: tuple[int, int, int, int, int]) -> np.ndarray:
    """The elements ``src[:, first + sy * y + sx * x]`` as a ``(rows, ny, nx, ...)`` view of
    C-contiguous ``src`` (``grid`` is in bounds of its columns, the steps positive; made with
    ``np.ndarray``: ``as_strided`` costs ~20 us of Python per call)."""
    first, ny, nx, sy, sx = grid
    st = src.strides
    return np.ndarray(
        (src.shape[0], ny, nx, *src.shape[2:]),
        src.dtype,
        buffer=src,
        offset=first * st[1],
        strides=(st[0], sy * st[1], sx * st[1], *st[2:]),
    )


def row_grid(row: np.ndarray) -> tuple[int, int, int, int, int] | None:
    """``(first, ny, nx, sy, sx)`` when ``row`` (not a run) is ``first + sy * y + sx * x`` for
    y < ny, x < nx in C order with both steps positive and ny, nx > 1 (``tile[ly][lx + k]``
    of a 2-D work-group, flattened row-major), else None."""
    n = len(row)
    if n < 4:
        return None
    r = row.astype(np.int64)
    f = int(r[0])
    sx = int(r[1]) - f
    if sx <= 0:
        return None
    d = r - (f + sx * np.arange(n, dtype=np.int64))
    off = np.flatnonzero(d)
    if len(off) == 0:
        return None  # one run: a slice already
    nx = int(off[0])
    if nx < 2 or n % nx:
        return None
    ny = n // nx
    sy = int(r[nx]) - f
    if sy <= 0:
        return None
    want = f + sy * np.arange(ny, dtype=np.int64)[:, None] + sx * np.arange(nx, dtype=np.int64)
    if not np.array_equal(want.reshape(-1), r):
        return None
    return f, ny, nx, sy, sx


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
