"""Pipe parameters (``clpy.Pipe[T]`` / ``clpy.WritePipe[T]``, spec §1.13.16): a ``clpy.Pipe``
host object whose packets persist between launches."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from clpy.abi.base import CLSite, Converter, HeaderArg, Param, SimBinder, tname
from clpy.abi.buffers import SimDeferred
from clpy.runtime.pipes import Pipe
from clpy.types.pipes import PipeType


@dataclass(frozen=True)
class PipeParam(Param):
    """A ``read_only``/``write_only pipe T`` parameter."""

    kind: ClassVar[str] = "pipe"

    def header_arg(self) -> HeaderArg:
        assert isinstance(self.type, PipeType)
        return HeaderArg(
            "cl_mem", "sizeof(cl_mem)", f"{self.type.cl_name}: a pipe made with clCreatePipe"
        )

    def check(self, a: Any) -> Pipe:
        t = self.type
        assert isinstance(t, PipeType)
        if not isinstance(a, Pipe):
            raise TypeError(
                f"{self.where()}: a {t.cl_name} parameter takes a clpy.Pipe(dtype, "
                f"max_packets), got {tname(a)}"
            )
        if a.elem is not t.elem:
            raise TypeError(
                f"{self.where()}: the pipe carries {a.elem} packets, the parameter {t.elem} packets"
            )
        return a

    def cl_converter(self, site: CLSite) -> Converter:
        ctx = site.context
        return lambda a, pending: self.check(a).cl_pipe(ctx)

    def sim_converter(self) -> Converter:
        def conv(a: Any, deferred: list[SimDeferred]) -> Pipe:
            pipe = self.check(a)
            # a failing kernel leaves its pipes as they were, like arrays
            slots = pipe.slots.copy() if pipe.slots is not None else None
            r, w = pipe.read_seq, pipe.write_seq

            def restore() -> None:
                if slots is not None and pipe.slots is not None:
                    pipe.slots[...] = slots
                pipe.read_seq, pipe.write_seq = r, w

            deferred.append(SimDeferred(rollback=restore))
            return pipe

        return conv

    def bind_sim(self, binder: SimBinder, value: Any) -> Any:
        return binder.pipe(self, value)
