"""One NumPy array passed for several buffer parameters: Python's meaning is one memory.

``k(x, x)`` reads and writes the same array, so both launchers give such parameters one copy
of it (one device buffer on OpenCL, one working array in the simulator), written back once —
what a device array (``clpy.DeviceArray``) passed twice does too. Different arrays that
overlap in memory (``x[1:]`` and ``x[:-1]``) where the kernel writes either cannot be given
that meaning with separate copies: that is a ``ValueError`` naming both parameters.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from clpy.abi.base import Param
from clpy.abi.buffers import Buffer


def _extent(a: np.ndarray) -> tuple[int, int]:
    start = a.__array_interface__["data"][0]
    return start, start + a.nbytes


def shared_arrays(params: Sequence[Param], args: Sequence[Any]) -> dict[int, int]:
    """For buffer parameters whose argument is a NumPy array already passed for an earlier
    parameter (the same memory: same start and size), ``{later slot: first slot}``, slots
    being positions in ``params``. Raises when distinct arrays overlap and one is written."""
    seen: list[tuple[int, np.ndarray, tuple[int, int]]] = []
    out: dict[int, int] = {}
    for j, p in enumerate(params):
        if not isinstance(p, Buffer):
            continue
        a = args[p.index] if p.index is not None else None
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
    return out
