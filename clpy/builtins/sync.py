"""Synchronization functions (spec §1.13.8). ``clpy.barrier()`` with no argument fences both
local and global memory."""

from __future__ import annotations

from clpy.builtins.constants import CLK_GLOBAL_MEM_FENCE, CLK_LOCAL_MEM_FENCE
from clpy.builtins.registry import Lowering, Overload, declare
from clpy.types import catalog as C

_FLAGS = (Overload((C.uint,), C.void),)
_FLAGS_SCOPE = (Overload((C.uint,), C.void), Overload((C.uint, C.int_), C.void))

BOTH_FENCES = CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE


barrier = declare(
    "barrier",
    family="synchronization",
    overloads=_FLAGS,
    const_args=frozenset({0}),
    uniform=True,
    defaults=(BOTH_FENCES,),
    doc="All work-items of the work-group wait here; ``flags`` (default local|global) say "
    "which memory is made consistent (spec §1.13.8). Must be reached by every work-item "
    "of the group.",
)
work_group_barrier = declare(
    "work_group_barrier",
    family="synchronization",
    overloads=_FLAGS_SCOPE,
    const_args=frozenset({0, 1}),
    uniform=True,
    defaults=(BOTH_FENCES,),
    lowering=Lowering("barrier", min_version=(2, 0)),
    doc="OpenCL 2.0 spelling of barrier with an optional memory scope (spec §1.13.8).",
)
mem_fence = declare(
    "mem_fence",
    family="synchronization",
    overloads=_FLAGS,
    const_args=frozenset({0}),
    doc="Orders this work-item's loads and stores (spec §1.13.8 / 1.x).",
)
read_mem_fence = declare(
    "read_mem_fence",
    family="synchronization",
    overloads=_FLAGS,
    const_args=frozenset({0}),
    doc="Orders this work-item's loads.",
)
write_mem_fence = declare(
    "write_mem_fence",
    family="synchronization",
    overloads=_FLAGS,
    const_args=frozenset({0}),
    doc="Orders this work-item's stores.",
)
