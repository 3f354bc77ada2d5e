"""The host side of a pipe: ``clpy.Pipe(dtype, max_packets)`` (spec §1.13.16; OpenCL API
``clCreatePipe``).

The same object annotates kernel parameters (``clpy.Pipe[int32]`` is a ``read_only pipe int``)
and, called, makes a pipe to pass for them. A pipe keeps its packets between launches: a
producer kernel writes it, a consumer kernel launched later reads it. On the simulator the
packets live in this object (a ring of ``max_packets`` slots); on an OpenCL device in a
``pyopencl.Pipe`` made once per context, which needs a device with pipe support (PoCL and
NVIDIA's driver have none: the kernel's source then fails with a FeatureError naming
``__opencl_c_pipes``). The two stores are separate: packets written on the simulator are not
seen by a device launch, and the reverse.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from clpy.types.core import Type
from clpy.types.pipes import PipeType, pipe_type


class Pipe:
    """A pipe of ``max_packets`` packets of ``dtype`` (a clpy type or NumPy dtype)::

    p = clpy.Pipe(clpy.int32, 1024)
    produce[(256,), (64,)](p, x)      # produce(p: clpy.WritePipe[int32], x: ...)
    consume[(256,), (64,)](p, y)      # consume(p: clpy.Pipe[int32], y: ...)
    """

    def __class_getitem__(cls, elem: Any) -> PipeType:
        return pipe_type(elem, False)

    def __init__(self, dtype: Any, max_packets: int) -> None:
        t = pipe_type(dtype, False).elem
        if (
            not isinstance(max_packets, (int, np.integer))
            or isinstance(max_packets, bool)
            or int(max_packets) <= 0
        ):
            raise ValueError(
                f"Pipe(dtype, max_packets): max_packets must be a positive int, got {max_packets!r}"
            )
        self.elem: Type = t
        self.max_packets = int(max_packets)
        self.packet_size = t.size
        dt = getattr(t, "dtype", None)
        self.dtype: np.dtype[Any] | None = np.dtype(dt) if dt is not None else None
        # Simulator state: a ring of slots; ``read_seq``/``write_seq`` count the packets ever
        # read and written (reserved), so ``write_seq - read_seq`` packets are in the pipe.
        self.slots = np.zeros(self.max_packets, self.dtype) if self.dtype is not None else None
        self.read_seq = 0
        self.write_seq = 0
        self.cl_pipes: dict[Any, Any] = {}  # pyopencl context → pyopencl.Pipe

    @property
    def num_packets(self) -> int:
        """Packets in the pipe as the simulator sees it (device pipes are opaque)."""
        return self.write_seq - self.read_seq

    def cl_pipe(self, context: Any) -> Any:
        """The ``pyopencl.Pipe`` of this pipe in ``context`` (made on first use)."""
        p = self.cl_pipes.get(context)
        if p is None:
            import pyopencl as cl

            try:
                p = cl.Pipe(
                    context, cl.mem_flags.READ_WRITE, self.packet_size, self.max_packets, []
                )
            except cl.Error as e:
                names = ", ".join(d.name for d in context.devices)
                raise RuntimeError(
                    f"{self!r}: {names} cannot create a pipe ({e}); pipes need "
                    "a device with CL_DEVICE_PIPE_SUPPORT"
                ) from None
            self.cl_pipes[context] = p
        return p

    def __repr__(self) -> str:
        return f"clpy.Pipe({self.elem!r}, {self.max_packets})"
