# mypy: disable-error-code="valid-type"
"""``sort(keys, values=None)``: a stable LSD radix sort of integer and float keys, with an
optional payload of any dtype.

Keys become unsigned integers whose order is the keys' order (signed: flip the sign bit;
floats: flip all bits of negatives and the sign bit of the others, ``-0.0`` as ``+0.0`` and
every NaN as the largest value, so NaNs end last as in ``np.sort``). The sort then moves
(unsigned key, original index) pairs, 4 bits per pass, in passes of three launches:

1. per tile of ``wg * items`` elements, the count of each of the 16 digits (local atomics);
2. an exclusive ``scan`` of those counts laid out digit-major (``counts[d * tiles + t]``):
   where tile ``t`` starts writing digit ``d``;
3. per tile, in chunks of ``wg`` in order, each element's rank among the equal digits of its
   chunk from one work-group exclusive scan of 16 packed 16-bit counters (a ``ulong4``), so
   equal digits keep their order: the sort is stable.

Keys and payload are gathered once at the end through the final permutation, as raw 32-bit
or 8-bit words, so the payload can be any dtype (vectors, structs).
"""

# No `from __future__ import annotations`: kernel annotations such as Global[t] name closure
# variables, which Python captures only when the annotations are evaluated eagerly.

import functools
from typing import Any, no_type_check

import numpy as np

import clpy
from clpy import Global, int32, ulong, ulong4
from clpy.abi.device_array import DeviceArray
from clpy.algorithms._core import Input, Place, as_input, element_type, resolve_op, tuning
from clpy.algorithms.scans import scan_on
from clpy.types import catalog as C
from clpy.types.core import ScalarType

RADIX_BITS = 4
DIGITS = 1 << RADIX_BITS


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def _key_kernel(t: ScalarType) -> Any:
    """Keys → order-preserving unsigned keys (``uint`` for <= 32 bits, else ``ulong``)."""
    U = C.uint if t.size <= 4 else C.ulong  # noqa: N806
    if t.is_float:
        SIGN = 1 << (8 * t.size - 1)  # noqa: N806
        ALL = (1 << (8 * t.size)) - 1  # noqa: N806
        AS = clpy.as_uint if t.size == 4 else clpy.as_ulong  # noqa: N806

        @clpy.func
        def ukey(v: t) -> U:
            if v != v:
                return U(ALL)
            w = v if v != 0 else t(0)
            b = AS(w)
            return b ^ U(ALL) if (b & U(SIGN)) != 0 else b ^ U(SIGN)

    elif t.is_signed:
        BIAS = 1 << (8 * t.size - 1)  # noqa: N806
        W = C.int_ if t.size <= 4 else C.long  # noqa: N806

        if t.size < 4:

            @clpy.func
            def ukey(v: t) -> U:
                return U(W(v) + BIAS)

        else:

            @clpy.func
            def ukey(v: t) -> U:
                return U(v) ^ U(BIAS)

    else:

        @clpy.func
        def ukey(v: t) -> U:
            return U(v)

    @clpy.kernel
    def sort_keys_in(x: Global[t], u: Global[U], idx: Global[int32], n: int32):
        i = clpy.get_global_id(0)
        if i < n:
            u[i] = ukey(x[i])
            idx[i] = i

    return sort_keys_in


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def _pass_kernels(u_t: ScalarType, wg: int, items: int) -> Any:
    U, WG, ITEMS, TILE = u_t, wg, items, wg * items  # noqa: N806

    @clpy.kernel
    def radix_count(u: Global[U], counts: Global[int32], n: int32, shift: int32, ntiles: int32):
        lid = clpy.get_local_id(0)
        tile = clpy.get_group_id(0)
        h = clpy.local_array(int32, DIGITS)
        if lid < DIGITS:
            h[lid] = 0
        clpy.barrier()
        for k in range(ITEMS):
            g = tile * TILE + k * WG + lid
            if g < n:
                clpy.atomic_inc(h, int32((u[g] >> shift) & 15))
        clpy.barrier()
        if lid < DIGITS:
            counts[lid * ntiles + tile] = h[lid]

    @clpy.kernel
    def radix_scatter(
        u: Global[U],
        idx: Global[int32],
        u2: Global[U],
        idx2: Global[int32],
        offs: Global[int32],
        n: int32,
        shift: int32,
        ntiles: int32,
    ):
        lid = clpy.get_local_id(0)
        tile = clpy.get_group_id(0)
        run = clpy.local_array(int32, DIGITS)
        tot = clpy.local_array(ulong4, 1)
        if lid < DIGITS:
            run[lid] = offs[lid * ntiles + tile]
        clpy.barrier()
        for k in range(ITEMS):
            g = tile * TILE + k * WG + lid
            d = int32((u[g] >> shift) & 15) if g < n else DIGITS
            flag = ulong4(0)
            one = ulong(1) << ulong(16 * (d & 3))
            if d < DIGITS:
                if d < 4:
                    flag.x = one
                elif d < 8:
                    flag.y = one
                elif d < 12:
                    flag.z = one
                else:
                    flag.w = one
            # inclusive minus own: the simulator's exclusive scan of vectors is broken (report)
            inc = clpy.work_group_scan_inclusive(flag, "+")
            ex = inc - flag
            if lid == WG - 1:
                tot[0] = inc
            lane = ex.x if d < 4 else (ex.y if d < 8 else (ex.z if d < 12 else ex.w))
            rank = int32((lane >> ulong(16 * (d & 3))) & 0xFFFF)
            clpy.barrier()
            if d < DIGITS:
                pos = run[d] + rank
                u2[pos] = u[g]
                idx2[pos] = idx[g]
            clpy.barrier()
            if lid < DIGITS:
                tv = tot[0]
                lv = tv.x if lid < 4 else (tv.y if lid < 8 else (tv.z if lid < 12 else tv.w))
                run[lid] += int32((lv >> ulong(16 * (lid & 3))) & 0xFFFF)
            clpy.barrier()

    return radix_count, radix_scatter


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def _gather_kernel(w_t: ScalarType, units: int) -> Any:
    W, UNITS = w_t, units  # noqa: N806

    @clpy.kernel
    def sort_gather(src: Global[W], perm: Global[int32], dst: Global[W], n: int32):
        i = clpy.get_global_id(0)
        if i < n:
            s = perm[i] * UNITS
            for k in range(UNITS):
                dst[i * UNITS + k] = src[s + k]

    return sort_gather


