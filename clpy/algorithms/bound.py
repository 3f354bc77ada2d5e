"""Bound launches: one kernel with its sizes and arguments fixed on one OpenCL queue, for
the algorithms' per-call fast paths (a reduction's launch).

``kernel[g, l](*args, device=...)`` looks up the plan of the argument signature, converts
and checks every argument and compares it with the last launch's (clpy/runtime/launch.py,
clplan.py): about 10 µs of Python per launch, the price of taking any arguments. A
``BoundLaunch`` is made after a first launch through the launcher (which built the program and
checked the sizes and the arguments): it keeps a ``pyopencl.Kernel`` of its own
(made from the plan's program, so the plan's record of the arguments it last set stays
true) with every argument set, and a call only swaps the input buffer when it changed and
enqueues: one ``clSetKernelArg`` at most and one ``clEnqueueNDRangeKernel``.
"""

from __future__ import annotations

from typing import Any

from clpy.abi import StructValue, Value
from clpy.runtime.clplan import CLPlan


class BoundLaunch:
    """``launcher`` (``kernel[g, l]``) with ``args`` on ``place``'s OpenCL queue, made after
    ``launcher(*args, device=place.launch_on)`` ran once (which built the program and checked
    the sizes and arguments); call it with the buffer for argument 0 (a ``pyopencl.Buffer``
    in the same context) to enqueue a launch, or ``launch`` it with other arguments changed.
    ``device``: the plan of that device (a variant built with other options) when the kernel
    has several on this queue."""

    def __init__(
        self, launcher: Any, args: tuple[Any, ...], place: Any, device: Any = None
    ) -> None:
        import pyopencl as cl

        q = place.cl_queue
        plans = [
            p
            for p in launcher.kernel.launches.plans.values()
            if isinstance(p, CLPlan)
            and p.queue.int_ptr == q.int_ptr
            and (device is None or p.device is device)
        ]
        if not plans:  # pragma: no cover - the launch above made one
            raise RuntimeError(f"{launcher!r}: no OpenCL plan on {place.dev}")
        plan = plans[0]
        self.queue = q
        self.kernel = cl.Kernel(plan.kernel.program, plan.kernel.function_name)
        set_buf = getattr(self.kernel, "_set_arg_buf", None) or self.kernel.set_arg
        cl_args = [conv(args[i], []) for i, conv in plan.converters]
        for j, (p, a) in enumerate(zip(plan.params, cl_args)):
            (set_buf if isinstance(p, (Value, StructValue)) else self.kernel.set_arg)(j, a)
        self.args = cl_args  # keeps the buffers alive while the kernel holds them
        g, loc = launcher.sizes
        self.sizes = (tuple(g), tuple(loc))
        self._enqueue = cl.enqueue_nd_range_kernel

    def launch(self, changes: tuple[tuple[int, Any], ...]) -> Any:
        """Enqueue with the OpenCL arguments ``(index, value)`` of ``changes`` set first
        (buffers or NumPy scalars, as ``pyopencl.Kernel.set_arg`` takes them); returns the
        launch's event."""
        for j, a in changes:
            if a is not self.args[j]:
                self.kernel.set_arg(j, a)
                self.args[j] = a
        return self._enqueue(self.queue, self.kernel, *self.sizes)

    def __call__(self, buf: Any) -> Any:
        """Enqueue with ``buf`` as argument 0; returns the launch's event."""
        if buf is not self.args[0]:
            self.kernel.set_arg(0, buf)
            self.args[0] = buf
        return self._enqueue(self.queue, self.kernel, *self.sizes)


__all__ = ["BoundLaunch"]
