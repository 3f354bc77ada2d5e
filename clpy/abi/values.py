"""By-value kernel parameters: scalars and vectors (``Value``) and structs (``StructValue``).

A value is checked and converted once on the host: integers must fit the parameter's type
(no silent wrap-around), floats must be finite-representable, vectors have exactly their lane
count (3-vectors are passed padded to 4 lanes, as OpenCL lays them out), structs are NumPy
records of the struct's ``dtype``.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from clpy.abi.base import CLSite, Converter, HeaderArg, Param, SimBinder, tname
from clpy.types.core import ScalarType, VectorType
from clpy.types.structs import StructType

_NOTHING = object()


def int_range(t: ScalarType) -> tuple[int, int]:
    """The values an integer type holds."""
    if t.is_signed:
        return -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
    return 0, (1 << t.bits) - 1


def host_c_type(t: ScalarType | VectorType) -> str:
    """The OpenCL host API's name of a value type (``cl_float4``; cl_platform.h)."""
    return f"cl_{t.cl_name}"


@dataclass(frozen=True)
class Value(Param):
    """A scalar or vector passed by value."""

    kind: ClassVar[str] = "value"

    def header_arg(self) -> HeaderArg:
        assert isinstance(self.type, (ScalarType, VectorType))
        c = host_c_type(self.type)
        return HeaderArg(c, f"sizeof({c})", f"{self.type.cl_name} value")

    def convert(self) -> Callable[[Any], Any]:
        """A function taking the user's number (or lanes) to what the device receives."""
        t = self.type
        if isinstance(t, ScalarType):
            return _scalar_converter(self, t)
        assert isinstance(t, VectorType)
        return _vector_converter(self, t)

    def cl_converter(self, site: CLSite) -> Converter:
        t = self.type
        if not isinstance(t, ScalarType):
            vconv = self.convert()
            return lambda a, pending: vconv(a)
        # What clSetKernelArg copies: the value's bytes (a NumPy scalar where struct has no
        # format of that size). Packing costs ~0.05 µs, a NumPy scalar ~0.3 µs.
        conv = _scalar_converter(self, t, _pack_format(t))
        # The same immutable number as last time converts to the same object, which the
        # launcher recognises by identity: no conversion, no clSetKernelArg.
        memo: list[tuple[Any, Any]] = [(_NOTHING, None)]

        def conv_scalar(a: Any, pending: list[Any]) -> Any:
            m = memo[0]
            if a is m[0]:
                return m[1]
            out = conv(a)
            if type(a) in (int, float) or isinstance(a, np.generic):
                memo[0] = (a, out)
            return out

        return conv_scalar

    def cl_scalar_converter(self) -> Callable[[Any], Any]:
        """``cl_converter`` of a scalar without its memo, for callers that remember the
        numbers they converted (clpy/runtime/clvariant.py ``Variant.set_recent``)."""
        t = self.type
        assert isinstance(t, ScalarType)
        return _scalar_converter(self, t, _pack_format(t))

    def sim_converter(self) -> Converter:
        conv = self.convert()
        if isinstance(self.type, VectorType):
            n = self.type.n
            return lambda a, restores: conv(a)[:n]
        return lambda a, restores: conv(a)

    def bind_sim(self, binder: SimBinder, value: Any) -> Any:
        return binder.value(self, value)


@dataclass(frozen=True)
class StructValue(Param):
    """A ``@clpy.struct`` passed by value (a NumPy record of ``T.dtype``)."""

    kind: ClassVar[str] = "struct"

    def header_arg(self) -> HeaderArg:
        assert isinstance(self.type, StructType)
        return HeaderArg(
            self.type.name, f"sizeof({self.type.name})", f"struct {self.type.name} value"
        )

    def convert(self) -> Callable[[Any], np.ndarray]:
        t = self.type
        assert isinstance(t, StructType)
        dtype = t.dtype

        def conv(a: Any) -> np.ndarray:
            if isinstance(a, (np.void, np.ndarray)) and a.dtype == dtype and np.ndim(a) == 0:
                return np.array(a, dtype=dtype)
            raise TypeError(
                f"{self.where()}: expected a {t.name} value ({t.name}(...) or a "
                f"NumPy scalar of {t.name}.dtype), got {tname(a)}"
            )

        return conv

    def cl_converter(self, site: CLSite) -> Converter:
        conv = self.convert()
        return lambda a, pending: conv(a)

    def sim_converter(self) -> Converter:
        conv = self.convert()
        return lambda a, restores: conv(a)

    def bind_sim(self, binder: SimBinder, value: Any) -> Any:
        return binder.value(self, value)


