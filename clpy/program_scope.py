"""Program-scope data: lookup tables in ``__constant`` memory and ``__global`` variables
(spec §1.5 "address space qualifiers", §6.5 of OpenCL C 2.0).

Three ways to put data at program scope, all read in kernels by indexing, like arrays::

    COEFFS = np.array([0.25, 0.5, 0.25], np.float32)   # a module-level NumPy array
    TAPS = (1, 4, 6, 4, 1)                              # a module-level tuple of numbers
    GAMMA = clpy.constant_array(table, clpy.float32)    # explicit, frozen at this call
    HITS = clpy.global_var(clpy.int32, 0)               # __global int HITS[1] = {0};

    @clpy.kernel
    def fir(x: Global[float32], y: Global[float32]):
        i = clpy.get_global_id(0)
        y[i] = COEFFS[0] * x[i] + COEFFS[1] * x[i + 1] + COEFFS[2] * x[i + 2]
        clpy.atomic_inc(HITS + 0)

The first three become ``__constant`` arrays of the program (one declaration per program
however many functions read them, named after the Python variable); their size is checked
against the device's ``CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE`` with an error naming the variable.
A tuple of ints becomes ``int`` (``long`` beyond its range), a tuple with a float ``float``;
use a NumPy array to pick another element type.

**When values are captured.** A module-level array or tuple is read when the kernel is
compiled for a signature and again before every launch: a launch after the array was changed
in place, or after the name was rebound to another array of the same dtype and shape,
re-specializes the kernel (a new program with the new values; one comparison of the table's
bytes per launch, tables are small), also for an array of another dtype or shape. A
``@clpy.func`` keeps its compiled code per argument types, so a table it reads may change its
values but not its dtype or shape: that is an error naming the variable (make a new function).
``clpy.constant_array`` copies its values once: later changes to the source array are not seen.

**Global variables** (``clpy.global_var(T, init)``, OpenCL C 2.0 targets and the simulator;
a ``FeatureError`` naming the variable on 1.2 targets): ``__global`` arrays, readable and
writable by every work-item, initialised once per program and persistent across launches of
that program (spec §6.5: they have the lifetime of the program). In clpy a program is one
kernel specialization on one device: two kernels, or one kernel re-specialized, have their own
copies. Each work-item's accesses follow the usual rules (use atomics or barriers). A failed
simulator launch does not roll back what it wrote to a global variable.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from clpy.types import catalog as C
from clpy.types.annotations import resolve_annotation
from clpy.types.core import AddressSpace, ScalarType, Type, VectorType


class ProgramData:
    """Values for a program-scope array: element type, shape, address space, the values
    (``values()``: shape ``shape`` for scalars, ``shape + (lanes,)`` for vectors) and
    ``fingerprint()``/``same()`` to see whether a captured value changed."""

    elem: Type
    shape: tuple[int, ...]
    space: AddressSpace = AddressSpace.CONSTANT
    label: str = ""
    name: str = ""  # the Python name (the C name is derived from it)

    @property
    def key(self) -> Any:
        return self

    def values(self) -> np.ndarray:
        raise NotImplementedError

    def fingerprint(self) -> Any:
        return None  # immutable

    def same(self, seen: Any) -> bool:
        return True

    @property
    def nbytes(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n * self.elem.size


def _table(value: Any, what: str, elem: Type | None = None) -> tuple[np.ndarray, Type]:
    """``value`` as a contiguous array of the element type (inferred when ``elem`` is None)."""
    if isinstance(value, tuple):
        flat = np.ravel(np.asarray(value, dtype=object)) if value else np.zeros(0)
        if not len(flat) or not all(
            isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)
            for x in flat
        ):
            raise TypeError(f"{what}: a program-scope tuple holds numbers (ints or floats)")
        if elem is None:
            if any(isinstance(x, (float, np.floating)) for x in flat):
                elem = C.float_
            elif all(-(2**31) <= int(x) < 2**31 for x in flat):
                elem = C.int_
            else:
                elem = C.long
        arr = np.asarray(value, dtype=_dtype(elem))
    else:
        arr = np.asarray(value)
        if elem is None:
            st = C.scalar_for_dtype(arr.dtype)
            if st is None or st is C.bool_:
                raise TypeError(
                    f"{what}: arrays of dtype {arr.dtype} cannot be program-scope tables; "
                    "use a numeric dtype (bool: uint8)"
                )
            elem = st
        arr = arr.astype(_dtype(elem), copy=False)
    if isinstance(elem, VectorType):
        lanes = 4 if elem.n == 3 else elem.n
        if arr.ndim == 0 or arr.shape[-1] != elem.n:
            raise TypeError(f"{what}: {elem} values need a last axis of {elem.n}")
        if elem.n == 3:
            arr = np.concatenate([arr, np.zeros(arr.shape[:-1] + (1,), arr.dtype)], -1)
        assert arr.shape[-1] == lanes
    if arr.ndim == 0 or arr.size == 0:
        raise TypeError(f"{what}: a program-scope array needs at least one element")
    return np.ascontiguousarray(arr), elem


def _dtype(elem: Type) -> np.dtype[Any]:
    e = elem.elem if isinstance(elem, VectorType) else elem
    if not isinstance(e, ScalarType) or e is C.bool_ or e.kind.value == "void":
        raise TypeError(f"{elem} cannot be the element type of a program-scope array")
    return e.dtype


def _shape(arr: np.ndarray, elem: Type) -> tuple[int, ...]:
    return tuple(arr.shape[:-1]) if isinstance(elem, VectorType) else tuple(arr.shape)


class ModuleData(ProgramData):
    """A module-level (or closure) NumPy array or tuple read by kernel code: looked up by name
    in its namespace, so in-place changes and rebinding are seen (see the module docstring)."""

    def __init__(self, namespace: dict[str, Any], name: str, label: str) -> None:
        self.namespace = namespace
        self.name = name
        self.label = label
        arr, elem = _table(namespace[name], label)
        self.elem = elem
        self.shape = _shape(arr, elem)
        self.dtype = arr.dtype

    @property
    def key(self) -> Any:
        return ("module", id(self.namespace), self.name)

    def current(self) -> Any:
        try:
            return self.namespace[self.name]
        except KeyError:
            raise NameError(f"{self.label} was deleted after kernels read it") from None

    def values(self) -> np.ndarray:
        obj = self.current()
        arr, elem = _table(obj, self.label, self.elem)
        if _shape(arr, elem) != self.shape or (
            not isinstance(obj, tuple) and np.asarray(obj).dtype != self.dtype
        ):
            got = f"{np.asarray(obj).dtype} {_shape(arr, elem)}"
            raise TypeError(
                f"{self.label} is now {got}, not {self.dtype} {self.shape} as when a kernel "
                "was compiled with it (by a @clpy.func, which keeps its code): make a new kernel "
                "and function for a table of another type or shape"
            )
        return arr

    def fingerprint(self) -> Any:
        obj = self.current()
        if isinstance(obj, tuple):
            return (obj, obj)
        a = np.asarray(obj)
        return (obj, (a.dtype.str, a.shape, a.tobytes()))

    def same(self, seen: Any) -> bool:
        """Whether the value is still what ``fingerprint()`` saw (one comparison of bytes)."""
        obj = self.current()
        if isinstance(obj, tuple):
            return obj is seen[0]
        if isinstance(seen[1], tuple) and not isinstance(seen[1][0], str):
            return False  # was a tuple
        a = np.asarray(obj)
        return bool((a.dtype.str, a.shape, a.tobytes()) == seen[1])

    def __repr__(self) -> str:
        return f"<program-scope table {self.label}>"


class ConstantArray(ProgramData):
    """``clpy.constant_array(values, dtype=None)``: a ``__constant`` table frozen at the call."""

    def __init__(self, values: Any, dtype: Any = None) -> None:
        elem = None
        if dtype is not None:
            from_dtype = C.scalar_for_dtype(dtype) if not isinstance(dtype, Type) else None
            elem = dtype if isinstance(dtype, Type) else from_dtype
            if elem is None:
                raise TypeError(f"clpy.constant_array: unsupported dtype {dtype!r}")
        arr, elem = _table(
            tuple(values) if isinstance(values, list) else values, "clpy.constant_array", elem
        )
        arr = arr.copy()
        arr.setflags(write=False)
        self.data = arr
        self.elem = elem
        self.shape = _shape(arr, elem)
        self.label = "clpy.constant_array"

    def values(self) -> np.ndarray:
        return self.data

    def __repr__(self) -> str:
        return f"clpy.constant_array({self.elem} {self.shape})"


class GlobalVar(ProgramData):
    """``clpy.global_var(T, init=0, shape=None)``: a program-scope ``__global`` array."""

    space = AddressSpace.GLOBAL

    def __init__(self, t: Any, init: Any = 0, shape: Any = None) -> None:
        elem = resolve_annotation(t)
        if not isinstance(elem, (ScalarType, VectorType)):
            raise TypeError(f"clpy.global_var: T must be a scalar or vector type, not {elem}")
        base = np.asarray(init, dtype=_dtype(elem))
        lanes = (elem.n,) if isinstance(elem, VectorType) else ()
        if shape is None:
            shape = base.shape[: base.ndim - len(lanes)] if base.ndim > len(lanes) else (1,)
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        try:
            full = np.broadcast_to(base, tuple(shape) + lanes)
        except ValueError:
            raise TypeError(
                f"clpy.global_var: init of shape {base.shape} does not fit shape {shape}"
            ) from None
        arr, elem = _table(np.array(full), "clpy.global_var", elem)
        arr.setflags(write=False)
        self.init = arr
        self.elem = elem
        self.shape = _shape(arr, elem)
        self.label = "clpy.global_var"

    def values(self) -> np.ndarray:
        return self.init

    def __repr__(self) -> str:
        return f"clpy.global_var({self.elem}, shape={self.shape})"


def constant_array(values: Any, dtype: Any = None) -> ConstantArray:
    """A program-scope ``__constant`` table (spec §6.5), read in kernels by indexing. The
    values are copied now; ``dtype`` is a NumPy dtype or a clpy scalar/vector type (default:
    the array's dtype; a list or tuple of numbers gives int or float)."""
    return ConstantArray(values, dtype)


def global_var(t: Any, init: Any = 0, shape: Any = None) -> GlobalVar:
    """A program-scope ``__global`` array of ``T`` (OpenCL C 2.0, spec §6.5): ``init`` is a
    number (one element, or every element of ``shape``) or an array of initial values. Read
    and written in kernels by indexing (``HITS[0] += 1``, ``clpy.atomic_inc(HITS + 0)``); its
    values persist across launches of one program."""
    return GlobalVar(t, init, shape)


def module_data(namespace: dict[str, Any], name: str, where: str) -> ProgramData | None:
    """The program-scope source for a global/closure value read in kernel code, or None if
    it is not program data (a NumPy array, a tuple of numbers, or a clpy object above)."""
    v = namespace.get(name)
    if isinstance(v, ProgramData):
        if not v.name:
            v.name = name
            v.label = f"{v.label} {name!r}"
        return v
    if isinstance(v, np.ndarray) and v.dtype.fields is None and v.ndim:
        return ModuleData(namespace, name, f"array {name!r}{where}")
    if isinstance(v, tuple) and v and _numeric_tuple(v):
        return ModuleData(namespace, name, f"tuple {name!r}{where}")
    return None


def _numeric_tuple(v: tuple[Any, ...]) -> bool:
    for x in v:
        if isinstance(x, tuple):
            if not _numeric_tuple(x):
                return False
        elif isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
            return False
    return True


__all__ = [
    "ProgramData",
    "ModuleData",
    "ConstantArray",
    "GlobalVar",
    "constant_array",
    "global_var",
    "module_data",
]
