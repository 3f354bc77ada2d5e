"""What the transfer measurements (benchmarks/transfers.py) launch and vary: the ``touch``
and ``mix3`` kernels, the timing, and clpy/runtime/transfers.py's staging settings changed
for one measurement."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import clpy
from benchmarks.timing import median_time
from clpy import Global, float32, int32
from clpy.runtime import transfers


@clpy.kernel
def touch(x: Global[float32], y: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    if i < n:
        y[i] = x[i] + 1.0


@clpy.kernel
def mix3(
    a: Global[float32],
    b: Global[float32],
    c: Global[float32],
    y: Global[float32],
    z: Global[float32],
    n: int32,
):
    i = clpy.get_global_id(0)
    if i < n:
        y[i] = a[i] + b[i]
        z[i] = b[i] * c[i]


def median(fn: Callable[[], Any], reps: int) -> float:
    """The median wall time of ``reps`` calls after two warm-up calls."""
    return median_time(fn, reps, warm=2)


def gb_per_s(t: float, nb: int) -> float:
    return nb / t / 1e9


def _fresh_copier() -> None:
    old = transfers._COPIER
    transfers._COPIER = None
    if old is not None:
        old.shutdown(wait=True)


@contextlib.contextmanager
def staging_knobs(**values: Any) -> Iterator[None]:
    """clpy/runtime/transfers.py's settings changed for a measurement (fresh staging areas and
    copy threads on both sides)."""
    saved = {k: getattr(transfers, k) for k in values}
    for k, v in values.items():
        setattr(transfers, k, v)
    _fresh_copier()
    transfers.clear_pools()
    try:
        yield
    finally:
        for k, v in saved.items():
            setattr(transfers, k, v)
        _fresh_copier()
        transfers.clear_pools()
