"""clpy: OpenCL kernels written in Python.

@clpy.kernel
def saxpy(a: float32, x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    y[i] = a * x[i] + y[i]

print(saxpy.source)                      # OpenCL C 2.0
saxpy[(n,), (64,)](2.0, x, y)            # run on the default device
"""

from __future__ import annotations

from typing import Any

from clpy import builtins as _builtins
from clpy.abi import DeviceArray, LocalMemory
from clpy.builtins.arrays import addr, local_array, private_array
from clpy.builtins.constants import CONSTANTS as _CONSTANTS
from clpy.builtins.conversions import missing_conversion_hint
from clpy.builtins.enqueue import local_bytes
from clpy.builtins.reductions import API as _COLLECTIVE_API
from clpy.builtins.registry import REGISTRY as _REGISTRY
from clpy.builtins.samplers import SHORT_NAMES as _SAMPLER_NAMES
from clpy.builtins.samplers import SamplerSpec, sampler
from clpy.emit.targets import Target
from clpy.errors import (
    BuildError,
    CompileError,
    ConstantError,
    FeatureError,
    KernelTypeError,
    RecursionNotAllowedError,
    UndefinedNameError,
    UniformityWarning,
    UnsupportedSyntaxError,
)
from clpy.kernel import Func, Kernel, Specialization, func, kernel, reduction
from clpy.program_scope import constant_array, global_var
from clpy.runtime import api as _api
from clpy.runtime.arrays import empty, pinned_empty, to_device, zeros, zeros_like
from clpy.runtime.images import Image
from clpy.runtime.pipes import Pipe
from clpy.types.annotations import Constant, Global, Local, Private, Ptr, constexpr
from clpy.types.atomics import ATOMIC_TYPES as _ATOMIC_TYPES
from clpy.types.catalog import (
    ALIASES as _ALIASES,
)
from clpy.types.catalog import (
    SCALARS_BY_NAME as _SCALARS,
)
from clpy.types.catalog import (
    VECTORS_BY_NAME as _VECTORS,
)
from clpy.types.catalog import event_t
from clpy.types.core import Type
from clpy.types.enqueue import (
    clk_event_t,
    clk_profiling_info,
    kernel_enqueue_flags_t,
    ndrange_t,
    queue_t,
)
from clpy.types.images import (
    Image1D,
    Image1DArray,
    Image1DBuffer,
    Image2D,
    Image2DArray,
    Image2DArrayDepth,
    Image2DDepth,
    Image3D,
    ReadOnly,
    ReadWrite,
    Sampler,
    WriteOnly,
)
from clpy.types.pipes import WritePipe, reserve_id_t
from clpy.types.structs import StructType, struct
from clpy.vectors import vector

_TYPES: dict[str, Type] = {**_SCALARS, **_VECTORS, **_ALIASES}
globals().update(_TYPES)
globals().update(_CONSTANTS)
globals().update(_COLLECTIVE_API)  # work_group_reduce(x, op), reduction, ...
globals().update(_ATOMIC_TYPES)  # atomic_int ... atomic_flag
globals().update(_SAMPLER_NAMES)  # clpy.CLAMP_TO_EDGE, clpy.LINEAR ... for clpy.sampler
del _builtins

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """Built-ins (``clpy.sin``, ``clpy.convert_float4_sat``) come from the registry."""
    b = _REGISTRY.get(name)
    if b is not None:
        return b
    if name in (
        "devices",
        "use_device",
        "clear_caches",
        "default_device",
        "get_device",
        "LaunchHandle",
        "LaunchError",
    ):
        return getattr(_api, name)
    if name == "sim":  # lazy: importing clpy never imports the simulator
        import importlib

        return importlib.import_module("clpy.sim")
    if name == "vectors":
        import importlib

        return importlib.import_module("clpy.vectors")
    if name == "algorithms":  # lazy: clpy.algorithms imports clpy
        import importlib

        return importlib.import_module("clpy.algorithms")
    hint = missing_conversion_hint(name)
    raise AttributeError(f"module 'clpy' has no attribute {name!r}" + (f": {hint}" if hint else ""))


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_REGISTRY))


__all__ = [
    "kernel",
    "func",
    "reduction",
    "struct",
    "constexpr",
    "Global",
    "Local",
    "Constant",
    "Private",
    "Ptr",
    "Kernel",
    "Func",
    "Specialization",
    "StructType",
    "Type",
    "Target",
    "local_array",
    "private_array",
    "addr",
    "CompileError",
    "UnsupportedSyntaxError",
    "UndefinedNameError",
    "KernelTypeError",
    "UniformityWarning",
    "ConstantError",
    "RecursionNotAllowedError",
    "FeatureError",
    "BuildError",
    "vector",
    "Pipe",
    "WritePipe",
    "reserve_id_t",
    "queue_t",
    "ndrange_t",
    "clk_event_t",
    "kernel_enqueue_flags_t",
    "clk_profiling_info",
    "local_bytes",
    "event_t",
    "constant_array",
    "global_var",
    "LocalMemory",
    "DeviceArray",
    "to_device",
    "pinned_empty",
    "empty",
    "zeros",
    "zeros_like",
    "Image",
    "Image1D",
    "Image1DBuffer",
    "Image1DArray",
    "Image2D",
    "Image2DArray",
    "Image2DDepth",
    "Image2DArrayDepth",
    "Image3D",
    "ReadOnly",
    "WriteOnly",
    "ReadWrite",
    "Sampler",
    "SamplerSpec",
    "sampler",
]
