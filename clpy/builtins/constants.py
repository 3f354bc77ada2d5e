"""Named constants of OpenCL C usable in kernels (fence flags, memory orders and scopes ...)."""

from __future__ import annotations

from dataclasses import dataclass

from clpy.types import catalog as C
from clpy.types.core import ScalarType


@dataclass(frozen=True)
class NamedConstant:
    """A constant that keeps its OpenCL name in emitted code. Flags combine with ``|``."""

    name: str
    value: int
    type: ScalarType

    def __or__(self, other: NamedConstant) -> NamedConstant:
        if not isinstance(other, NamedConstant) or other.type is not self.type:
            return NotImplemented
        return NamedConstant(f"{self.name} | {other.name}", self.value | other.value, self.type)


CONSTANTS: dict[str, NamedConstant] = {}


def _const(name: str, value: int, t: ScalarType = C.uint) -> NamedConstant:
    c = NamedConstant(name, value, t)
    CONSTANTS[name] = c
    return c


# cl_mem_fence_flags (spec §1.13.8); values as in Khronos headers.
CLK_LOCAL_MEM_FENCE = _const("CLK_LOCAL_MEM_FENCE", 1)
CLK_GLOBAL_MEM_FENCE = _const("CLK_GLOBAL_MEM_FENCE", 2)
CLK_IMAGE_MEM_FENCE = _const("CLK_IMAGE_MEM_FENCE", 4)

# memory_order and memory_scope (spec §1.13.11.3, .4); the enum values follow clang's headers.
memory_order_relaxed = _const("memory_order_relaxed", 0, C.int_)
memory_order_acquire = _const("memory_order_acquire", 2, C.int_)
memory_order_release = _const("memory_order_release", 3, C.int_)
memory_order_acq_rel = _const("memory_order_acq_rel", 4, C.int_)
memory_order_seq_cst = _const("memory_order_seq_cst", 5, C.int_)
memory_scope_work_item = _const("memory_scope_work_item", 4, C.int_)
memory_scope_sub_group = _const("memory_scope_sub_group", 3, C.int_)
memory_scope_work_group = _const("memory_scope_work_group", 1, C.int_)
memory_scope_device = _const("memory_scope_device", 2, C.int_)
memory_scope_all_svm_devices = _const("memory_scope_all_svm_devices", 0, C.int_)
