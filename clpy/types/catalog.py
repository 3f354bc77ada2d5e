"""Every built-in scalar and vector type of OpenCL C, by name (spec §1.1.1, §1.1.2)."""

from __future__ import annotations

from clpy.types.core import Kind, OpaqueType, ScalarType, VectorType

void = ScalarType("void", Kind.VOID, 0)
bool_ = ScalarType("bool", Kind.BOOL, 8, "bool")
char = ScalarType("char", Kind.SINT, 8, "int8")
uchar = ScalarType("uchar", Kind.UINT, 8, "uint8")
short = ScalarType("short", Kind.SINT, 16, "int16")
ushort = ScalarType("ushort", Kind.UINT, 16, "uint16")
int_ = ScalarType("int", Kind.SINT, 32, "int32")
uint = ScalarType("uint", Kind.UINT, 32, "uint32")
long = ScalarType("long", Kind.SINT, 64, "int64")
ulong = ScalarType("ulong", Kind.UINT, 64, "uint64")
half = ScalarType("half", Kind.FLOAT, 16, "float16")
float_ = ScalarType("float", Kind.FLOAT, 32, "float32")
double = ScalarType("double", Kind.FLOAT, 64, "float64")
# The size-like types are 64-bit on every device clpy targets (address bits = 64); the host
# side checks CL_DEVICE_ADDRESS_BITS before launching.
size_t = ScalarType("size_t", Kind.UINT, 64, "uint64")
ptrdiff_t = ScalarType("ptrdiff_t", Kind.SINT, 64, "int64")
intptr_t = ScalarType("intptr_t", Kind.SINT, 64, "int64")
uintptr_t = ScalarType("uintptr_t", Kind.UINT, 64, "uint64")

INTEGER_SCALARS: tuple[ScalarType, ...] = (char, uchar, short, ushort, int_, uint, long, ulong)
FLOAT_SCALARS: tuple[ScalarType, ...] = (half, float_, double)
ARITH_SCALARS: tuple[ScalarType, ...] = INTEGER_SCALARS + FLOAT_SCALARS
SIZE_SCALARS: tuple[ScalarType, ...] = (size_t, ptrdiff_t, intptr_t, uintptr_t)
ALL_SCALARS: tuple[ScalarType, ...] = (bool_, *ARITH_SCALARS, *SIZE_SCALARS)

VECTOR_SIZES: tuple[int, ...] = (2, 3, 4, 8, 16)

SCALARS_BY_NAME: dict[str, ScalarType] = {t.name: t for t in (void, *ALL_SCALARS)}

VECTORS_BY_NAME: dict[str, VectorType] = {
    f"{e.name}{n}": VectorType(e, n) for e in ARITH_SCALARS for n in VECTOR_SIZES
}

# NumPy-style aliases (DESIGN.md "Types").
ALIASES: dict[str, ScalarType] = {
    "int8": char,
    "uint8": uchar,
    "int16": short,
    "uint16": ushort,
    "int32": int_,
    "uint32": uint,
    "int64": long,
    "uint64": ulong,
    "float16": half,
    "float32": float_,
    "float64": double,
}

BY_DTYPE: dict[str, ScalarType] = {t.np_name: t for t in (bool_, *ARITH_SCALARS) if t.np_name}

sampler_t = OpaqueType("sampler_t")
event_t = OpaqueType("event_t")


def signed_of(t: ScalarType) -> ScalarType:
    """The signed integer type of the same width (used for vector relational results)."""
    return {8: char, 16: short, 32: int_, 64: long}[t.bits]


def unsigned_of(t: ScalarType) -> ScalarType:
    return {8: uchar, 16: ushort, 32: uint, 64: ulong}[t.bits]


def scalar_for_dtype(dtype: object) -> ScalarType | None:
    import numpy as np

    try:
        name = np.dtype(dtype).name  # type: ignore[call-overload]
    except TypeError:
        return None
    return BY_DTYPE.get(name)
