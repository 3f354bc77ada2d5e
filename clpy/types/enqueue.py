"""Types of device-side enqueue (OpenCL C 2.0 spec §1.13.17, feature
``__opencl_c_device_enqueue``).

``queue_t`` (a device queue), ``ndrange_t`` (an ND-range descriptor), ``clk_event_t`` (an
event of a device queue) are opaque values: variables, captures and private arrays may hold
them, nothing computes with them. ``kernel_enqueue_flags_t`` and ``clk_profiling_info`` are
integer enumerations in OpenCL C (clang: ``int``), so clpy spells them as ``int``.

A block literal (spec §1.12) has a ``BlockType``: the number of its ``local void *``
parameters (the local-memory arguments of ``enqueue_kernel``). Blocks only exist as arguments
of the enqueue built-ins and the kernel queries; clpy writes them (clpy/ir/blocks.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from clpy.types import catalog as C
from clpy.types.core import OpaqueType, Type

queue_t = OpaqueType("queue_t")
ndrange_t = OpaqueType("ndrange_t")
clk_event_t = OpaqueType("clk_event_t")
kernel_enqueue_flags_t = C.int_
clk_profiling_info = C.int_

ENQUEUE_TYPES: dict[str, Type] = {
    "queue_t": queue_t,
    "ndrange_t": ndrange_t,
    "clk_event_t": clk_event_t,
    "kernel_enqueue_flags_t": kernel_enqueue_flags_t,
    "clk_profiling_info": clk_profiling_info,
}


@dataclass(frozen=True, eq=False, repr=False)
class BlockType(Type):
    """``void (^)(void)`` or, with ``locals`` > 0, ``void (^)(local void *, ...)``."""

    locals: int = 0

    @property
    def cl_name(self) -> str:
        params = ", ".join(["local void *"] * self.locals) or "void"
        return f"void (^)({params})"

    @property
    def size(self) -> int:
        return 8

    def __repr__(self) -> str:
        return f"<block type {self.cl_name}>"
