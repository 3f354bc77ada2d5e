# mypy: disable-error-code="valid-type"
"""``histogram(x, bins, range)``: the counts of ``np.histogram(x, bins, range)[0]``.

Bin edges are NumPy's own (``np.histogram_bin_edges``: ``bins + 1`` evenly spaced edges in
the type NumPy uses), and a value's bin is found as NumPy finds it: a first guess from
``(v - lo) * bins / (hi - lo)``, then corrected by comparing with the two edges around it, so
values on an edge land in the same bin as NumPy's; the last bin includes ``hi``; values
outside ``[lo, hi]`` and NaNs are not counted. Integer inputs with ``range=(lo, hi)`` and
``bins == hi - lo`` count exact values (``x - lo``; ``hi`` itself goes to the last bin, as in
NumPy), without floating point.

Kernel: ``groups`` work-groups walk the input grid-stride and count into a histogram in local
memory with local atomics (``bins <= 4096``), then add it to the global counts with one atomic
add per bin; larger histograms count straight into global memory.
"""

# No `from __future__ import annotations`: kernel annotations such as Global[t] name closure
# variables, which Python captures only when the annotations are evaluated eagerly.

import builtins
import functools
from typing import Any, no_type_check

import numpy as np

import clpy
from clpy import Global, int32, int64, uint
from clpy.algorithms._core import as_input, element_type, resolve_op, tuning
from clpy.algorithms.reductions import index_type, read_result, reduce_on
from clpy.types import catalog as C
from clpy.types.core import ScalarType

LOCAL_BINS = 4096


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def _hist_kernel(t: ScalarType, e: ScalarType | None, idx: ScalarType, bins: int, wg: int) -> Any:
    """``e``: the edges' float type (None: exact integer bins)."""
    I, BINS, WG = idx, bins, wg  # noqa: N806
    E = e if e is not None else C.double  # noqa: N806

    @clpy.func
    def bin_exact(v: t, lo: int64, edges: Global[E]) -> int32:
        d = int64(v) - lo
        if d == BINS:
            d = BINS - 1
        return int32(d) if 0 <= d < BINS else -1

    @clpy.func
    def bin_edges(v: t, lo: int64, edges: Global[E]) -> int32:
        w = E(v)
        first = edges[0]
        last = edges[BINS]
        if not (w >= first and w <= last):
            return -1
        k = int32((w - first) / (last - first) * BINS)
        k = min(max(k, 0), BINS - 1)
        if w < edges[k]:
            k -= 1
        elif k != BINS - 1 and w >= edges[k + 1]:
            k += 1
        return k

    bin_of = bin_exact if e is None else bin_edges

    @clpy.kernel
    def histogram_local(x: Global[t], counts: Global[uint], n: I, lo: int64, edges: Global[E]):
        lid = clpy.get_local_id(0)
        i = I(clpy.get_global_id(0))
        stride = I(clpy.get_global_size(0))
        h = clpy.local_array(uint, BINS)
        for b in range(lid, BINS, WG):
            h[b] = 0
        clpy.barrier()
        while i < n:
            k = bin_of(x[i], lo, edges)
            if k >= 0:
                clpy.atomic_inc(h, k)
            i += stride
        clpy.barrier()
        for b in range(lid, BINS, WG):
            c = h[b]
            if c != 0:
                clpy.atomic_add(counts, b, c)

    @clpy.kernel
    def histogram_global(x: Global[t], counts: Global[uint], n: I, lo: int64, edges: Global[E]):
        i = I(clpy.get_global_id(0))
        stride = I(clpy.get_global_size(0))
        while i < n:
            k = bin_of(x[i], lo, edges)
            if k >= 0:
                clpy.atomic_inc(counts, k)
            i += stride

    return histogram_local if bins <= LOCAL_BINS else histogram_global


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def _widen_kernel() -> Any:
    @clpy.kernel
    def widen_counts(src: Global[uint], dst: Global[int64], n: int32):
        i = clpy.get_global_id(0)
        if i < n:
            dst[i] = int64(src[i])

    return widen_counts


def histogram(x: Any, bins: int = 10, range: Any = None, device: Any = None) -> Any:  # noqa: A002
    """Counts of ``x`` in ``bins`` equal bins over ``range`` (default: ``x``'s min and max),
    like ``np.histogram(x, bins, range)[0]`` (int64). The result has ``x``'s kind."""
    inp = as_input(x, device)
    t = element_type(inp.dtype, inp.shape, "+")
    if not isinstance(t, ScalarType):
        raise TypeError(f"x: histogram takes a 1-d array of numbers, not an array of {t}")
    if isinstance(bins, (bool, np.bool_)) or not isinstance(bins, (int, np.integer)):
        raise TypeError(f"bins: expected a positive int (the number of equal bins), got {bins!r}")
    bins = int(bins)
    if bins < 1:
        raise ValueError(f"bins: must be positive, got {bins}")
    n = inp.count
    if n >= 2**32:
        raise ValueError(f"x: at most 2**32 - 1 elements, got {n}")
    place = inp.place
    if range is not None or n == 0:
        edges = np.histogram_bin_edges(np.zeros(0, inp.dtype), bins, range)
    else:  # NumPy's default range is (x.min(), x.max()): the same edges from those two
        lo = read_result(inp.place, reduce_on(inp, t, resolve_op("min", t)))
        hi = read_result(inp.place, reduce_on(inp, t, resolve_op("max", t)))
        edges = np.histogram_bin_edges(np.array([lo, hi], inp.dtype), bins)
    exact = (
        t.is_int
        and range is not None
        and all(float(v).is_integer() for v in range)
        and int(range[1]) - int(range[0]) == bins
    )
    counts = place.scratch("histogram.counts", bins, np.uint32)
    if place.is_sim:
        counts.sim_array[...] = 0
    else:
        counts.fill(0)
    if n:
        tn = tuning(place.dev)
        wg = tn.wg
        groups = builtins.max(1, builtins.min(tn.groups, -(-n // wg)))
        idx = index_type(n, groups * wg)
        if exact:
            e_type = None
            dev_edges = place.upload(np.zeros(1, np.float64))
            lo_arg = int(range[0])
        else:
            e_type = C.scalar_for_dtype(edges.dtype)
            dev_edges = place.upload(edges)
            lo_arg = 0
        k = _hist_kernel(t, e_type, idx, bins, wg)
        k[(groups * wg,), (wg,)](
            inp.data, counts, n, np.int64(lo_arg), dev_edges, device=place.launch_on, wait=False
        )
    if inp.kind == "numpy":
        return counts.get().astype(np.int64)
    out = place.empty(bins, np.int64)
    _widen_kernel()[(-(-bins // 64) * 64,), (64,)](
        counts, out, bins, device=place.launch_on, wait=False
    )
    return inp.result(out)


__all__ = ["histogram"]
