"""One NumPy array passed for several buffer parameters: Python's meaning is one memory.

``k(x, x)`` reads and writes the same array, so both launchers give such parameters one copy
of it (one device buffer on OpenCL, one working array in the simulator), written back once —
what a device array (``clpy.DeviceArray``) passed twice does too. Different arrays that
overlap in memory (``x[1:]`` and ``x[:-1]``) where the kernel writes either cannot be given
that meaning with separate copies: that is a ``ValueError`` naming both parameters. The same
holds for views of one ``DeviceArray`` where one travels as a copy (a misaligned view).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from clpy.abi.base import Param
from clpy.abi.buffers import Buffer
from clpy.abi.device_array import DeviceArray


def _extent(a: np.ndarray) -> tuple[int, int]:
    start = a.__array_interface__["data"][0]
    return start, start + a.nbytes


def shared_arrays(params: Sequence[Param], args: Sequence[Any]) -> dict[int, int]:
    """For buffer parameters whose argument is a NumPy array already passed for an earlier
    parameter (the same memory: same start and size), ``{later slot: first slot}``, slots
    being positions in ``params``. Raises when distinct arrays overlap and one is written."""
    seen: list[tuple[int, np.ndarray, tuple[int, int]]] = []
    out: dict[int, int] = {}
    views: list[tuple[int, DeviceArray]] = []
    for j, p in enumerate(params):
        if not isinstance(p, Buffer):
            continue
        a = args[p.index] if p.index is not None else None
        if type(a) is DeviceArray:
            views.append((j, a))
            continue
        if not isinstance(a, np.ndarray) or a.nbytes == 0:
            continue
        ext = _extent(a)
        for k, b, bext in seen:
            if b is a or (bext == ext and b.dtype == a.dtype):
                out.setdefault(j, k)
                break
            if ext[0] < bext[1] and bext[0] < ext[1] and (p.written or params[k].written):
                q = params[k]
                raise ValueError(
                    f"{p.kernel}(): parameters {q.name!r} and {p.name!r} are different arrays "
                    "that overlap in memory, and the kernel writes one of them; pass one "
                    "array for both, a DeviceArray, or copies"
                )
        else:
            seen.append((j, a, ext))
    if any(a.staged for _, a in views):
        _staged_overlaps(params, views)
    return out


def _staged_overlaps(params: Sequence[Param], views: list[tuple[int, DeviceArray]]) -> None:
    """A DeviceArray view that travels as a copy (clpy/abi/device_array.py: not a
    sub-buffer) is separate memory for the launch: overlapping another argument of the same
    array where the kernel writes either would lose Python's one-memory meaning."""
    for n, (j, a) in enumerate(views):
        ra, a0, a1 = a.memory_region()
        for k, b in views[:n]:
            if not (a.staged or b.staged) or not (params[j].written or params[k].written):
                continue
            rb, b0, b1 = b.memory_region()
            if ra is rb and a0 < b1 and b0 < a1:
                q, p = params[k], params[j]
                staged = p if a.staged else q
                raise ValueError(
                    f"{p.kernel}(): parameters {q.name!r} and {p.name!r} are overlapping "
                    f"parts of one DeviceArray and the kernel writes one of them; the view "
                    f"for {staged.name!r} does not start at a multiple of the device's base "
                    "address alignment (CL_DEVICE_MEM_BASE_ADDR_ALIGN), so it travels as a "
                    "copy. Start views at aligned elements, or pass copies"
                )
