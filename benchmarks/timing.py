"""Timing for the benchmarks: the median wall time of a call (between synchronizations
where a device runs it asynchronously), the least wall time of a call, and the device time
of back-to-back calls with the host's launch cost hidden. Every figure follows warm-up calls
(program builds, launch plans, page faults)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any


def timed(fn: Callable[[], Any], sync: Callable[[], None], repeat: int, warm: int = 3) -> float:
    """The median wall time of ``repeat`` calls of ``fn``, each between two ``sync()`` calls,
    after ``warm`` calls."""
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


def _nothing() -> None:
    pass


def median_time(fn: Callable[[], Any], repeat: int, warm: int = 1) -> float:
    """The median wall time of ``repeat`` calls of ``fn`` after ``warm`` calls, for calls that
    return when their work is done (``timed`` with nothing to synchronize)."""
    return timed(fn, _nothing, repeat, warm)


def best_time(fn: Callable[[], Any], repeat: int) -> float:
    """The least wall time of ``repeat`` calls of ``fn`` after one warm-up call."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


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
