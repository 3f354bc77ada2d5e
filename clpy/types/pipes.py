"""Pipe types of OpenCL C 2.0 (spec §1.13.16 / §6.13.16, feature ``__opencl_c_pipes``).

A pipe is a FIFO of packets of one type, passed to kernels as a ``read_only`` or ``write_only``
argument (a kernel only reads or only writes a given pipe). clpy spells them::

    clpy.Pipe[int32]        # read_only pipe int   (the default, as for images)
    clpy.WritePipe[int32]   # write_only pipe int

``reserve_id_t`` is the opaque id of a reservation (``reserve_read_pipe`` ...). The host-side
object passed for a pipe parameter is ``clpy.Pipe(dtype, max_packets)`` (clpy/runtime/pipes.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from clpy.types.annotations import resolve_annotation
from clpy.types.core import OpaqueType, PointerType, ScalarType, Type


@dataclass(frozen=True, eq=False, repr=False)
class PipeType(Type):
    """``read_only pipe elem`` or, with ``write``, ``write_only pipe elem``."""

    elem: Type
    write: bool = False

    @property
    def access(self) -> str:
        return "write_only" if self.write else "read_only"

    @property
    def cl_name(self) -> str:
        return f"{self.access} pipe {self.elem.cl_name}"

    @property
    def size(self) -> int:
        return 8

    def __repr__(self) -> str:
        return f"clpy.{'WritePipe' if self.write else 'Pipe'}[{self.elem!r}]"


reserve_id_t = OpaqueType("reserve_id_t")


def pipe_type(elem: Any, write: bool) -> PipeType:
    """``Pipe[T]`` / ``WritePipe[T]``: ``T`` is a scalar, vector or struct type."""
    t = resolve_annotation(elem)
    if isinstance(t, (PointerType, PipeType, OpaqueType)) or (
        isinstance(t, ScalarType) and t.name == "void"
    ):
        kind = "WritePipe" if write else "Pipe"
        raise TypeError(f"{kind}[{t}]: a pipe's packets are scalars, vectors or structs")
    assert isinstance(t, Type)
    return PipeType(t, write)


class _WritePipe:
    """``clpy.WritePipe[T]``: a ``write_only pipe T`` kernel parameter."""

    def __getitem__(self, elem: Any) -> PipeType:
        return pipe_type(elem, True)

    def __repr__(self) -> str:
        return "clpy.WritePipe"


WritePipe = _WritePipe()
