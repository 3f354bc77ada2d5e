"""``queue_t`` parameters (OpenCL C 2.0 §1.13.17): a kernel that enqueues into a queue it is
given (``kernel void dp_func_A(queue_t q, ...)`` in the spec's complete example), or a child
that passes its queue on.

The host passes ``"default"``: the device's default on-device queue (created by the runtime,
clpy/runtime/device_queue.py), or on OpenCL a ``pyopencl.CommandQueue`` made with
``ON_DEVICE``. The simulator has one device queue, the default one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from clpy.abi.base import CLSite, Converter, HeaderArg, Param, SimBinder, tname
from clpy.runtime.device_queue import DEVICE_QUEUES

# The simulator's id of its default device queue (sim/devqueue.py DEFAULT_QUEUE).
_SIM_DEFAULT_QUEUE = np.int64(1)


@dataclass(frozen=True)
class QueueParam(Param):
    """A ``queue_t`` parameter."""

    kind: ClassVar[str] = "queue"

    def header_arg(self) -> HeaderArg:
        return HeaderArg(
            "cl_command_queue",
            "sizeof(cl_command_queue)",
            "queue_t: an on-device queue (CL_QUEUE_ON_DEVICE)",
        )

    def _bad(self, a: Any) -> TypeError:
        return TypeError(
            f'{self.where()}: pass "default" (the device\'s default device queue) or an '
            f"on-device pyopencl.CommandQueue, got {tname(a)}"
        )

    def cl_converter(self, site: CLSite) -> Converter:
        import pyopencl as cl  # optional dependency: only for OpenCL launches

        def conv(a: Any, pending: list[Any]) -> Any:
            if isinstance(a, cl.CommandQueue):
                return a
            if a == "default":
                return DEVICE_QUEUES.ensure(cl, site.context, site.context.devices[0])
            raise self._bad(a)

        return conv

    def sim_converter(self) -> Converter:
        def conv(a: Any, restores: list[Any]) -> Any:
            if isinstance(a, str) and a == "default":
                return _SIM_DEFAULT_QUEUE
            raise self._bad(a)

        return conv

    def bind_sim(self, binder: SimBinder, value: Any) -> Any:
        del binder  # an id, like every opaque value in the simulator
        return value
