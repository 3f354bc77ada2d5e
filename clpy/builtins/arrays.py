"""``clpy.local_array`` and ``clpy.private_array``: fixed-size arrays declared in kernels."""

from __future__ import annotations

from typing import Any


class _ArrayDecl:
    """``tile = clpy.local_array(float32, (16, 16))``: only valid as an assignment's value;
    the element type and the shape are compile-time constants."""

    def __init__(self, kind: str) -> None:
        self.__clpy_array__ = kind
        self.__name__ = f"{kind}_array"
        self.__doc__ = (
            f"Declare a __{kind} array: ``{kind}_array(dtype, shape)``; shape is an "
            "int or a tuple of ints known at compile time."
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"clpy.{self.__name__} can only be used inside kernels")

    def __repr__(self) -> str:
        return f"clpy.{self.__name__}"


class _AddressOf:
    """``clpy.addr(a[i])``: a pointer to one element of an array or pointer (C's
    ``&a[i]``, the same as ``a + i``), in its address space. Built by the frontend
    (clpy/frontend/pointers.py)."""

    __clpy_addr__ = True
    __name__ = "addr"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("clpy.addr can only be used inside kernels and device functions")

    def __repr__(self) -> str:
        return "clpy.addr"


addr = _AddressOf()
local_array = _ArrayDecl("local")
private_array = _ArrayDecl("private")
