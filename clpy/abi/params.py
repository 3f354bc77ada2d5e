"""``kernel_params``: the parameter ABI of one kernel specialization, from its typed IR."""

from __future__ import annotations

from collections.abc import Sequence

from clpy.abi.base import Param
from clpy.abi.buffers import Buffer, LocalBuffer
from clpy.abi.images import ImageParam, SamplerParam
from clpy.abi.pipes import PipeParam
from clpy.abi.queues import QueueParam
from clpy.abi.values import StructValue, Value
from clpy.ir.nodes import Function, Var
from clpy.types.catalog import sampler_t
from clpy.types.core import AddressSpace, PointerType, ScalarType, Type, VectorType
from clpy.types.enqueue import queue_t
from clpy.types.images import ImageType
from clpy.types.pipes import PipeType
from clpy.types.structs import StructType


def param_class(t: Type) -> type[Param]:
    """The ABI class of a kernel parameter of type ``t``."""
    if isinstance(t, PointerType):
        return LocalBuffer if t.space is AddressSpace.LOCAL else Buffer
    if isinstance(t, PipeType):
        return PipeParam
    if isinstance(t, ImageType):
        return ImageParam
    if t is sampler_t:
        return SamplerParam
    if t is queue_t:
        return QueueParam
    if isinstance(t, StructType):
        return StructValue
    if isinstance(t, VectorType) or (isinstance(t, ScalarType) and t.name != "void"):
        return Value
    raise TypeError(f"{t} is not a kernel parameter type")


def param_of(fn: Function, v: Var, index: int, kernel: str | None = None) -> Param:
    """The ABI object of parameter ``v`` of kernel ``fn``."""
    cls = param_class(v.type)
    return cls(v.name, v.type, v.name in fn.written, kernel or fn.name, index)


def kernel_params(
    fn: Function, names: Sequence[str] | None = None, kernel: str | None = None
) -> tuple[Param, ...]:
    """The ABI of every parameter the compiled kernel receives, in ``fn.params`` order.

    ``names`` are the launch arguments in order (the Python signature, constexprs included);
    each ``Param.index`` is its position there. ``kernel`` names the kernel in errors.
    """
    pos = {n: i for i, n in enumerate(names)} if names is not None else None
    return tuple(
        param_of(fn, v, pos[v.name] if pos is not None else i, kernel)
        for i, v in enumerate(fn.params)
    )
