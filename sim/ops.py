"""OpenCL C semantics of operators and conversions on lane arrays.

Values: a scalar is a NumPy scalar (uniform over the lanes) or a 2-D array broadcastable to
the frame's ``(groups, items)`` shape; a vector has a leading component axis ``(n, g, w)``.
Integer arithmetic wraps (NumPy's fixed-width arithmetic), shift counts are masked to the bit
width (spec §1.3, "Operators"), ``/`` and ``%`` truncate like C, ``floordiv``/``floormod`` floor
like Python, and float arithmetic runs in the operands' own precision (half as float16).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from clpy.types.core import OpaqueType, PointerType, ScalarType, Type, VectorType, element_of

Value = Any


_DTYPES: dict[ScalarType, np.dtype[Any]] = {}
_INT64 = np.dtype(np.int64)


def dtype_of(t: Type) -> np.dtype[Any]:
    """NumPy dtype of the elements of a scalar or vector type (cached: it is hot). An opaque
    value the simulator holds as a number (``event_t``: an event id) is an int64."""
    if isinstance(t, OpaqueType):
        return _INT64
    e = element_of(t)
    d = _DTYPES.get(e)
    if d is None:
        d = _DTYPES[e] = e.dtype
    return d


def const_value(value: Any, t: Type) -> Value:
    """An IR constant as a lane value (uniform): NumPy scalar or ``(n, 1, 1)`` vector."""
    if isinstance(t, VectorType):
        vals = value if isinstance(value, (tuple, list)) else (value,) * t.n
        return _to_dtype(
            np.asarray(vals, dtype=np.float64 if t.elem.is_float else object), t.elem
        ).reshape(t.n, 1, 1)
    if isinstance(t, ScalarType):
        if t.is_bool:
            return np.bool_(bool(value))
        if t.is_float:
            return t.dtype.type(value)
        return _to_dtype(np.asarray(int(value), dtype=object), t)[()]
    raise TypeError(f"cannot make a constant of type {t}")


def _to_dtype(a: np.ndarray, t: ScalarType) -> np.ndarray:
    if t.is_float:
        return a.astype(t.dtype)
    bits = t.bits
    out = np.array([int(x) & ((1 << bits) - 1) for x in a.ravel()], dtype=np.uint64)
    return out.astype(np.dtype(f"uint{bits}")).view(t.dtype).reshape(a.shape)


def zeros(t: Type) -> Value:
    """The uniform zero value of a scalar/vector type (uninitialised variables)."""
    if isinstance(t, VectorType):
        return np.zeros((t.n, 1, 1), dtype=t.elem.dtype)
    if isinstance(t, ScalarType):
        return t.dtype.type(0)
    if isinstance(t, OpaqueType):
        return np.int64(0)  # event_t: no event
    raise TypeError(f"no zero value for {t}")


# ----------------------------------------------------------------------------- arithmetic


def int_binary(op: str, a: Value, b: Value, t: ScalarType) -> Value:
    """``op`` on integers of (element) type ``t``; ``b`` has no zero where it divides."""
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "&":
        return a & b
    if op == "|":
        return a | b
    if op == "^":
        return a ^ b
    if op == "<<":
        return np.left_shift(a, b & (t.bits - 1))
    if op == ">>":
        return np.right_shift(a, b & (t.bits - 1))
    if op == "floordiv":
        return a // b
    if op in ("%", "floormod"):
        if (
            not t.is_signed
            and isinstance(b, np.integer)
            and b
            and getattr(a, "dtype", None) == b.dtype
        ):
            # an unsigned remainder by one divisor (b > 0: the caller checked): NumPy's
            # integer remainder is ~13x slower than its division by a scalar or a mask
            if not b & (b - 1):
                return a & (b - 1)
            return a - (a // b) * b
        return a % b if op == "floormod" else np.fmod(a, b)
    if op == "/":
        if not t.is_signed:
            return a // b
        return (a - np.fmod(a, b)) // b
    raise ValueError(f"unknown integer operator {op}")


def float_binary(op: str, a: Value, b: Value) -> Value:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        return a / b
    if op == "floordiv":  # the emitted helper: floor(a / b)
        return np.floor(a / b)
    if op == "floormod":  # r = fmod(a, b); r != 0 && (r < 0) != (b < 0) ? r + b : r
        r = np.fmod(a, b)
        return np.where((r != 0) & ((r < 0) != (b < 0)), r + b, r)
    if op == "%":
        return np.fmod(a, b)
    raise ValueError(f"operator {op} does not apply to floating values")


def binary(op: str, t: Type, a: Value, b: Value) -> Value:
    e = element_of(t)
    if e.is_float:
        r = float_binary(op, a, b)
    else:
        r = int_binary(op, a, b, e)
    return fix_dtype(r, e)


def fix_dtype(r: Value, e: ScalarType) -> Value:
    dt = dtype_of(e)
    if getattr(r, "dtype", None) != dt:
        r = np.asarray(r).astype(dt)
        if r.ndim == 0:
            r = r[()]
    return r


_CMP = {
    "==": np.equal,
    "!=": np.not_equal,
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
}


def compare(op: str, result: Type, a: Value, b: Value) -> Value:
    """Scalars give ``bool``; vectors give -1/0 of the signed type of the same width."""
    r = _CMP[op](a, b)
    if isinstance(result, VectorType):
        return relational_vector(r, result)
    return r


def relational_vector(r: Value, result: Type) -> Value:
    """A boolean component array as OpenCL's vector truth value (-1 true, 0 false)."""
    return -np.asarray(r).astype(dtype_of(result))


