"""The clpy type objects: scalars, vectors, pointers, arrays.

Types are immutable and interned: building the same type twice returns the same object, so
``vector(float32, 4) is float4``. Each type knows its OpenCL spelling, its NumPy dtype (where it
has one), its size and its alignment (OpenCL C 2.0 §1.1, table 6.1 and §1.1.5 on alignment).
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np


class Type:
    """Base of every clpy type. Instances are interned by their constructor arguments."""

    _cache: ClassVar[dict[tuple[Any, ...], Type]] = {}

    def __new__(cls, *args: Any, **kwargs: Any) -> Type:
        key = (cls, *_field_values(cls, args, kwargs))
        cached = Type._cache.get(key)
        if cached is None:
            cached = super().__new__(cls)
            Type._cache[key] = cached
        return cached

    # A kernel annotation may be written as a type; these let mypy accept `x: float32`.
    @property
    def cl_name(self) -> str:
        raise NotImplementedError

    @property
    def size(self) -> int:
        raise NotImplementedError

    @property
    def align(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"clpy.{self.cl_name}"

    def __str__(self) -> str:
        return self.cl_name

    def __copy__(self) -> Type:
        return self

    def __deepcopy__(self, memo: Any) -> Type:
        return self

    def __reduce__(self) -> Any:
        # Rebuilt through the interning constructor: unpickling gives the same object back
        # (`float32 is float32` holds in a Dask worker too).
        fields: tuple[dataclasses.Field[Any], ...] = dataclasses.fields(self)  # type: ignore[arg-type]
        return (type(self), tuple(getattr(self, f.name) for f in fields))


def _field_values(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """Normalise constructor arguments (positional, keyword, defaults) to the field tuple."""
    values: list[Any] = list(args)
    for f in dataclasses.fields(cls)[len(args) :]:
        if f.name in kwargs:
            values.append(kwargs[f.name])
        else:
            values.append(f.default)
    return tuple(values)


class Kind(enum.Enum):
    VOID = "void"
    BOOL = "bool"
    SINT = "sint"
    UINT = "uint"
    FLOAT = "float"


@dataclass(frozen=True, eq=False, repr=False)
class ScalarType(Type):
    """A built-in scalar type such as ``int`` or ``float`` (spec §1.1.1)."""

    name: str
    kind: Kind
    bits: int
    np_name: str | None = None

    @property
    def cl_name(self) -> str:
        return self.name

    @property
    def size(self) -> int:
        return max(self.bits // 8, 1) if self.kind is not Kind.VOID else 0

    @property
    def dtype(self) -> np.dtype[Any]:
        if self.np_name is None:
            raise TypeError(f"{self.name} has no NumPy dtype")
        return np.dtype(self.np_name)

    @property
    def is_int(self) -> bool:
        return self.kind in (Kind.SINT, Kind.UINT)

    @property
    def is_signed(self) -> bool:
        return self.kind in (Kind.SINT, Kind.FLOAT)

    @property
    def is_float(self) -> bool:
        return self.kind is Kind.FLOAT

    @property
    def is_bool(self) -> bool:
        return self.kind is Kind.BOOL

    @property
    def rank(self) -> int:
        """Conversion rank for the usual arithmetic conversions (spec §1.2.6 / C99 6.3.1.8)."""
        return self.bits

    def __call__(self, *args: Any) -> Any:
        """Outside kernels, build a NumPy scalar of this type: ``clpy.float32(1.5)``."""
        if len(args) != 1:
            raise TypeError(f"{self.name}() takes exactly one argument outside a kernel")
        return self.dtype.type(args[0])


@dataclass(frozen=True, eq=False, repr=False)
class VectorType(Type):
    """An OpenCL vector ``<elem><n>`` with n in 2, 3, 4, 8, 16 (spec §1.1.2)."""

    elem: ScalarType
    n: int

    @property
    def cl_name(self) -> str:
        return f"{self.elem.name}{self.n}"

    @property
    def size(self) -> int:
        # A 3-component vector has the size and alignment of a 4-component one (§1.1.5).
        return self.elem.size * (4 if self.n == 3 else self.n)

    @property
    def dtype(self) -> np.dtype[Any]:
        """Host layout: a structured-free subarray dtype padded like OpenCL (3 → 4 lanes)."""
        lanes = 4 if self.n == 3 else self.n
        return np.dtype((self.elem.dtype, (lanes,)))

    def __call__(self, *args: Any) -> Any:
        """Outside kernels, build a NumPy array holding one vector value."""
        flat = np.concatenate([np.ravel(np.asarray(a, dtype=self.elem.dtype)) for a in args])
        if flat.size == 1:
            flat = np.repeat(flat, self.n)
        if flat.size != self.n:
            raise TypeError(f"{self.cl_name}() needs {self.n} components, got {flat.size}")
        return flat


class AddressSpace(enum.Enum):
    GLOBAL = "__global"
    LOCAL = "__local"
    CONSTANT = "__constant"
    PRIVATE = "__private"
    GENERIC = ""

    @property
    def title(self) -> str:
        return {
            "__global": "Global",
            "__local": "Local",
            "__constant": "Constant",
            "__private": "Private",
            "": "Ptr",
        }[self.value]


@dataclass(frozen=True, eq=False, repr=False)
class PointerType(Type):
    """A pointer ``space elem *`` (spec §1.5). ``const`` marks a pointer to const data."""

    elem: Type
    space: AddressSpace
    const: bool = False

    @property
    def cl_name(self) -> str:
        space = f"{self.space.value} " if self.space.value else ""
        const = "const " if self.const else ""
        return f"{space}{const}{self.elem.cl_name}*"

    @property
    def size(self) -> int:
        return 8

    def with_const(self, const: bool) -> PointerType:
        return PointerType(self.elem, self.space, const)

    def __repr__(self) -> str:
        return f"clpy.{self.space.title}[{self.elem!r}]"


@dataclass(frozen=True, eq=False, repr=False)
class ArrayType(Type):
    """A fixed-size array in local or private memory; ``shape`` is a tuple of constants."""

    elem: Type
    shape: tuple[int, ...]
    space: AddressSpace

    @property
    def cl_name(self) -> str:
        return self.elem.cl_name + "".join(f"[{n}]" for n in self.shape)

    @property
    def count(self) -> int:
        total = 1
        for n in self.shape:
            total *= n
        return total

    @property
    def size(self) -> int:
        return self.elem.size * self.count

    @property
    def align(self) -> int:
        return self.elem.align


@dataclass(frozen=True, eq=False, repr=False)
class OpaqueType(Type):
    """Types with no arithmetic: samplers, events, clk_event_t, queue_t, reserve_id_t ..."""

    name: str

    @property
    def cl_name(self) -> str:
        return self.name

    @property
    def size(self) -> int:
        return 8


def element_of(t: Type) -> ScalarType:
    """The scalar of a scalar or vector type."""
    if isinstance(t, VectorType):
        return t.elem
    if isinstance(t, ScalarType):
        return t
    raise TypeError(f"{t} is neither a scalar nor a vector")


def lanes(t: Type) -> int:
    return t.n if isinstance(t, VectorType) else 1


def with_element(t: Type, elem: ScalarType) -> Type:
    """The type with the same shape as ``t`` (scalar or n-vector) and element ``elem``."""
    return VectorType(elem, t.n) if isinstance(t, VectorType) else elem
