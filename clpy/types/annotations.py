"""Annotation objects users write on kernel parameters, and their resolution to clpy types.

``Global[float32]`` is a pointer to global memory (spec §1.5); ``clpy.constexpr`` marks a
compile-time parameter baked into the source.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from clpy.types import catalog as C
from clpy.types.core import AddressSpace, PointerType, ScalarType, Type


class _SpaceAnnotation:
    """``Global[T]``, ``Local[T]`` ...: subscripting builds a pointer type."""

    def __init__(self, space: AddressSpace) -> None:
        self.space = space

    def __getitem__(self, elem: Any) -> PointerType:
        t = resolve_annotation(elem)
        if isinstance(t, ScalarType) and t is C.void:
            raise TypeError(f"{self.space.title}[void] is not allowed: give an element type")
        return PointerType(t, self.space)

    def __repr__(self) -> str:
        return f"clpy.{self.space.title}"


Global = _SpaceAnnotation(AddressSpace.GLOBAL)
Local = _SpaceAnnotation(AddressSpace.LOCAL)
Constant = _SpaceAnnotation(AddressSpace.CONSTANT)
Private = _SpaceAnnotation(AddressSpace.PRIVATE)
Ptr = _SpaceAnnotation(AddressSpace.GENERIC)


class _Constexpr:
    """Marks a parameter whose value is baked into the source (compiled once per value)."""

    def __repr__(self) -> str:
        return "clpy.constexpr"


constexpr = _Constexpr()


def const_key(v: Any) -> Any:
    """A hashable key of a constexpr value: ``1``, ``1.0``, ``True`` and ``np.int32(1)``
    specialize separately (they emit different C)."""
    return (type(v).__name__, v.item() if isinstance(v, np.generic) else v)


_PY_BUILTINS: dict[Any, ScalarType] = {int: C.int_, float: C.float_, bool: C.bool_}


def resolve_annotation(ann: Any) -> Type:
    """Turn an annotation object into a clpy type, or raise ``TypeError`` saying why not."""
    if isinstance(ann, Type):
        return ann
    try:
        if ann in _PY_BUILTINS:
            return _PY_BUILTINS[ann]
    except TypeError:  # unhashable: certainly not a type
        raise TypeError(f"{ann!r} is not a clpy type annotation") from None
    if ann is None:
        return C.void
    if isinstance(ann, str):
        if ann in C.SCALARS_BY_NAME:
            return C.SCALARS_BY_NAME[ann]
        if ann in C.VECTORS_BY_NAME:
            return C.VECTORS_BY_NAME[ann]
        if ann in C.ALIASES:
            return C.ALIASES[ann]
    try:
        dt = np.dtype(ann)
    except TypeError:
        dt = None
    if dt is not None and not isinstance(ann, str):
        st = C.scalar_for_dtype(dt)
        if st is not None:
            return st
    raise TypeError(f"{ann!r} is not a clpy type annotation")
