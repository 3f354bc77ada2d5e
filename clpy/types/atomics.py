"""Atomic types of OpenCL C 2.0 (spec §1.13.11.6): ``atomic_int`` ... ``atomic_double`` and
``atomic_flag``. They are only pointed to (``Global[atomic_int]``, ``Local[atomic_uint]``) and
used through the atomic built-ins; host arrays for them have the value type's dtype. On OpenCL
C 1.2 targets the emitter declares them as typedefs of the value type (see
clpy/emit/lower_atomics.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from clpy.types import catalog as C
from clpy.types.core import ScalarType, Type


@dataclass(frozen=True, eq=False, repr=False)
class AtomicType(Type):
    """``atomic_<value>``, or ``atomic_flag`` (an int-sized flag) when ``flag``."""

    value: ScalarType
    flag: bool = False

    @property
    def cl_name(self) -> str:
        return "atomic_flag" if self.flag else f"atomic_{self.value.name}"

    @property
    def size(self) -> int:
        return self.value.size

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.value.dtype


atomic_int = AtomicType(C.int_)
atomic_uint = AtomicType(C.uint)
atomic_long = AtomicType(C.long)
atomic_ulong = AtomicType(C.ulong)
atomic_float = AtomicType(C.float_)
atomic_double = AtomicType(C.double)
atomic_intptr_t = AtomicType(C.intptr_t)
atomic_uintptr_t = AtomicType(C.uintptr_t)
atomic_size_t = AtomicType(C.size_t)
atomic_ptrdiff_t = AtomicType(C.ptrdiff_t)
atomic_flag = AtomicType(C.int_, True)

ATOMIC_TYPES: dict[str, AtomicType] = {
    t.cl_name: t
    for t in (
        atomic_int,
        atomic_uint,
        atomic_long,
        atomic_ulong,
        atomic_float,
        atomic_double,
        atomic_intptr_t,
        atomic_uintptr_t,
        atomic_size_t,
        atomic_ptrdiff_t,
        atomic_flag,
    )
}
