# mypy: disable-error-code="valid-type,no-redef"
"""The single-pass scan's tile kernel for 4-byte scalars, CUB-style (scans.py says how the
tiles learn their prefix and why waiting is safe; this module is only the kernel).

A tile is ``wg * 4 * vecs`` elements. Work-item ``l`` owns the contiguous run of ``4 * vecs``
elements from ``tile * TILE + l * 4 * vecs``: it loads them straight into a private array
(registers: every index is a constant once the compiler unrolls the loops) with ``vecs``
16-byte vector loads, so neighbouring work-items read neighbouring 16-byte chunks and a
warp's loads cover whole cache lines; it scans them serially in registers; one work-group
exclusive scan of the per-work-item totals follows; one work-item publishes the tile's
aggregate and looks back (``look_back``); after one barrier every work-item adds the tile's
prefix to its run and stores it with vector stores. No tile is staged in local memory.

Options (each in the tuning, measured against each other by the benchmark's ``--sweep``):
the look-back is serial (one work-item, ``lb`` independent reads per step: ``look_back``) or
a 32-word window (32 work-items read and spin at once, the nearest inclusive prefix is found
with a local ``atomic_min``, two barriers per step: ``window_look_back``); status words are
read with atomic read-modify-writes or relaxed atomic loads.

The work-group scan of the totals is either the collective ``work_group_scan_exclusive``
("native": the driver's own on NVIDIA, lowered by clpy elsewhere) or a raking scan in local
memory ("rake": 32 work-items each scan ``wg / 32`` totals serially, then every work-item
folds the partial sums before its own; two barriers, no serial step by one work-item,
``_rake_scan``). Which one is faster is measured (``python -m benchmarks.algorithms
--sweep``) and set in the device tuning (_core.py).

Pruned after the H100 sweeps (sessions 4 and 5, benchmarks/results/algorithms_h100*.json),
where each lost every time and no tuning used it: a two-level "local" work-group scan (one
work-item scanning the 32 partial sums: 1.9-2.1 TB/s against 2.2 for "native" blocked tiles),
looping groups that took the next tile's ticket early (0.7-1.4 TB/s) and speculative loads of
tile ``get_group_id(0)`` before the ticket came back (2-10% slower than loading after it).

Measured on an H100 (benchmarks/results/algorithms_h100.json, ``scan_sweep``): 512 x 16
elements, native scan, 4 words per look-back step, 2.0 TB/s device time (0.69x copy), no
faster then than session 2's tile staged in local memory (0.71x; pruned in session 6, when it
measured 0.70x against the striped tile's 0.96x); with relaxed atomic loads for the
look-back 2.2 TB/s (0.74x; session 4, 11:16 UTC run). NVIDIA's native
``work_group_scan_exclusive_add`` is a shuffle scan per warp followed by a loop over the warps
with two ``bar.sync`` each (14 barriers at 256 work-items: scan_tiles.ptx of the benchmark's
``--ptx``). Not measured, the likely limit: a group's loads are in
flight only at its start, and the rest of its life (ticket, barriers, one work-item's
look-back of 64-bit atomic read-modify-writes) leaves the memory system idle unless many
groups are resident.

The elements move as ``vector(t, 4)``: through a pointer to 4-vectors ("vecptr": the array's
buffer passed as ``Global[float4]``, 16-byte aligned, possible when the length and buffer
are multiples of 16 bytes), else with ``vload4``/``vstore4`` on the scalar pointer and
element-wise loads at the array's end.
"""

# No `from __future__ import annotations`: kernel annotations such as Global[t] name closure
# variables, which Python captures only when the annotations are evaluated eagerly.

import functools
from typing import Any, no_type_check

import clpy
from clpy import Global, Private, int32, uint, ulong
from clpy.algorithms._core import Op
from clpy.algorithms.scan_lookback import (
    FROM_BITS,
    LOOKBACKS,
    READS,
    WINDOW,
    look_back,
    publisher,
    ticket_taker,
    window_look_back,
    window_peek,
)
from clpy.types.core import ScalarType
from clpy.vectors import vector

