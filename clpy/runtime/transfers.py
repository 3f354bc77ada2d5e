"""Host-to-device copies of NumPy arguments: pooled device buffers, written with
``clEnqueueWriteBuffer``, and a hint when one array keeps making the trip.

A fresh ``Buffer(COPY_HOST_PTR)`` per launch costs an allocation and, on NVIDIA's driver, an
unpipelined copy (measured 1–1.8 GB/s on an H100, where ``enqueue_copy`` into an existing
buffer reached ~8 GB/s: benchmarks/transfers.py). The pool keeps freed buffers per command
queue, keyed by size; a buffer goes back as soon as its launch is enqueued, which is safe
because the queue is in order: the next write into it runs after the kernel (and copy-back)
that used it. Out-of-order queues get fresh buffers.
"""

from __future__ import annotations

import threading
import warnings
from typing import Any

import numpy as np

# Bytes of idle device memory one queue's pool may hold (the rest is released).
POOL_LIMIT = 1 << 30

# After this many launches in a row that upload one unchanged NumPy array, say once that a
# device array would keep it there.
HINT_AFTER = 16


class PerformanceHint(UserWarning):
    """A launch pattern that keeps copying the same data: keep it on the device
    (``clpy.to_device``). ``warnings.filterwarnings("ignore", category=...)`` silences it."""


class BufferPool:
    """Idle device buffers of one in-order queue, by size in bytes."""

    def __init__(self, cl: Any, ctx: Any) -> None:
        self._cl = cl
        self._ctx = ctx
        self._free: dict[int, list[Any]] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    def take(self, nbytes: int) -> Any:
        with self._lock:
            bufs = self._free.get(nbytes)
            if bufs:
                self._bytes -= nbytes
                return bufs.pop()
        return self._cl.Buffer(self._ctx, self._cl.mem_flags.READ_WRITE, nbytes)

    def give(self, buf: Any, nbytes: int) -> None:
        with self._lock:
            if self._bytes + nbytes > POOL_LIMIT:
                return  # dropped: pyopencl releases it when the last reference goes
            self._free.setdefault(nbytes, []).append(buf)
            self._bytes += nbytes

    def clear(self) -> None:
        with self._lock:
            self._free.clear()
            self._bytes = 0


# queue handle -> (the queue, kept alive with its pool; its pool). pyopencl queues cannot be
# weakly referenced; clpy.clear_caches() empties this.
_POOLS: dict[int, tuple[Any, BufferPool]] = {}
_pools_lock = threading.Lock()


def pool_for(cl: Any, queue: Any) -> BufferPool | None:
    """The pool of an in-order ``queue`` (None for an out-of-order one)."""
    if queue.properties & cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE:
        return None
    key = int(queue.int_ptr)
    with _pools_lock:
        entry = _POOLS.get(key)
        if entry is None or entry[0] != queue:
            entry = _POOLS[key] = (queue, BufferPool(cl, queue.context))
    return entry[1]


def clear_pools() -> None:
    with _pools_lock:
        for _, pool in _POOLS.values():
            pool.clear()
        _POOLS.clear()


class RepeatWatch:
    """Per launch plan: counts launches in a row that upload the same unchanged array into one
    parameter (same object, address and a sample of its bytes); warns once per process."""

    warned = False

    def __init__(self) -> None:
        self._seen: dict[int, tuple[tuple[int, int, int, bytes], int]] = {}

    def saw(self, j: int, a: np.ndarray, name: str, kernel: str) -> None:
        if RepeatWatch.warned or a.nbytes < (1 << 16):
            return
        flat = a.reshape(-1).view(np.uint8)
        sample = bytes(flat[:: max(1, flat.size // 64)][:64])
        key = (id(a), a.ctypes.data, a.nbytes, sample)
        last = self._seen.get(j)
        count = last[1] + 1 if last is not None and last[0] == key else 1
        self._seen[j] = (key, count)
        if count >= HINT_AFTER:
            RepeatWatch.warned = True
            warnings.warn(
                f"{kernel}(): the NumPy array for parameter {name!r} ({a.nbytes} bytes) was "
                f"copied to the device in {count} launches in a row; keep it there with "
                "d = clpy.to_device(a) and pass d (d.get() copies it back)",
                PerformanceHint,
                stacklevel=4,
            )
