"""Basic indexing of ``clpy.DeviceArray`` (clpy/abi/device_array.py), as NumPy does it, on
the (shape, strides, byte offset) of a view of one device buffer.

What a device can address as one region is what can be indexed: integers (negative count
from the end, out of range is an ``IndexError``), slices with step 1 (out-of-range bounds are
clipped, as in NumPy), ``...`` and ``None``. A step other than 1 would make a strided view
that neither a kernel argument nor one copy can reach (``ValueError``); lists, arrays and
booleans are NumPy's fancy indexing, which gathers (``TypeError``).

``rect_blocks`` turns a view into the rectangular copies of OpenCL 1.1's
``clEnqueue{Read,Write,Copy}BufferRect`` (OpenCL 2.0 API spec §5.2.2: a region of up to three
dimensions, the first in bytes, with row and slice pitches).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Layout:
    """Where a view's elements are: ``offset`` bytes into the buffer, then NumPy strides."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int
    itemsize: int

    @staticmethod
    def contiguous(shape: tuple[int, ...], itemsize: int, offset: int = 0) -> Layout:
        strides = []
        s = itemsize
        for n in reversed(shape):
            strides.append(s)
            s *= max(n, 1)
        return Layout(tuple(shape), tuple(reversed(strides)), offset, itemsize)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    @property
    def c_contiguous(self) -> bool:
        """NumPy's rule: strides of a C array, length-1 axes ignored (empty: contiguous)."""
        if self.size == 0:
            return True
        want = self.itemsize
        for n, st in zip(reversed(self.shape), reversed(self.strides)):
            if n != 1 and st != want:
                return False
            want *= n
        return True

    def extent(self) -> tuple[int, int]:
        """[first byte, last byte + 1) the view touches in its buffer (empty: (offset, offset))."""
        if self.size == 0:
            return self.offset, self.offset
        last = sum((n - 1) * st for n, st in zip(self.shape, self.strides))
        return self.offset, self.offset + last + self.itemsize


def _where(ndim: int) -> str:
    return f"{ndim}-dimensional DeviceArray"


def index_layout(lay: Layout, key: Any) -> Layout:
    """The layout of ``view[key]``; a result with no axes is one element (a scalar read)."""
    if type(key) is slice and len(lay.shape) == 1:  # the common d[a:b]: what the loop gives
        start, stop, _ = _slice(key, lay.shape[0], 0)
        st = lay.strides[0]
        offset = lay.offset + (start * st if stop > start else 0)
        return Layout((max(stop - start, 0),), lay.strides, offset, lay.itemsize)
    items = key if isinstance(key, tuple) else (key,)
    n_ell = sum(1 for k in items if k is Ellipsis)
    if n_ell > 1:
        raise IndexError("DeviceArray index: an index can only have a single ellipsis ('...')")
    used = sum(1 for k in items if k is not None and k is not Ellipsis)
    ndim = len(lay.shape)
    if used > ndim:
        raise IndexError(
            f"DeviceArray index: too many indices: the array is {ndim}-dimensional, "
            f"but {used} were indexed"
        )
    if n_ell == 0:
        items = (*items, Ellipsis)
    shape: list[int] = []
    strides: list[int] = []
    offset = lay.offset
    axis = 0
    for k in items:
        if k is Ellipsis:
            take = ndim - used
            shape.extend(lay.shape[axis : axis + take])
            strides.extend(lay.strides[axis : axis + take])
            axis += take
            continue
        if k is None:
            shape.append(1)
            strides.append(0)
            continue
        n, st = lay.shape[axis], lay.strides[axis]
        if isinstance(k, slice):
            start, stop, step = _slice(k, n, axis)
            shape.append(max(stop - start, 0))
            strides.append(st)
            offset += start * st if stop > start else 0
        else:
            i = _integer(k, axis)
            if not -n <= i < n:
                raise IndexError(
                    f"DeviceArray index: index {i} is out of bounds for axis {axis} with size {n}"
                )
            offset += (i % n) * st
        axis += 1
    return Layout(tuple(shape), tuple(strides), offset, lay.itemsize)


def _slice(k: slice, n: int, axis: int) -> tuple[int, int, int]:
    try:
        start, stop, step = k.indices(n)
    except TypeError:
        raise TypeError(
            f"DeviceArray index: slice bounds must be integers or None, got {k!r} on axis {axis}"
        ) from None
    if step != 1:
        raise ValueError(
            f"DeviceArray index: slices take step 1, got step {step} on axis {axis}: a strided "
            "view is not one region of the device buffer; copy the range and step on the host "
            "(d[a:b].get()[::step]) or write a kernel that strides"
        )
    return start, stop, step


def _integer(k: Any, axis: int) -> int:
    if isinstance(k, (bool, np.bool_)):
        raise TypeError(
            f"DeviceArray index: a boolean index on axis {axis} is NumPy's mask indexing, which "
            "a DeviceArray does not do; index the host copy (d.get()[mask])"
        )
    if isinstance(k, (list, np.ndarray)) or hasattr(k, "__array__"):
        raise TypeError(
            f"DeviceArray index: arrays and lists as indices (fancy indexing, on axis {axis}) "
            "gather scattered elements, which a DeviceArray does not do; use integers, "
            "slices with step 1, '...' and None, or index the host copy (d.get()[idx])"
        )
    try:
        return operator.index(k)
    except TypeError:
        raise IndexError(
            "DeviceArray index: only integers, slices with step 1, '...' and None are valid "
            f"indices; got {type(k).__name__} {k!r} on axis {axis}"
        ) from None


@dataclass(frozen=True)
class Rect:
    """One rectangular copy: ``offset`` bytes into the buffer, ``region`` (bytes, rows,
    slices) and the buffer's row and slice pitches in bytes. The host side is packed."""

    offset: int
    region: tuple[int, int, int]
    pitches: tuple[int, int]


def rect_blocks(lay: Layout) -> Iterator[tuple[int, Rect]]:
    """The view as rectangular copies: (byte offset into a packed host copy, ``Rect``), one
    for views of up to three non-mergeable axes, one per outer index beyond."""
    dims = [(n, st) for n, st in zip(lay.shape, lay.strides) if n != 1]
    # merge axes that continue each other (outer stride = inner length x inner stride)
    merged: list[tuple[int, int]] = []
    for n, st in reversed(dims):
        if merged and merged[-1][1] * merged[-1][0] == st:
            m, mst = merged[-1]
            merged[-1] = (m * n, mst)
        else:
            merged.append((n, st))
    if not merged or merged[0][1] != lay.itemsize:
        merged.insert(0, (1, lay.itemsize))  # the innermost run is one element
    row = merged[0][0] * lay.itemsize
    inner = merged[:3]
    while len(inner) < 3:
        inner.append((1, inner[-1][0] * inner[-1][1]))
    region = (row, inner[1][0], inner[2][0])
    pitches = (inner[1][1], inner[2][1])
    block = row * inner[1][0] * inner[2][0]
    outer = merged[3:][::-1]  # slowest first
    for k, idx in enumerate(np.ndindex(*[n for n, _ in outer])):
        off = lay.offset + sum(i * st for i, (_, st) in zip(idx, outer))
        yield k * block, Rect(off, region, pitches)
