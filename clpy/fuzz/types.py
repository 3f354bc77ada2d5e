"""The types the fuzzer generates: scalars and vectors, with their clpy and OpenCL spellings,
NumPy dtypes and random values that favour edge cases (zeros, extremes, NaN, infinities,
subnormals) the way CLsmith's and OpenCL-CTS's input sets do."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FT:
    """A fuzzer type: a scalar (``lanes == 1``) or a vector of ``lanes`` elements."""

    cl: str  # OpenCL scalar name of the element: int, uchar, double ...
    py: str  # clpy scalar spelling in generated source: int32, uint8, float64 ...
    bits: int
    signed: bool
    is_float: bool
    lanes: int = 1

    @property
    def is_vector(self) -> bool:
        return self.lanes > 1

    @property
    def elem(self) -> FT:
        return SCALARS[self.cl]

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(_DTYPES[self.cl])

    @property
    def cl_name(self) -> str:
        return self.cl if self.lanes == 1 else f"{self.cl}{self.lanes}"

    @property
    def spelling(self) -> str:
        """How generated source names the type (annotations and constructors)."""
        return self.py if self.lanes == 1 else f"V.{self.cl}{self.lanes}"

    @property
    def unsigned(self) -> FT:
        """The unsigned type of the same width (integers)."""
        return vec(SCALARS["u" + self.cl] if self.signed else self.elem, self.lanes)

    @property
    def min(self) -> int:
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def max(self) -> int:
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1

    def __str__(self) -> str:
        return self.cl_name


_DTYPES = {
    "char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16,
    "int": np.int32, "uint": np.uint32, "long": np.int64, "ulong": np.uint64,
    "float": np.float32, "double": np.float64,
}  # fmt: skip

SCALARS: dict[str, FT] = {
    t.cl: t
    for t in (
        FT("char", "int8", 8, True, False),
        FT("uchar", "uint8", 8, False, False),
        FT("short", "int16", 16, True, False),
        FT("ushort", "uint16", 16, False, False),
        FT("int", "int32", 32, True, False),
        FT("uint", "uint32", 32, False, False),
        FT("long", "int64", 64, True, False),
        FT("ulong", "uint64", 64, False, False),
        FT("float", "float32", 32, True, True),
        FT("double", "float64", 64, True, True),
    )
}
INTS = tuple(t for t in SCALARS.values() if not t.is_float)
FLOATS = (SCALARS["float"], SCALARS["double"])
INT32 = SCALARS["int"]
UINT32 = SCALARS["uint"]
LANES = (2, 3, 4, 8, 16)


def vec(elem: FT, lanes: int) -> FT:
    """The vector of ``lanes`` elements of ``elem`` (``elem`` itself for one lane)."""
    e = SCALARS[elem.cl]
    if lanes == 1:
        return e
    return FT(e.cl, e.py, e.bits, e.signed, e.is_float, lanes)


def int_of_width(bits: int, signed: bool) -> FT:
    return next(t for t in INTS if t.bits == bits and t.signed == signed)


def random_ints(rng: np.random.Generator, t: FT, n: int) -> np.ndarray:
    """``n`` values of integer type ``t``: a mix of extremes, small values and uniform bits."""
    info = np.iinfo(t.dtype)
    special = np.array(
        [0, 1, info.max, info.min, info.max - 1, info.min + 1, 2, 7]
        + ([-1, -2, -7] if t.signed else []),
        dtype=object,
    )
    kind = rng.integers(0, 4, n)
    uniform = rng.integers(info.min, info.max, n, dtype=t.dtype, endpoint=True)
    small = rng.integers(-20 if t.signed else 0, 21, n).astype(t.dtype)
    spec = special[rng.integers(0, len(special), n)].astype(np.int64 if t.signed else np.uint64)
    out = np.where(kind == 0, spec.astype(t.dtype), np.where(kind == 1, small, uniform))
    return out.astype(t.dtype)


def random_floats(rng: np.random.Generator, t: FT, n: int) -> np.ndarray:
    """``n`` values of float type ``t``: ordinary values, signed zeros, infinities, NaN,
    subnormals, extremes and integers (for the conversions' rounding and saturation)."""
    dt = t.dtype
    fi = np.finfo(dt)
    special = np.array(
        [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.5, np.inf, -np.inf, np.nan, float(fi.max),
         -float(fi.max), float(fi.tiny), float(fi.tiny) / 4, 2.0**31, -(2.0**31), 2.0**63,
         4294967296.5, 65535.5, -128.5, 1e-30],
        dtype=np.float64,
    )  # fmt: skip
    kind = rng.integers(0, 5, n)
    with np.errstate(over="ignore"):
        spec = special[rng.integers(0, len(special), n)].astype(dt)
        normal = rng.normal(0.0, 100.0, n).astype(dt)
        wide = (rng.uniform(-1, 1, n) * 10.0 ** rng.integers(-40, 40, n)).astype(dt)
        ints = rng.integers(-300, 300, n).astype(dt) + dt.type(0.5) * rng.integers(0, 2, n)
    out = np.where(kind == 0, spec, np.where(kind == 1, normal, np.where(kind == 2, wide, ints)))
    return out.astype(dt)


def random_values(rng: np.random.Generator, t: FT, n: int) -> np.ndarray:
    return random_floats(rng, t, n) if t.is_float else random_ints(rng, t, n)