def truth(v: Value) -> Value:
    """A scalar condition (number, bool or pointer offset) as a bool lane value."""
    if isinstance(v, (np.bool_, bool)):
        return v
    if getattr(v, "dtype", None) == np.bool_:
        return v
    return v != 0


def unary(op: str, t: Type, v: Value) -> Value:
    if op == "+":
        return v
    if op == "-":
        return fix_dtype(np.negative(v), element_of(t))
    if op == "~":
        return np.invert(v)
    if op == "not":
        if isinstance(t, VectorType):
            return relational_vector(v == 0, t)
        return np.logical_not(truth(v))
    raise ValueError(f"unknown unary operator {op}")


# ----------------------------------------------------------------------------- conversions


def convert(v: Value, src: Type, dst: Type) -> Value:
    """C conversion of a scalar, broadcast of a scalar to a vector, or vector ``convert_T``
    with the default rounding (float → int rounds toward zero, int → float to nearest)."""
    if isinstance(dst, PointerType):
        return v
    de = element_of(dst)
    se = element_of(src) if isinstance(src, (ScalarType, VectorType)) else None
    if de.is_bool:
        out = truth(v)
    elif se is not None and se.is_float and not de.is_float:
        out = float_to_int(v, de)
    elif isinstance(v, np.ndarray):
        dt = dtype_of(de)
        # a scalar made a vector of its own element type: the broadcast below is read-only
        # and needs no copy of the lanes
        same = v.dtype == dt and isinstance(dst, VectorType) and not isinstance(src, VectorType)
        out = v if same else v.astype(dt)
    else:
        return _scalar_convert(v, de, dst)
    if isinstance(dst, VectorType) and not isinstance(src, VectorType):
        o = np.asarray(out)
        shape = o.shape if o.ndim == 2 else (1, 1)
        return np.broadcast_to(o.reshape(shape), (dst.n, *shape))
    if isinstance(out, np.ndarray) and out.ndim == 0:
        return out[()]
    return out


def _scalar_convert(v: Value, de: ScalarType, dst: Type) -> Value:
    out = np.asarray(v).astype(dtype_of(de))[()]
    if isinstance(dst, VectorType):
        return np.full((dst.n, 1, 1), out)
    return out


def float_to_int(v: Value, de: ScalarType) -> Value:
    """Truncate toward zero; NaN → 0 and saturation for out-of-range values (what devices
    commonly do; the spec leaves the unsaturated result undefined, §1.2.3.3)."""
    a = np.asarray(v)
    info = np.iinfo(de.dtype)
    t = np.trunc(a.astype(np.float64) if a.dtype != np.float64 else a)
    t = np.where(np.isnan(t), 0.0, t)
    hi = float(info.max)
    out = np.where(t >= hi, 0, t)
    r = np.clip(out, float(info.min), hi).astype(de.dtype)
    r = np.where(t >= hi, de.dtype.type(info.max), r)
    return r[()] if r.ndim == 0 else r


def ufunc_inplace(ufunc: np.ufunc, old: np.ndarray, y: Value) -> None:
    """``ufunc(old, y, out=old)``, fast for column slices of wider rows.

    NumPy runs an element-wise ufunc over a 2-D strided view (the ``(G, K)`` lanes of a
    ``Cols`` sub-frame: a view of a ``(G, W)`` array) row by row, several times slower than
    over one contiguous run. When ``old`` and ``y`` are such views with the same strides and
    the gaps between the rows are narrow, the ufunc runs over the contiguous span from
    ``old``'s first element to its last instead, and the gap elements (other lanes of the
    parent array) are saved before and restored after, bit for bit. The launch runs with
    floating-point warnings off, so the discarded gap results cannot warn; the integer ufuncs
    used here wrap without error.
    """
    if (
        type(y) is np.ndarray
        and old.ndim == 2
        and y.shape == old.shape
        and y.dtype == old.dtype
        and y.strides == old.strides
    ):
        g, k = old.shape
        isz = old.itemsize
        s0, s1 = old.strides
        if (
            g * k >= _FLAT_MIN
            and s1 == isz
            and s0 > k * isz
            and s0 % isz == 0
            and 2 * (s0 - k * isz) <= k * isz
            and not np.may_share_memory(old, y)
        ):
            rs = s0 // isz
            span = (g - 1) * rs + k
            flat_o = _flat_span(old, span)
            flat_y = _flat_span(y, span) if flat_o is not None else None
            if flat_y is not None:
                assert flat_o is not None
                gaps = flat_o[k : k + (g - 1) * rs].reshape(g - 1, rs)[:, : rs - k]
                saved = gaps.copy()
                ufunc(flat_o, flat_y, out=flat_o)
                gaps[...] = saved
                return
    ufunc(old, y, out=old)


# below this many lanes the row-by-row ufunc is cheaper than the span's bookkeeping
_FLAT_MIN = 1 << 14


def _flat_span(a: np.ndarray, span: int) -> np.ndarray | None:
    """The ``span`` consecutive elements from ``a``'s first one, as a view of the C-contiguous
    array ``a`` is a view of (None when it is not one)."""
    b = a.base
    if type(b) is not np.ndarray or b.dtype != a.dtype or not b.flags.c_contiguous:
        return None
    off, rem = divmod(a.ctypes.data - b.ctypes.data, a.itemsize)
    if rem or off < 0 or off + span > b.size:
        return None
    flat: np.ndarray = b.reshape(-1)[off : off + span]
    return flat
