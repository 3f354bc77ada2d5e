"""Copies of part of a device buffer, for ``clpy.DeviceArray`` views (clpy/abi/device_array.py):
rectangular reads and writes of views that are not contiguous (OpenCL 2.0 API spec §5.2.2,
``clEnqueueReadBufferRect``/``WriteBufferRect``/``CopyBufferRect``), fills and device-side
copies of a region. Contiguous regions go through ``transfers.upload``/``download`` (pinned
staging for large ones).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

# (byte offset into a packed host copy, rect) pairs from clpy.abi.array_index.rect_blocks;
# a rect has .offset, .region (bytes, rows, slices) and .pitches (row, slice) in bytes.
Blocks = Iterable[tuple[int, Any]]


def _origin(offset: int, pitches: tuple[int, int]) -> tuple[int, int, int]:
    """A byte offset as (x bytes, row, slice) for the given row and slice pitches."""
    z, rest = divmod(offset, pitches[1])
    y, x = divmod(rest, pitches[0])
    return x, y, z


def read_rects(cl: Any, queue: Any, out: np.ndarray, buf: Any, blocks: Blocks) -> None:
    """The view described by ``blocks`` into the C-contiguous ``out`` (blocking)."""
    _rects(cl, queue, buf, out, blocks, to_host=True)


def write_rects(cl: Any, queue: Any, buf: Any, src: np.ndarray, blocks: Blocks) -> None:
    """The C-contiguous ``src`` into the view described by ``blocks`` (blocking as to
    ``src``)."""
    _rects(cl, queue, buf, src, blocks, to_host=False)


def _rects(cl: Any, queue: Any, buf: Any, host: np.ndarray, blocks: Blocks, to_host: bool) -> None:
    """One rectangular copy per block between ``buf`` and the packed ``host``, then a wait
    for the last (the in-order queue finishes the others first)."""
    flat = host.reshape(-1).view(np.uint8)
    evt = None
    for hoff, r in blocks:
        n = r.region[0] * r.region[1] * r.region[2]
        part = flat[hoff : hoff + n]
        dst, src = (part, buf) if to_host else (buf, part)
        evt = cl.enqueue_copy(
            queue,
            dst,
            src,
            buffer_origin=_origin(r.offset, r.pitches),
            host_origin=(0, 0, 0),
            region=r.region,
            buffer_pitches=r.pitches,
            host_pitches=(r.region[0], r.region[0] * r.region[1]),
            is_blocking=False,
        )
    if evt is not None:
        evt.wait()


def copy_region(cl: Any, queue: Any, dst: Any, src: Any, blocks: Blocks, contiguous: Any) -> None:
    """The view of ``src`` described by ``blocks`` into the packed buffer ``dst``, on the
    device (enqueued; ordered by the in-order queue). ``contiguous``: (offset, nbytes) when
    the view is one run of bytes, else None."""
    if contiguous is not None:
        off, nbytes = contiguous
        cl.enqueue_copy(queue, dst, src, src_offset=off, byte_count=nbytes)
        return
    for hoff, r in blocks:
        row = r.region[0]
        plane = row * r.region[1]  # blocks are whole planes of the packed copy
        cl.enqueue_copy(
            queue,
            dst,
            src,
            src_origin=_origin(r.offset, r.pitches),
            dst_origin=(0, 0, hoff // plane),
            region=r.region,
            src_pitches=r.pitches,
            dst_pitches=(row, plane),
        )


def fill_region(cl: Any, queue: Any, buf: Any, offset: int, nbytes: int, value: np.ndarray) -> None:
    """``nbytes`` of ``buf`` from ``offset`` set to the one-element ``value`` (blocking)."""
    pattern = np.ascontiguousarray(value).reshape(1)
    cl.enqueue_fill_buffer(queue, buf, pattern, offset, nbytes).wait()