def _words(place: Place, data: Any, count: int, itemsize: int) -> tuple[Any, ScalarType, int]:
    """A flat view of ``count`` elements of ``itemsize`` bytes as 32-bit (or 8-bit) words."""
    dt, w = (np.uint32, C.uint) if itemsize % 4 == 0 else (np.uint8, C.uchar)
    units = itemsize // np.dtype(dt).itemsize
    if place.is_sim:
        return DeviceArray(place.dev, data.sim_array.reshape(-1).view(dt), None), w, units
    import pyopencl.array as cla

    flat = cla.Array(place.cl_queue, (count * units,), dt, data=data.base_data, offset=data.offset)
    return flat, w, units


def _gather(place: Place, src: Input, perm: Any) -> Any:
    n = src.count
    itemsize = src.dtype.itemsize * int(np.prod(src.shape[1:], dtype=np.int64))
    out = place.empty(src.shape, src.dtype)
    s_words, w, units = _words(place, src.data, n, itemsize)
    d_words, _, _ = _words(place, out, n, itemsize)
    _gather_kernel(w, units)[(-(-n // 64) * 64,), (64,)](
        s_words, perm, d_words, n, device=place.launch_on, wait=False
    )
    return out


def sort(keys: Any, values: Any = None, device: Any = None) -> Any:
    """Stable ascending sort of 1-d integer or float ``keys`` (NaNs last, as ``np.sort``);
    with ``values`` (any dtype, ``len(values) == len(keys)``), returns ``(keys, values)``
    reordered together. Results have ``keys``' kind (NumPy, DeviceArray or pyopencl array).

    >>> clpy.algorithms.sort(np.array([3, 1, 2], np.int32))
    array([1, 2, 3], dtype=int32)
    """
    k_in = as_input(keys, device, "keys")
    t = element_type(k_in.dtype, k_in.shape, "+", "keys")
    if not isinstance(t, ScalarType):
        raise TypeError(f"keys: expected a 1-d array of integers or floats, not {t}")
    v_in = None if values is None else as_input(values, device, "values", k_in.place)
    n = k_in.count
    if v_in is not None and v_in.count != n:
        raise ValueError(f"values: expected {n} elements (one per key), got {v_in.count}")
    if n >= 2**31:
        raise ValueError(f"keys: at most 2**31 - 1 elements, got {n}")
    place = k_in.place
    if n == 0:
        ko = k_in.result(place.empty(k_in.shape, k_in.dtype))
        return ko if v_in is None else (ko, v_in.result(place.empty(v_in.shape, v_in.dtype)))
    tn = tuning(place.dev)
    wg = max(tn.wg, DIGITS)
    items = tn.items
    ntiles = -(-n // (wg * items))
    u_t = C.uint if t.size <= 4 else C.ulong
    u_np = np.uint32 if t.size <= 4 else np.uint64
    u, u2 = place.empty(n, u_np), place.empty(n, u_np)
    idx, idx2 = place.empty(n, np.int32), place.empty(n, np.int32)
    counts = place.empty(DIGITS * ntiles, np.int32)
    offs = place.empty(DIGITS * ntiles, np.int32)
    go = (-(-n // 64) * 64,)
    _key_kernel(t)[go, (64,)](k_in.data, u, idx, n, device=place.launch_on, wait=False)
    count_k, scatter_k = _pass_kernels(u_t, wg, items)
    i32 = C.int_
    plus = resolve_op("+", i32)
    c_in = Input(counts, place, "device", np.dtype(np.int32), (DIGITS * ntiles,))
    for shift in range(0, 8 * np.dtype(u_np).itemsize, RADIX_BITS):
        count_k[(ntiles * wg,), (wg,)](
            u, counts, n, shift, ntiles, device=place.launch_on, wait=False
        )
        scan_on(c_in, offs, i32, plus, inclusive=False)
        scatter_k[(ntiles * wg,), (wg,)](
            u, idx, u2, idx2, offs, n, shift, ntiles, device=place.launch_on, wait=False
        )
        u, u2, idx, idx2 = u2, u, idx2, idx
    ko = k_in.result(_gather(place, k_in, idx))
    if v_in is None:
        return ko
    return ko, v_in.result(_gather(place, v_in, idx))


__all__ = ["sort"]
