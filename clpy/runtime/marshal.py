"""Launch arguments: checked against the kernel's parameters before anything is sent.

Each parameter gets a small converter built once per specialization. A converter either
returns what the device needs (a pyopencl buffer, a NumPy scalar of the exact type ...) or
raises ``TypeError`` / ``ValueError`` naming the parameter. NumPy arrays are copied in; the
launcher copies back only pointers the kernel writes (``Function.written``), and only after the
kernel succeeded.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from clpy.runtime.pipes import Pipe
from clpy.types.core import AddressSpace, PointerType, ScalarType, Type, VectorType
from clpy.types.pipes import PipeType
from clpy.types.structs import StructType


class LocalMemory:
    """Size of a ``Local[T]`` kernel argument: ``count`` elements of the parameter's type.

    >>> block_sum[(1024,), (256,)](x, out, clpy.LocalMemory(256))
    """

    __slots__ = ("count", "dtype")

    def __init__(self, count: int, dtype: Any = None) -> None:
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count <= 0:
            raise ValueError(f"LocalMemory(count): count must be a positive int, got {count!r}")
        self.count = int(count)
        self.dtype = np.dtype(dtype) if dtype is not None else None

    def nbytes(self, elem: Type) -> int:
        return self.count * elem.size

    def __repr__(self) -> str:
        return f"clpy.LocalMemory({self.count})"


@dataclass(frozen=True)
class Param:
    """What the launcher knows about one kernel parameter."""

    name: str
    type: Type
    written: bool
    kernel: str

    def where(self) -> str:
        return f"{self.kernel}(): parameter {self.name!r} ({_describe(self.type)})"


def _describe(t: Type) -> str:
    if isinstance(t, PointerType):
        return f"{t.space.title}[{t.elem}]"
    return str(t)


def _tname(a: Any) -> str:
    if isinstance(a, np.ndarray):
        return f"ndarray of {a.dtype} with shape {a.shape}"
    return type(a).__name__


def element_layout(p: Param, elem: Type) -> tuple[np.dtype[Any], int]:
    """(element dtype, lanes) of the host array for a pointer to ``elem``; lanes 0 = scalar."""
    if isinstance(elem, VectorType):
        return elem.elem.dtype, (4 if elem.n == 3 else elem.n)
    if isinstance(elem, (ScalarType, StructType)):
        return elem.dtype, 0
    from clpy.types.atomics import AtomicType

    if isinstance(elem, AtomicType):  # atomic_int ...: host arrays of the value type
        return elem.dtype, 0
    raise TypeError(f"{p.where()}: pointers to {elem} cannot be passed from the host")


def check_host_array(p: Param, a: Any) -> None:
    """dtype, shape, contiguity and writability of a NumPy or pyopencl array argument."""
    assert isinstance(p.type, PointerType)
    dtype, lanes = element_layout(p, p.type.elem)
    if a.dtype != dtype:
        hint = ""
        if isinstance(p.type.elem, StructType):
            hint = f" (use {p.type.elem.name}.dtype)"
        raise TypeError(f"{p.where()}: expected an array of {dtype}{hint}, got {_tname(a)}")
    if lanes:
        if a.ndim < 2 or a.shape[-1] != lanes:
            pad = " (3-vectors are stored padded to 4 lanes)" if lanes == 4 and \
                isinstance(p.type.elem, VectorType) and p.type.elem.n == 3 else ""
            raise ValueError(f"{p.where()}: expected shape (count, {lanes}){pad}, got "
                             f"shape {a.shape}")
    elif a.ndim == 0:
        raise ValueError(f"{p.where()}: expected an array with at least one dimension, got a "
                         "0-d array")
    if not a.flags.c_contiguous:
        raise ValueError(f"{p.where()}: the array is not C-contiguous; pass "
                         "np.ascontiguousarray(...) (a copy) instead")
    if p.written and isinstance(a, np.ndarray) and not a.flags.writeable:
        raise ValueError(f"{p.where()}: the kernel writes through this pointer but the array "
                         "is read-only (flags.writeable is False)")


def _int_range(t: ScalarType) -> tuple[int, int]:
    if t.is_signed:
        return -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
    return 0, (1 << t.bits) - 1


def scalar_converter(p: Param, t: ScalarType) -> Callable[[Any], Any]:
    """A function taking a Python/NumPy number to a NumPy scalar of exactly ``t``."""
    make = t.dtype.type
    if t.is_int:
        lo, hi = _int_range(t)

        def conv_int(a: Any) -> Any:
            if type(a) is int:
                if lo <= a <= hi:
                    return make(a)
            elif isinstance(a, (bool, np.bool_, np.integer)) or (
                    isinstance(a, np.ndarray) and a.ndim == 0 and a.dtype.kind in "biu"):
                v = int(a)
                if lo <= v <= hi:
                    return make(v)
                a = v
            else:
                raise TypeError(f"{p.where()}: expected an integer, got {_tname(a)} {a!r}"
                                if isinstance(a, (float, np.floating)) else
                                f"{p.where()}: expected an integer, got {_tname(a)}")
            raise ValueError(f"{p.where()}: {a} is out of range for {t} ({lo}..{hi})")

        return conv_int
    big = float(np.finfo(t.dtype).max)

    def conv_float(a: Any) -> Any:
        if type(a) is float or isinstance(a, (int, np.integer, np.floating, np.bool_)) or (
                isinstance(a, np.ndarray) and a.ndim == 0 and a.dtype.kind in "biuf"):
            v = float(a)
            if abs(v) > big and not math.isinf(v):
                raise ValueError(f"{p.where()}: {a!r} is out of range for {t} "
                                 f"(largest finite value {big:g})")
            return make(v)
        raise TypeError(f"{p.where()}: expected a number, got {_tname(a)}")

    return conv_float


def vector_converter(p: Param, t: VectorType) -> Callable[[Any], np.ndarray]:
    """A function taking a sequence of lanes to a NumPy array padded like OpenCL (3 → 4)."""
    dtype = t.elem.dtype
    lanes = 4 if t.n == 3 else t.n
    lo_hi = _int_range(t.elem) if t.elem.is_int else None

    def conv(a: Any) -> np.ndarray:
        if isinstance(a, (int, float, np.generic)) or a is None or isinstance(a, str):
            raise TypeError(f"{p.where()}: expected {t.n} lanes (a sequence or an array), "
                            f"got {_tname(a)}")
        arr = np.asarray(a)
        if arr.shape not in ((t.n,), (lanes,)):
            raise ValueError(f"{p.where()}: expected {t.n} lanes, got shape {arr.shape}")
        if lo_hi is not None:
            if arr.dtype.kind not in "biu":
                raise TypeError(f"{p.where()}: expected integer lanes, got {arr.dtype}")
            if arr.size and (int(arr.min()) < lo_hi[0] or int(arr.max()) > lo_hi[1]):
                raise ValueError(f"{p.where()}: a lane is out of range for {t.elem} "
                                 f"({lo_hi[0]}..{lo_hi[1]})")
        out = np.zeros(lanes, dtype)
        out[:arr.size] = arr
        return out

    return conv


def struct_converter(p: Param, t: StructType) -> Callable[[Any], np.ndarray]:
    """A function taking a NumPy structured scalar of ``t.dtype`` to a 0-d array."""
    dtype = t.dtype

    def conv(a: Any) -> np.ndarray:
        if isinstance(a, (np.void, np.ndarray)) and a.dtype == dtype and np.ndim(a) == 0:
            return np.array(a, dtype=dtype)
        raise TypeError(f"{p.where()}: expected a {t.name} value ({t.name}(...) or a NumPy "
                        f"scalar of {t.name}.dtype), got {_tname(a)}")

    return conv


def value_converter(p: Param) -> Callable[[Any], Any]:
    """The converter for a by-value parameter."""
    t = p.type
    if isinstance(t, ScalarType):
        return scalar_converter(p, t)
    if isinstance(t, VectorType):
        return vector_converter(p, t)
    if isinstance(t, StructType):
        return struct_converter(p, t)
    raise TypeError(f"{p.where()}: cannot pass a {t} from the host")


def check_local(p: Param, a: Any, limit: int | None) -> LocalMemory:
    """A ``LocalMemory`` argument for a ``Local[T]`` parameter."""
    assert isinstance(p.type, PointerType)
    if not isinstance(a, LocalMemory):
        raise TypeError(f"{p.where()}: local memory is sized with clpy.LocalMemory(count), "
                        f"got {_tname(a)}")
    if limit is not None and a.nbytes(p.type.elem) > limit:
        raise ValueError(f"{p.where()}: LocalMemory({a.count}) needs "
                         f"{a.nbytes(p.type.elem)} bytes; the device has {limit}")
    return a


def pointer_kind(p: Param) -> str:
    """'local', 'global' (Global/Constant), 'pipe' or 'value'."""
    t = p.type
    if isinstance(t, PipeType):
        return "pipe"
    if isinstance(t, PointerType):
        return "local" if t.space is AddressSpace.LOCAL else "global"
    return "value"


def check_pipe(p: Param, a: Any) -> Pipe:
    """A ``clpy.Pipe`` argument for a ``Pipe[T]``/``WritePipe[T]`` parameter."""
    t = p.type
    assert isinstance(t, PipeType)
    if not isinstance(a, Pipe):
        raise TypeError(f"{p.where()}: a {t.cl_name} parameter takes a clpy.Pipe(dtype, "
                        f"max_packets), got {_tname(a)}")
    if a.elem is not t.elem:
        raise TypeError(f"{p.where()}: the pipe carries {a.elem} packets, the parameter "
                        f"{t.elem} packets")
    return a


def arg_count_error(kernel: str, names: list[str], got: int) -> TypeError:
    """The error for a launch with the wrong number of arguments, naming what is missing."""
    if got < len(names):
        missing = ", ".join(repr(n) for n in names[got:])
        return TypeError(f"{kernel}() takes {len(names)} argument(s) ({', '.join(names)}), "
                         f"got {got}: missing {missing}")
    return TypeError(f"{kernel}() takes {len(names)} argument(s) ({', '.join(names)}), "
                     f"got {got}")
