"""Timing for the benchmarks: the median wall time of a call between synchronizations, and
the device time of back-to-back calls with the host's launch cost hidden."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any


def timed(fn: Callable[[], Any], sync: Callable[[], None], repeat: int, warm: int = 3) -> float:
    for _ in range(warm):
        fn()
    sync()
    ts = []
    for _ in range(repeat):
        sync()
        t = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


BATCH_NOTE = (
    "10 back-to-back calls without reading the result, between two synchronizations "
    "(the device's time, the host's launch cost hidden)"
)


def device_only(fn: Callable[[], Any], sync: Callable[[], None], batch: int = 10) -> float:
    """Seconds per call of ``fn`` (enqueues only, no result read) over ``batch`` back-to-back
    calls between two synchronizations: the device time with the host's launch cost hidden
    behind the previous launch (median of 5 batches)."""
    fn()
    sync()
    ts = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(batch):
            fn()
        sync()
        ts.append((time.perf_counter() - t) / batch)
    return statistics.median(ts)
