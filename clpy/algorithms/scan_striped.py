# mypy: disable-error-code="valid-type,no-redef"
"""The single-pass scan's tile with striped, fully coalesced loads and stores (the
``scan_layout="striped"`` option of the tuning; scan_tiles.py holds the blocked tile and
scans.py the look-back's forward-progress argument, unchanged here).

A tile is 4 rows of ``wg`` 4-vectors (``16 * wg`` elements, like the blocked tile with four
vectors per work-item). Work-item ``l`` loads vector ``l`` of every row, so a sub-group's
load or store of one row covers consecutive 16-byte chunks: whole cache lines per instruction
(the blocked tile's work-items read 64 contiguous bytes each, four instructions per line
set). Each work-item scans its four vectors lane by lane (the within-vector prefixes) and
holds the four row totals as one 4-vector; the work-group scan is the raking scan of
scan_tiles.py on those 4-vectors (lane ``k``: row ``k``), so one pass gives every row's
exclusive prefix up to this work-item and, folding all 32 raking sums, the row totals. The
element order is row-major (row 0 of the tile, then row 1 ...), so an element's prefix is
(rows before its row) op (its row up to its work-item) op (its vector up to it): only
associativity is used, but the lane-wise combination of 4-vectors needs an operator that
works lane-wise (``Op.vectorizable``); others use the blocked tile.
"""

# No `from __future__ import annotations`: kernel annotations such as Global[t] name closure
# variables, which Python captures only when the annotations are evaluated eagerly.

import functools
from typing import Any, no_type_check

import clpy
from clpy import Global, int32, uint, ulong
from clpy.algorithms._core import Op
from clpy.algorithms.scan_lookback import (
    LOOKBACKS,
    WINDOW,
    look_back,
    publisher,
    ticket_taker,
    window_look_back,
    window_peek,
)
from clpy.algorithms.scan_tiles import _vector_io
from clpy.types.core import ScalarType
from clpy.vectors import vector


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def striped_kernel(
    t: ScalarType,
    op: Op,
    idx: ScalarType,
    wg: int,
    incl: bool,
    vecptr: bool,
    lb: int,
    read: str,
    lookback_mode: str,
) -> Any:
    """The striped tile kernel (module docstring); arguments as scan_tiles.regs_kernel's:
    ``(x, y, n, ident, status, counter, epoch, ntiles)``."""
    if not op.vectorizable:
        raise ValueError(f"the striped tile combines lanes of 4-vectors: not with {op.op!r}")
    if wg % 32 or wg < 32:
        raise ValueError(f"the striped tile needs a multiple of 32 work-items, not {wg}")
    if lookback_mode not in LOOKBACKS:
        raise ValueError(f"lookback: expected one of {LOOKBACKS}, got {lookback_mode!r}")
    combine, I, WG, S, INCL = op.combine, idx, wg, wg // 32, int(incl)  # noqa: N806
    VT, TILE4 = vector(t, 4), 4 * wg  # noqa: N806
    PT = VT if vecptr else t  # noqa: N806
    WINDOWED, EARLY = lookback_mode != "serial", lookback_mode == "early"  # noqa: N806
    NWIN = WINDOW if WINDOWED else 1  # noqa: N806
    load, load_tail, store, store_tail = _vector_io(t, idx, vecptr)
    lookback = look_back(t, op, lb, read)
    wlb = window_look_back(t, op, read)
    wpeek = window_peek(read)
    publish = publisher(t)
    take_ticket = ticket_taker(NWIN)

    @clpy.func
    def pad(a: int32) -> int32:
        return a + (a >> 5)

    @clpy.func
    def vscan(a: VT) -> VT:
        b = combine(a.x, a.y)
        c = combine(b, a.z)
        return VT(a.x, b, c, combine(c, a.w))

    @clpy.func
    def fetch(x: Global[PT], q: I, full: int32, n: I, ident: t) -> VT:
        return load(x, q) if full != 0 else load_tail(x, q, n, ident)

    @clpy.func
    def put(y: Global[PT], q: I, full: int32, n: I, pre: t, a: VT, s: VT) -> None:
        if INCL != 0:
            v = VT(combine(pre, s.x), combine(pre, s.y), combine(pre, s.z), combine(pre, s.w))
        else:
            v = VT(pre, combine(pre, a.x), combine(pre, s.y), combine(pre, s.z))
        if full != 0:
            store(y, q, v)
        else:
            store_tail(y, q, n, v)

    @clpy.kernel
    def scan_striped(
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
        tot = clpy.local_array(VT, WG + WG // 32)
        part = clpy.local_array(VT, 32)
        tile = take_ticket(counter, ticket, ntiles, ctl)
        q0 = I(tile) * TILE4 + lid
        full = 1 if (I(tile) + 1) * TILE4 * 4 <= n else 0
        a0 = fetch(x, q0, full, n, ident)
        a1 = fetch(x, q0 + WG, full, n, ident)
        a2 = fetch(x, q0 + 2 * WG, full, n, ident)
        a3 = fetch(x, q0 + 3 * WG, full, n, ident)
        first = wpeek(status, tile) if EARLY else ulong(0)  # overlaps the scan
        s0 = vscan(a0)
        s1 = vscan(a1)
        s2 = vscan(a2)
        s3 = vscan(a3)
        # The raking scan of the row totals (lane k: row k), as scan_tiles._rake_scan.
        tot[pad(lid)] = VT(s0.w, s1.w, s2.w, s3.w)
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
        if lid < 32:
            acc = VT(ident)
            for k in range(S):
                ai = pad(lid * S + k)
                w = tot[ai]
                tot[ai] = acc
                acc = combine(acc, w)
            part[lid] = acc
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
        c = lid // S
        pre = VT(ident)
        rows = VT(ident)
        for k in range(32):
            pk = part[k]
            if k < c:
                pre = combine(pre, pk)
            rows = combine(rows, pk)
        e = combine(pre, tot[pad(lid)])  # each row up to this work-item, exclusive
        o1 = rows.x
        o2 = combine(o1, rows.y)
        o3 = combine(o2, rows.z)
        agg = combine(o3, rows.w)
        f_agg = epoch * 2 + 1
        f_pfx = epoch * 2 + 2
        if WINDOWED:
            if lid == WG - 1:
                sh[0] = publish(status, tile, agg, f_agg, f_pfx)
            tp = wlb(status, tile, sh, ctl, win, f_agg, f_pfx, ident, first)
        else:
            if lid == WG - 1:
                sh[0] = lookback(status, tile, agg, f_agg, f_pfx, ident)
            clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
            tp = sh[0]
        put(y, q0, full, n, combine(tp, e.x), a0, s0)
        put(y, q0 + WG, full, n, combine(tp, combine(o1, e.y)), a1, s1)
        put(y, q0 + 2 * WG, full, n, combine(tp, combine(o2, e.z)), a2, s2)
        put(y, q0 + 3 * WG, full, n, combine(tp, combine(o3, e.w)), a3, s3)

    return scan_striped


__all__ = ["striped_kernel"]
