"""``@clpy.struct``: user structs with OpenCL C layout and a matching NumPy dtype (spec §1.1.5)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from clpy.types.annotations import resolve_annotation
from clpy.types.core import ArrayType, ScalarType, Type, VectorType


@dataclass(frozen=True, eq=False, repr=False)
class StructType(Type):
    """A ``typedef struct``; fields are laid out with OpenCL's natural alignment."""

    name: str
    fields: tuple[tuple[str, Type], ...]

    @property
    def cl_name(self) -> str:
        return self.name

    def field(self, name: str) -> Type | None:
        for fname, ftype in self.fields:
            if fname == name:
                return ftype
        return None

    @property
    def offsets(self) -> tuple[int, ...]:
        out = []
        offset = 0
        for _, t in self.fields:
            offset = _round_up(offset, t.align)
            out.append(offset)
            offset += t.size
        return tuple(out)

    @property
    def align(self) -> int:
        return max((t.align for _, t in self.fields), default=1)

    @property
    def size(self) -> int:
        if not self.fields:
            return 0
        last = self.offsets[-1] + self.fields[-1][1].size
        return _round_up(last, self.align)

    @property
    def dtype(self) -> np.dtype[Any]:
        """NumPy structured dtype with the same offsets, size and alignment as OpenCL's."""
        return np.dtype(
            {
                "names": [n for n, _ in self.fields],
                "formats": [host_dtype(t) for _, t in self.fields],
                "offsets": list(self.offsets),
                "itemsize": self.size,
            }
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Outside kernels, build a NumPy structured scalar: ``ValIdx(1.0, 3)``."""
        names = [n for n, _ in self.fields]
        if len(args) > len(names):
            raise TypeError(f"{self.name}() takes {len(names)} fields, got {len(args)}")
        values = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names:
                raise TypeError(f"{self.name}() has no field {k!r}")
            values[k] = v
        missing = [n for n in names if n not in values]
        if missing:
            raise TypeError(f"{self.name}() is missing field(s) {', '.join(missing)}")
        out = np.zeros((), dtype=self.dtype)
        for n in names:
            out[n] = values[n]
        return out[()]

    def __repr__(self) -> str:
        return f"<clpy struct {self.name}>"


def _round_up(x: int, a: int) -> int:
    return (x + a - 1) // a * a


def host_dtype(t: Type) -> Any:
    """The NumPy dtype that holds one value of ``t`` in host memory."""
    if isinstance(t, (ScalarType, VectorType, StructType)):
        return t.dtype
    if isinstance(t, ArrayType):
        return np.dtype((host_dtype(t.elem), t.shape))
    raise TypeError(f"{t} cannot be stored in a struct field")


def struct(cls: type) -> StructType:
    """Declare an OpenCL struct from an annotated class.

    >>> @clpy.struct
    ... class ValIdx:
    ...     val: clpy.float32
    ...     idx: clpy.int32
    >>> ValIdx.dtype.itemsize
    8
    """
    ann = cls.__dict__.get("__annotations__", {})
    if not ann:
        raise TypeError(f"@clpy.struct class {cls.__name__} declares no annotated fields")
    module = sys.modules.get(cls.__module__)
    namespace = dict(vars(module)) if module is not None else {}
    fields = []
    for fname, fann in ann.items():
        if isinstance(fann, str):
            try:
                fann = eval(fann, namespace, dict(vars(cls)))  # noqa: S307 - user annotation
            except Exception as e:
                raise TypeError(
                    f"struct {cls.__name__}.{fname}: cannot evaluate annotation {fann!r}: {e}"
                ) from None
        try:
            t = resolve_annotation(fann)
        except TypeError as e:
            raise TypeError(f"struct {cls.__name__}.{fname}: {e}") from None
        if not isinstance(t, (ScalarType, VectorType, StructType, ArrayType)):
            raise TypeError(f"struct {cls.__name__}.{fname}: {t} cannot be a struct field")
        fields.append((fname, t))
    st = StructType(cls.__name__, tuple(fields))
    return st
