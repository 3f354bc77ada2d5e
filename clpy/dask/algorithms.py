# mypy: disable-error-code="valid-type"
"""``clpy.dask.reduce`` and ``clpy.dask.scan``: ``clpy.algorithms`` on each chunk, on the
worker's device, and the per-chunk results combined with the same operator through
``da.reduction`` (a tree of partial results) and ``dask.array.reductions.cumreduction`` (each
chunk's scan, then the carry of the chunks before it combined into every element).

The operator is any of ``"+" "-" "*" "&" "|" "^" "&&" "||" "min" "max"`` or a
``@clpy.reduction``; as for ``clpy.algorithms``, it must be associative (and commutative for
reductions), and floating-point results are rounded in a chunking-dependent order.
"""

# No `from __future__ import annotations`: the carry kernel's annotations name closure
# variables (Global[t]), which Python captures only when annotations are evaluated eagerly.

import functools
from typing import Any, no_type_check

import numpy as np

import clpy
import clpy.algorithms as alg
from clpy import Global, int64
from clpy.algorithms._core import Op, element_type, resolve_op
from clpy.dask.devices import selector_of, worker_device
from clpy.types.core import Type


def _check_op(dtype: np.dtype, op: Any, where: str) -> tuple[Type, Op]:
    """The element type and operator, checked on the client before any task runs."""
    t = element_type(np.dtype(dtype), (1,), op, where)
    return t, resolve_op(op, t, "op")


class _ReducePart:
    """``chunk``/``combine``/``aggregate`` of ``da.reduction``: the combination of all
    elements of a block (of partial results), kept in the block's rank when asked."""

    __name__ = "clpy-reduce"

    def __init__(self, op: Any, device: str | None) -> None:
        self.op = op
        self.device = device

    def __call__(self, block: Any, axis: Any = None, keepdims: bool = False, **_: Any) -> Any:
        flat = np.ascontiguousarray(block).reshape(-1)
        v = alg.reduce(flat, self.op, device=worker_device(self.device))
        out = np.empty((1,) * block.ndim if keepdims else (), block.dtype)
        out[...] = v
        return out


def reduce(x: Any, op: Any = "+", *, device: Any = None, split_every: Any = None) -> Any:
    """All elements of the Dask array ``x`` combined with ``op``: a 0-d Dask array
    (``.compute()`` gives a NumPy scalar, a record for struct reductions).

    >>> clpy.dask.reduce(da.arange(10, chunks=3, dtype=np.int32), "max").compute()
    np.int32(9)
    """
    import dask.array as da  # optional dependency: pip install clpy-kernels[dask]

    x = da.asarray(x)
    _check_op(x.dtype, op, "x")
    part = _ReducePart(op, selector_of(device))
    return da.reduction(
        x,
        part,
        part,
        combine=part,
        axis=None,
        keepdims=False,
        dtype=x.dtype,
        split_every=split_every,
        concatenate=True,
        name="clpy-reduce",
        meta=np.empty((), x.dtype),
    )


class _ScanBlock:
    """``func`` of ``cumreduction``: the inclusive scan of one block."""

    __name__ = "clpy-scan"

    def __init__(self, op: Any, device: str | None) -> None:
        self.op = op
        self.device = device

    def __call__(self, block: Any, axis: int = 0, dtype: Any = None) -> Any:
        return alg.scan(np.ascontiguousarray(block), self.op, device=worker_device(self.device))


class _Carry:
    """``binop`` of ``cumreduction``: ``carry op b[i]`` for every element, on the device."""

    __name__ = "clpy-scan-carry"

    def __init__(self, op: Any, device: str | None) -> None:
        self.op = op
        self.device = device

    def __call__(self, a: Any, b: Any) -> Any:
        b = np.ascontiguousarray(b)
        a = np.ascontiguousarray(np.broadcast_to(a, b.shape))
        t = element_type(b.dtype, (1,), self.op)
        out = np.empty_like(b)
        if b.size:
            k = _carry_kernel(t, resolve_op(self.op, t))
            k[(b.size,), None](a, b, out, b.size, device=worker_device(self.device))
        return out


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def _carry_kernel(t: Type, op: Op) -> Any:
    combine = op.combine

    @clpy.kernel
    def scan_carry(a: Global[t], b: Global[t], out: Global[t], n: int64):
        i = clpy.get_global_id(0)
        if i < n:
            out[i] = combine(a[i], b[i])

    return scan_carry


def scan(x: Any, op: Any = "+", inclusive: bool = True, *, device: Any = None) -> Any:
    """The running combination of the 1-d Dask array ``x`` with ``op``:
    ``y[i] = x[0] op ... op x[i]`` (inclusive) or ``x[0] op ... op x[i - 1]`` from the
    identity (exclusive); a Dask array chunked like ``x``.

    >>> clpy.dask.scan(da.ones(6, chunks=2, dtype=np.int32)).compute()
    array([1, 2, 3, 4, 5, 6], dtype=int32)
    """
    import dask.array as da  # optional dependency
    from dask.array.reductions import cumreduction

    x = da.asarray(x)
    if x.ndim != 1:
        raise ValueError(f"clpy.dask.scan: x must be 1-d, got shape {x.shape}")
    t, o = _check_op(x.dtype, op, "x")
    ident = o.host_identity(t)
    if not inclusive and x.shape[0]:
        head = da.from_array(np.full((1,), ident, x.dtype), chunks=1)
        x = da.concatenate([head, x[:-1]]).rechunk(x.chunks)
    sel = selector_of(device)
    return cumreduction(_ScanBlock(op, sel), _Carry(op, sel), ident, x, axis=0, dtype=x.dtype)
