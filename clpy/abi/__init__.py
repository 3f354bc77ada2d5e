"""The kernel parameter ABI (see ``clpy.abi.base``): one class per kind of parameter."""

from clpy.abi.base import CLSite, Converter, HeaderArg, Param, SimBinder, arg_count_error
from clpy.abi.buffers import Buffer, ForeignContext, LocalBuffer, LocalMemory, SimDeferred
from clpy.abi.device_array import DeviceArray
from clpy.abi.images import ImageParam, SamplerParam, SimImageArg
from clpy.abi.params import kernel_params, param_class, param_of
from clpy.abi.pipes import PipeParam
from clpy.abi.values import StructValue, Value

__all__ = [
    "Param",
    "Buffer",
    "LocalBuffer",
    "Value",
    "StructValue",
    "PipeParam",
    "ImageParam",
    "SamplerParam",
    "SimImageArg",
    "CLSite",
    "SimBinder",
    "HeaderArg",
    "Converter",
    "SimDeferred",
    "LocalMemory",
    "ForeignContext",
    "DeviceArray",
    "kernel_params",
    "param_class",
    "param_of",
    "arg_count_error",
]