WGSCANS = ("native", "rake")


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def _vector_io(t: ScalarType, idx: ScalarType, vecptr: bool) -> Any:
    """(load, load_tail, store, store_tail) of the ``q``-th 4-vector of an array of ``n``
    elements: ``_tail`` ones check ``n`` (missing elements load as ``ident``)."""
    VT, I = vector(t, 4), idx  # noqa: N806
    if vecptr:

        @clpy.func
        def load(x: Global[VT], q: I) -> VT:
            return x[q]

        @clpy.func
        def load_tail(x: Global[VT], q: I, n: I, ident: t) -> VT:
            return x[q] if q * 4 < n else VT(ident)  # n is a multiple of 4

        @clpy.func
        def store(y: Global[VT], q: I, v: VT) -> None:
            y[q] = v

        @clpy.func
        def store_tail(y: Global[VT], q: I, n: I, v: VT) -> None:
            if q * 4 < n:
                y[q] = v

        return load, load_tail, store, store_tail

    @clpy.func
    def load(x: Global[t], q: I) -> VT:
        return clpy.vload4(q, x)

    @clpy.func
    def load_tail(x: Global[t], q: I, n: I, ident: t) -> VT:
        b = q * 4
        return VT(
            x[b] if b < n else ident,
            x[b + 1] if b + 1 < n else ident,
            x[b + 2] if b + 2 < n else ident,
            x[b + 3] if b + 3 < n else ident,
        )

    @clpy.func
    def store(y: Global[t], q: I, v: VT) -> None:
        clpy.vstore4(v, q, y)

    @clpy.func
    def store_tail(y: Global[t], q: I, n: I, v: VT) -> None:
        b = q * 4
        if b < n:
            y[b] = v.x
        if b + 1 < n:
            y[b + 1] = v.y
        if b + 2 < n:
            y[b + 2] = v.z
        if b + 3 < n:
            y[b + 3] = v.w

    return load, load_tail, store, store_tail


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def _rake_scan(t: ScalarType, op: Op, wg: int) -> Any:
    """The "rake" work-group scan (two barriers, no serial step by one work-item):
    ``rake(run, tot, part, ident)`` returns every work-item's exclusive prefix of the
    group's ``run``s. The totals go to local memory (padded: the raking reads hit 32 banks);
    32 work-items each scan ``wg / 32`` of them in place and store their sum in ``part``;
    then every work-item folds the sums of the chunks before its own (broadcast reads) and
    adds its scanned total."""
    combine, S = op.combine, wg // 32  # noqa: N806

    @clpy.func
    def pad(a: int32) -> int32:
        return a + (a >> 5)

    @clpy.func
    def rake(run: t, tot: clpy.Local[t], part: clpy.Local[t], ident: t) -> t:
        lid = clpy.get_local_id(0)
        tot[pad(lid)] = run
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
        if lid < 32:
            acc = ident
            for k in range(S):
                a = pad(lid * S + k)
                w = tot[a]
                tot[a] = acc
                acc = combine(acc, w)
            part[lid] = acc
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
        c = lid // S
        pre = ident
        for k in range(32):
            if k < c:
                pre = combine(pre, part[k])
        return combine(pre, tot[pad(lid)])

    return rake


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def _run_io(t: ScalarType, op: Op, idx: ScalarType, wg: int, vecs: int, vecptr: bool) -> Any:
    """``fetch_run(x, v, q0, n, ident)``: this work-item's run of ``4 * vecs`` elements from
    4-vector ``q0`` into the private array ``v``; ``scan_run(v)`` scans it (inclusive) in
    place and returns its total; ``store_run(y, v, q0, n, pre, incl)``: ``pre`` combined into
    the run (shifted by one for an exclusive scan) and stored."""
    combine, V, ITEMS = op.combine, vecs, 4 * vecs  # noqa: N806
    PT, VT, I = (vector(t, 4) if vecptr else t), vector(t, 4), idx  # noqa: N806
    load, load_tail, store, store_tail = _vector_io(t, idx, vecptr)

    @clpy.func
    def fetch_run(x: Global[PT], v: Private[t], q0: I, n: I, ident: t) -> None:
        if (q0 + V) * 4 <= n:
            for k in range(V):
                a = load(x, q0 + k)
                v[4 * k] = a.x
                v[4 * k + 1] = a.y
                v[4 * k + 2] = a.z
                v[4 * k + 3] = a.w
        else:
            for k in range(V):
                a = load_tail(x, q0 + k, n, ident)
                v[4 * k] = a.x
                v[4 * k + 1] = a.y
                v[4 * k + 2] = a.z
                v[4 * k + 3] = a.w

    @clpy.func
    def scan_run(v: Private[t]) -> t:
        for j in range(1, ITEMS):
            v[j] = combine(v[j - 1], v[j])
        return v[ITEMS - 1]

    @clpy.func
    def store_run(y: Global[PT], v: Private[t], q0: I, n: I, pre: t, incl: int32) -> None:
        if incl != 0:
            for j in range(ITEMS):
                v[j] = combine(pre, v[j])
        else:
            for j in range(ITEMS - 1, 0, -1):
                v[j] = combine(pre, v[j - 1])
            v[0] = pre
        if (q0 + V) * 4 <= n:
            for k in range(V):
                store(y, q0 + k, VT(v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]))
        else:
            for k in range(V):
                store_tail(y, q0 + k, n, VT(v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]))

    return fetch_run, scan_run, store_run


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def regs_kernel(
    t: ScalarType,
    op: Op,
    idx: ScalarType,
    wg: int,
    vecs: int,
    incl: bool,
    vecptr: bool,
    wgscan: str,
    lb: int,
    read: str = "rmw",
    lookback_mode: str = "serial",
) -> Any:
    """The tile kernel (module docstring). Arguments: ``(x, y, n, ident, status, counter,
    epoch, ntiles)``, ``x``/``y`` as ``Global[vector(t, 4)]`` when ``vecptr``. ``read``: how
    the look-back reads status words (``look_back``). ``lookback_mode``: "serial" (one
    work-item, ``look_back``), "window" (``WINDOW`` work-items at once,
    ``window_look_back``) or "early" (the window, its first words read before the work-group
    scan: ``window_peek``)."""
    combine, OP, I, WG, V = op.combine, op.op, idx, wg, vecs  # noqa: N806
    TILE4, INCL = wg * vecs, int(incl)  # noqa: N806
    PT = vector(t, 4) if vecptr else t  # noqa: N806
    if wgscan not in WGSCANS:
        raise ValueError(f"wgscan: expected one of {WGSCANS}, got {wgscan!r}")
    if lookback_mode not in LOOKBACKS:
        raise ValueError(f"lookback: expected one of {LOOKBACKS}, got {lookback_mode!r}")
    WINDOWED = lookback_mode in ("window", "early")  # noqa: N806
    EARLY = lookback_mode == "early"  # noqa: N806
    NWIN = WINDOW if WINDOWED else 1  # noqa: N806
    RAKE = wgscan == "rake"  # noqa: N806
    if RAKE and (wg % 32 or wg < 32):
        raise ValueError(f"the raking work-group scan needs a multiple of 32 work-items, not {wg}")
    fetch_run, scan_run, store_run = _run_io(t, op, idx, wg, vecs, vecptr)
    lookback = look_back(t, op, lb, read)
    wlb = window_look_back(t, op, read)
    wpeek = window_peek(read)
    publish = publisher(t)
    take_ticket = ticket_taker(NWIN)
    rake = _rake_scan(t, op, max(wg, 32))
    NTOT = wg + wg // 32 if RAKE else 1  # noqa: N806

    @clpy.kernel
    def scan_tiles(
        x: Global[PT],
        y: Global[PT],
        n: I,
        ident: t,
        status: Global[ulong],
        counter: Global[int32],
        epoch: uint,
        ntiles: int32,
    ):
        lid = clpy.get_local_id(0)
        sh = clpy.local_array(t, 2)
        ticket = clpy.local_array(int32, 1)
        ctl = clpy.local_array(int32, 2)
        win = clpy.local_array(ulong, NWIN)
        tot = clpy.local_array(t, NTOT)
        part = clpy.local_array(t, 32 if RAKE else 1)
        v = clpy.private_array(t, 4 * V)
        tile = take_ticket(counter, ticket, ntiles, ctl)
        q0 = I(tile) * TILE4 + lid * V
        fetch_run(x, v, q0, n, ident)
        first = wpeek(status, tile) if EARLY else ulong(0)  # overlaps the scan
        run = scan_run(v)
        if RAKE:
            p = rake(run, tot, part, ident)
        else:
            p = clpy.work_group_scan_exclusive(run, OP)
        f_agg = epoch * 2 + 1
        f_pfx = epoch * 2 + 2
        if WINDOWED:
            if lid == WG - 1:  # knows the aggregate without another barrier
                sh[0] = publish(status, tile, combine(p, run), f_agg, f_pfx)
            pre = wlb(status, tile, sh, ctl, win, f_agg, f_pfx, ident, first)
            store_run(y, v, q0, n, combine(pre, p), INCL)
        else:
            if lid == WG - 1:  # knows the aggregate without another barrier
                sh[0] = lookback(status, tile, combine(p, run), f_agg, f_pfx, ident)
            clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
            store_run(y, v, q0, n, combine(sh[0], p), INCL)

    return scan_tiles


__all__ = [
    "regs_kernel",
    "look_back",
    "window_look_back",
    "FROM_BITS",
    "WGSCANS",
    "READS",
    "LOOKBACKS",
    "WINDOW",
]
