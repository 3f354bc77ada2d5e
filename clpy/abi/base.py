"""The parameter ABI: what one kernel parameter is on every side of a launch.

Each kind of kernel parameter (a global buffer, a local buffer, a value, a struct value, a
pipe; images and samplers slot in the same way) is one frozen class, computed once per
specialization from the typed IR's parameters (``kernel_params``). A class answers, for its
kind, every question the rest of clpy asks about a parameter:

- ``c_declaration(c_name)``: how the emitter declares it in the kernel's signature;
- ``header_arg()``: how a C host program passes it (``clpy emit --header``);
- ``cl_converter(site)``: the host-side check and the object ``clSetKernelArg`` receives on an
  OpenCL device (copying NumPy data in, and back after success for what the kernel writes);
- ``sim_converter()`` and ``bind_sim(binder, value)``: the same check for the simulator, and
  how the simulator binds the checked value (``SimBinder`` is implemented by ``sim.launch``:
  clpy never imports the simulator, the simulator never asks what kind a parameter is);
- ``splittable``: whether a launch may be split into chunks along this argument (a global
  buffer indexed by work-item can be cut; a value or local memory is passed whole).

Adding a parameter kind is one new class here (and a ``SimBinder`` method if the simulator
needs a new kind of memory).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import numpy as np

from clpy.types.core import PointerType, Type

# A converter takes the user's argument and a list it may append deferred work to (uploads
# on OpenCL, copy-backs on the simulator) and returns what the device binds.
Converter = Callable[[Any, list[Any]], Any]


class SimBinder(Protocol):
    """What the simulator offers a parameter when a launch binds it (``sim.launch``)."""

    def global_buffer(self, param: Any, array: np.ndarray) -> Any:
        """Global or constant memory over ``array`` (written in place)."""

    def local_buffer(self, param: Any, count: int) -> Any:
        """``count`` elements of local memory per work-group."""

    def value(self, param: Any, value: Any) -> Any:
        """A by-value argument (scalar, vector lanes or struct record)."""

    def pipe(self, param: Any, pipe: Any) -> Any:
        """A ``clpy.Pipe`` whose packets live in the host object."""

    def image(self, param: Any, image: Any) -> Any:
        """An image (``clpy.abi.images.SimImageArg``: pixels written in place)."""

    def sampler(self, param: Any, spec: Any) -> Any:
        """A sampler (``clpy.builtins.samplers.SamplerSpec``)."""


@dataclass(frozen=True)
class CLSite:
    """Where an OpenCL launch binds arguments: the pyopencl context and the device limits a
    host-side check needs. ``on_svm`` is called when an SVM pointer is bound."""

    context: Any
    local_mem_size: int | None = None
    max_constant_buffer_size: int | None = None
    on_svm: Callable[[], None] = lambda: None


@dataclass(frozen=True)
class HeaderArg:
    """A parameter as a C host program sets it with ``clSetKernelArg``: the host C type of
    the value passed (``cl_mem``, ``cl_float4``, ``struct pair`` ...), the size expression,
    and a one-line description for the generated header."""

    c_type: str
    size: str
    note: str


@dataclass(frozen=True)
class Param:
    """One kernel parameter. ``index`` is its position among the launch arguments."""

    name: str
    type: Type
    written: bool
    kernel: str
    index: int

    kind: ClassVar[str] = "param"
    splittable: ClassVar[bool] = False

    def where(self) -> str:
        """How error messages name this parameter."""
        return f"{self.kernel}(): parameter {self.name!r} ({describe(self.type)})"

    def c_declaration(self, c_name: str, restrict: bool = False) -> str:
        """The parameter in the kernel's C signature; ``restrict`` only qualifies pointers."""
        del restrict
        return f"{self.type.cl_name} {c_name}"

    def header_arg(self) -> HeaderArg:
        raise NotImplementedError

    def cl_converter(self, site: CLSite) -> Converter:
        raise NotImplementedError

    def sim_converter(self) -> Converter:
        raise NotImplementedError

    def bind_sim(self, binder: SimBinder, value: Any) -> Any:
        raise NotImplementedError


def describe(t: Type) -> str:
    """A parameter type as the user wrote it (``Global[float]``)."""
    if isinstance(t, PointerType):
        return f"{t.space.title}[{t.elem}]"
    return str(t)


def tname(a: Any) -> str:
    """What an argument is, for error messages."""
    if isinstance(a, np.ndarray):
        return f"ndarray of {a.dtype} with shape {a.shape}"
    return type(a).__name__


def arg_count_error(kernel: str, names: list[str], got: int) -> TypeError:
    """The error for a launch with the wrong number of arguments, naming what is missing."""
    if got < len(names):
        missing = ", ".join(repr(n) for n in names[got:])
        return TypeError(
            f"{kernel}() takes {len(names)} argument(s) ({', '.join(names)}), "
            f"got {got}: missing {missing}"
        )
    return TypeError(f"{kernel}() takes {len(names)} argument(s) ({', '.join(names)}), got {got}")
