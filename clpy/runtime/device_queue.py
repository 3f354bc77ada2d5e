"""The on-device default queue that device-side enqueue needs.

``get_default_queue()`` in a kernel returns the device's default device queue, which only the
host can create (OpenCL 2.0 API §5.2.1: ``clCreateCommandQueueWithProperties`` with
``CL_QUEUE_ON_DEVICE | CL_QUEUE_ON_DEVICE_DEFAULT``, out of order). clpy creates it once per
context and device, when it builds a kernel that enqueues (the program needs
``__opencl_c_device_enqueue``) for a device whose target has that feature; a device without
it gets a ``FeatureError`` from the emitter before this runs (PoCL aborts the process when
asked for an on-device queue, so it is never asked).
"""

from __future__ import annotations

import threading
from typing import Any

DEVICE_ENQUEUE = "__opencl_c_device_enqueue"


class DeviceQueues:
    """On-device default queues by (context, device); they live as long as this object (the
    runtime's), as the contexts do."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queues: dict[tuple[int, int], tuple[Any, Any, Any]] = {}

    def ensure(self, cl: Any, ctx: Any, device: Any) -> Any:
        """The default device queue of ``device`` in ``ctx``, created on first use."""
        key = (id(ctx), id(device))
        with self._lock:
            hit = self._queues.get(key)
            if hit is not None and hit[0] is ctx and hit[1] is device:
                return hit[2]
            p = cl.command_queue_properties
            props = p.ON_DEVICE | p.ON_DEVICE_DEFAULT | p.OUT_OF_ORDER_EXEC_MODE_ENABLE
            queue = cl.CommandQueue(ctx, device, properties=props)
            self._queues[key] = (ctx, device, queue)  # keeps ctx alive: ids stay unique
            return queue


DEVICE_QUEUES = DeviceQueues()


def needs_device_queue(features: set[str] | frozenset[str]) -> bool:
    return DEVICE_ENQUEUE in features