def _pack_format(t: ScalarType) -> str | None:
    """The ``struct`` format of ``t``'s host bytes (native order, as NumPy's scalars); None
    where NumPy converts (half, bool)."""
    dt = np.dtype(t.dtype)
    if dt.kind in "iu" and dt.itemsize in (1, 2, 4, 8):
        code = {1: "b", 2: "h", 4: "i", 8: "q"}[dt.itemsize]
        return "=" + (code if dt.kind == "i" else code.upper())
    if dt.kind == "f" and dt.itemsize in (4, 8):
        return "=f" if dt.itemsize == 4 else "=d"
    return None


def _scalar_converter(p: Param, t: ScalarType, pack: str | None = None) -> Callable[[Any], Any]:
    """A function taking a Python/NumPy number to a NumPy scalar of exactly ``t``, or to its
    bytes in ``struct`` format ``pack`` (after the same checks)."""
    make: Callable[[Any], Any] = t.dtype.type if pack is None else struct.Struct(pack).pack
    if t.is_int:
        lo, hi = int_range(t)

        def conv_int(a: Any) -> Any:
            if type(a) is int:
                if lo <= a <= hi:
                    return make(a)
            elif isinstance(a, (bool, np.bool_, np.integer)) or (
                isinstance(a, np.ndarray) and a.ndim == 0 and a.dtype.kind in "biu"
            ):
                v = int(a)
                if lo <= v <= hi:
                    return make(v)
                a = v
            else:
                raise TypeError(
                    f"{p.where()}: expected an integer, got {tname(a)} {a!r}"
                    if isinstance(a, (float, np.floating))
                    else f"{p.where()}: expected an integer, got {tname(a)}"
                )
            raise ValueError(f"{p.where()}: {a} is out of range for {t} ({lo}..{hi})")

        return conv_int
    big = float(np.finfo(t.dtype).max)

    def conv_float(a: Any) -> Any:
        if (
            type(a) is float
            or isinstance(a, (int, np.integer, np.floating, np.bool_))
            or (isinstance(a, np.ndarray) and a.ndim == 0 and a.dtype.kind in "biuf")
        ):
            v = float(a)
            if abs(v) > big and not math.isinf(v):
                raise ValueError(
                    f"{p.where()}: {a!r} is out of range for {t} (largest finite value {big:g})"
                )
            return make(v)
        raise TypeError(f"{p.where()}: expected a number, got {tname(a)}")

    return conv_float


def _vector_converter(p: Param, t: VectorType) -> Callable[[Any], np.ndarray]:
    """A function taking a sequence of lanes to a NumPy array padded like OpenCL (3 → 4)."""
    dtype = t.elem.dtype
    lanes = 4 if t.n == 3 else t.n
    lo_hi = int_range(t.elem) if t.elem.is_int else None
    big = 0.0 if t.elem.is_int else float(np.finfo(dtype).max)

    def conv(a: Any) -> np.ndarray:
        if isinstance(a, (int, float, np.generic)) or a is None or isinstance(a, str):
            raise TypeError(
                f"{p.where()}: expected {t.n} lanes (a sequence or an array), got {tname(a)}"
            )
        arr = np.asarray(a)
        if arr.shape not in ((t.n,), (lanes,)):
            raise ValueError(f"{p.where()}: expected {t.n} lanes, got shape {arr.shape}")
        if lo_hi is not None:
            if arr.dtype.kind not in "biu":
                raise TypeError(f"{p.where()}: expected integer lanes, got {arr.dtype}")
            if arr.size and (int(arr.min()) < lo_hi[0] or int(arr.max()) > lo_hi[1]):
                raise ValueError(
                    f"{p.where()}: a lane is out of range for {t.elem} ({lo_hi[0]}..{lo_hi[1]})"
                )
        else:
            # Like a scalar: numbers only (NumPy would drop an imaginary part with a warning,
            # or fail on strings without naming the parameter), and no silent overflow to inf.
            if arr.dtype.kind not in "biuf":
                raise TypeError(f"{p.where()}: expected numeric lanes, got {arr.dtype}")
            finite = np.abs(arr[np.isfinite(arr)]) if arr.dtype.kind == "f" else arr
            if finite.size and float(np.max(np.abs(finite))) > big:
                raise ValueError(
                    f"{p.where()}: a lane is out of range for {t.elem} (largest finite value "
                    f"{big:g})"
                )
        out = np.zeros(lanes, dtype)
        out[: arr.size] = arr
        return out

    return conv
