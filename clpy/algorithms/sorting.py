# mypy: disable-error-code="valid-type"
"""``sort(keys, values=None)``: a stable LSD radix sort of integer and float keys, with an
optional payload of any dtype.

Keys become unsigned integers whose order is the keys' order (signed: flip the sign bit;
floats: flip all bits of negatives and the sign bit of the others, ``-0.0`` as ``+0.0`` and
every NaN as the largest value, so NaNs end last as in ``np.sort``). The sort then moves
(unsigned key, original index) pairs, 4 bits per pass, in passes of three launches:

1. per tile of ``wg * items`` elements, the count of each of the 16 digits (packed counters,
   one work-group reduction);
2. an exclusive ``scan`` of those counts laid out digit-major (``counts[d * tiles + t]``):
   where tile ``t`` starts writing digit ``d``;
3. per tile, each element's rank among the equal digits of the tile: work-items own runs of
   ``items`` consecutive elements and count their digits in 16 packed 16-bit counters (a
   ``ulong4``); one work-group scan of those counters ranks the runs, so equal digits keep
   their order (the sort is stable); the tile is reordered in local memory and written out
   coalesced.

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
TILE_BYTES = 16384  # local memory for a tile's keys and indices (more: fewer resident groups)


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def _key_kernel(t: ScalarType, with_idx: bool) -> Any:
    """Keys → order-preserving unsigned keys (``uint`` for <= 32 bits, else ``ulong``) and,
    ``with_idx``, the indices 0, 1, ..."""
    U = C.uint if t.size <= 4 else C.ulong  # noqa: N806
    IDX = with_idx  # noqa: N806
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
            if IDX:
                idx[i] = i

    return sort_keys_in


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def _pass_kernels(u_t: ScalarType, wg: int, items: int, with_idx: bool) -> Any:
    """One pass's count and scatter kernels. Digit counts are packed four 16-bit counters to
    a ``ulong``, sixteen to a ``ulong4`` (a tile has fewer than 2^16 elements).
    ``with_idx``: the scatter also moves the original indices (else ``idx``/``idx2`` are
    not touched)."""
    U, WG, ITEMS, TILE, IDX = u_t, wg, items, wg * items, with_idx  # noqa: N806

    @clpy.func
    def one_hot(d: int32) -> ulong4:
        """The packed counters with digit ``d`` counted once (``d == DIGITS``: none)."""
        c = ulong4(0)
        one = ulong(1) << ulong(16 * (d & 3))
        if d < 4:
            c.x = one
        elif d < 8:
            c.y = one
        elif d < 12:
            c.z = one
        elif d < DIGITS:
            c.w = one
        return c

    @clpy.func
    def counter(c: ulong4, d: int32) -> int32:
        lane = c.x if d < 4 else (c.y if d < 8 else (c.z if d < 12 else c.w))
        return int32((lane >> ulong(16 * (d & 3))) & 0xFFFF)

    @clpy.kernel
    def radix_count(u: Global[U], counts: Global[int32], n: int32, shift: int32, ntiles: int32):
        lid = clpy.get_local_id(0)
        tile = clpy.get_group_id(0)
        c = ulong4(0)
        for k in range(ITEMS):
            g = tile * TILE + k * WG + lid
            if g < n:
                c += one_hot(int32((u[g] >> shift) & 15))
        # four scalar collectives, not one of a ulong4: scalar adds are native where the
        # device has collectives (vector ones are lowered, with local scratch)
        tot = ulong4(
            clpy.work_group_reduce(c.x, "+"),
            clpy.work_group_reduce(c.y, "+"),
            clpy.work_group_reduce(c.z, "+"),
            clpy.work_group_reduce(c.w, "+"),
        )
        if lid < DIGITS:
            counts[lid * ntiles + tile] = counter(tot, lid)

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
        """Stable: work-item ``lid`` owns the tile's elements ``lid * ITEMS ...``; an element's
        place in the tile is its digit's start in the tile, plus the same digits of earlier
        work-items (one work-group exclusive scan of the packed counters), plus those before it
        in its own run. The tile is reordered in local memory, then written out coalesced."""
        lid = clpy.get_local_id(0)
        tile = clpy.get_group_id(0)
        ku = clpy.local_array(U, TILE)
        ki = clpy.local_array(int32, TILE if IDX else 1)
        start = clpy.local_array(int32, DIGITS)
        dest = clpy.local_array(int32, DIGITS)
        tot = clpy.local_array(ulong4, 1)
        pk = clpy.private_array(U, ITEMS)
        pi = clpy.private_array(int32, ITEMS if IDX else 1)
        pr = clpy.private_array(int32, ITEMS)
        base = tile * TILE
        for k in range(ITEMS):
            g = base + k * WG + lid
            if g < n:
                ku[k * WG + lid] = u[g]
                if IDX:
                    ki[k * WG + lid] = idx[g]
        if lid < DIGITS:
            dest[lid] = offs[lid * ntiles + tile]
        clpy.barrier()
        b = lid * ITEMS
        c = ulong4(0)
        for j in range(ITEMS):
            d = DIGITS  # past the array's end: no digit
            if base + b + j < n:
                pk[j] = ku[b + j]
                if IDX:
                    pi[j] = ki[b + j]
                d = int32((pk[j] >> shift) & 15)
            pr[j] = counter(c, d) if d < DIGITS else 0
            c += one_hot(d)
        inc = ulong4(
            clpy.work_group_scan_inclusive(c.x, "+"),
            clpy.work_group_scan_inclusive(c.y, "+"),
            clpy.work_group_scan_inclusive(c.z, "+"),
            clpy.work_group_scan_inclusive(c.w, "+"),
        )
        ex = inc - c
        if lid == WG - 1:
            tot[0] = inc
        clpy.barrier()
        if lid < DIGITS:
            s = 0
            for e in range(DIGITS):
                if e < lid:
                    s += counter(tot[0], e)
            start[lid] = s
        clpy.barrier()
        for j in range(ITEMS):
            if base + b + j < n:
                d = int32((pk[j] >> shift) & 15)
                r = start[d] + counter(ex, d) + pr[j]
                ku[r] = pk[j]
                if IDX:
                    ki[r] = pi[j]
        clpy.barrier()
        for k in range(ITEMS):
            i = k * WG + lid
            if base + i < n:
                d = int32((ku[i] >> shift) & 15)
                pos = dest[d] + i - start[d]
                u2[pos] = ku[i]
                if IDX:
                    idx2[pos] = ki[i]

    return radix_count, radix_scatter


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def _unkey_kernel(t: ScalarType) -> Any:
    """Unsigned keys → integer keys (the inverse of ``_key_kernel``'s map for integers)."""
    U = C.uint if t.size <= 4 else C.ulong  # noqa: N806
    BIAS = 1 << (8 * t.size - 1)  # noqa: N806
    W = C.int_ if t.size <= 4 else C.long  # noqa: N806
    SIGNED, SMALL = t.is_signed, t.size < 4  # noqa: N806

    @clpy.kernel
    def sort_keys_out(u: Global[U], x: Global[t], n: int32):
        i = clpy.get_global_id(0)
        if i < n:
            if SIGNED and SMALL:
                x[i] = t(W(u[i]) - BIAS)
            elif SIGNED:
                x[i] = t(u[i] ^ U(BIAS))
            else:
                x[i] = t(u[i])

    return sort_keys_out


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
    u_t = C.uint if t.size <= 4 else C.ulong
    u_np = np.uint32 if t.size <= 4 else np.uint64
    # a tile's keys (and indices) in local memory: at most TILE_BYTES
    with_idx = v_in is not None or t.is_float
    items = max(1, min(tn.items, TILE_BYTES // (wg * (u_t.size + (4 if with_idx else 0)))))
    ntiles = -(-n // (wg * items))
    # integer keys alone come back from the unsigned keys; floats (-0.0, NaNs) and payloads
    # through the permutation (with_idx)
    u, u2 = place.empty(n, u_np), place.empty(n, u_np)
    m = n if with_idx else 1
    idx, idx2 = place.empty(m, np.int32), place.empty(m, np.int32)
    counts = place.empty(DIGITS * ntiles, np.int32)
    offs = place.empty(DIGITS * ntiles, np.int32)
    go = (-(-n // 64) * 64,)
    _key_kernel(t, with_idx)[go, (64,)](k_in.data, u, idx, n, device=place.launch_on, wait=False)
    count_k, scatter_k = _pass_kernels(u_t, wg, items, with_idx)
    i32 = C.int_
    plus = resolve_op("+", i32)
    c_in = Input(counts, place, "device", np.dtype(np.int32), (DIGITS * ntiles,))
    for shift in range(0, 8 * t.size, RADIX_BITS):  # the unsigned keys have t's bits
        count_k[(ntiles * wg,), (wg,)](
            u, counts, n, shift, ntiles, device=place.launch_on, wait=False
        )
        scan_on(c_in, offs, i32, plus, inclusive=False)
        scatter_k[(ntiles * wg,), (wg,)](
            u, idx, u2, idx2, offs, n, shift, ntiles, device=place.launch_on, wait=False
        )
        u, u2, idx, idx2 = u2, u, idx2, idx
    if not with_idx:
        out = place.empty(k_in.shape, k_in.dtype)
        _unkey_kernel(t)[go, (64,)](u, out, n, device=place.launch_on, wait=False)
        return k_in.result(out)
    ko = k_in.result(_gather(place, k_in, idx))
    if v_in is None:
        return ko
    return ko, v_in.result(_gather(place, v_in, idx))


__all__ = ["sort"]
