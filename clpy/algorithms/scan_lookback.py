# mypy: disable-error-code="valid-type,no-redef"
"""How a tile of the single-pass scan learns its prefix (decoupled look-back; scans.py says
why waiting is safe): one 64-bit status word per tile, the flag in the high half and the
value's 32 bits in the low half, read by one work-item (``look_back``) or by a window of 32
(``window_look_back``). Used by the register tile kernels of scan_tiles.py."""

# No `from __future__ import annotations`: kernel annotations such as Global[t] name closure
# variables, which Python captures only when the annotations are evaluated eagerly.

import functools
from typing import Any, no_type_check

import clpy
from clpy import Global, int32, uint, ulong
from clpy.algorithms._core import Op
from clpy.types import catalog as C
from clpy.types.core import ScalarType

FROM_BITS = {C.float_: clpy.as_float, C.int_: clpy.as_int, C.uint: clpy.as_uint}
READS = ("rmw", "load")
LOOKBACKS = ("serial", "window", "early")
WINDOW = 32  # predecessors one step of the window look-back reads at once


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def _peek(read: str) -> Any:
    """``peek(status, i)``: status word ``i``, read atomically (``look_back`` says how)."""
    if read not in READS:
        raise ValueError(f"read: expected one of {READS}, got {read!r}")
    if read == "load":

        @clpy.func
        def peek(status: Global[ulong], i: int32) -> ulong:
            return clpy.atomic_load_explicit(
                status + i, clpy.memory_order_relaxed, clpy.memory_scope_device
            )

    else:

        @clpy.func
        def peek(status: Global[ulong], i: int32) -> ulong:
            return clpy.atom_or(status, i, ulong(0))

    return peek


@functools.cache
@no_type_check  # device functions: clpy types them per call
def _packer(t: ScalarType) -> Any:
    """``pack(flag, v)``: a status word, ``flag`` in the high half and ``v``'s 32 bits in
    the low half."""

    @clpy.func
    def pack(flag: uint, v: t) -> ulong:
        return (ulong(flag) << 32) | ulong(clpy.as_uint(v))

    return pack


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def look_back(t: ScalarType, op: Op, lb: int, read: str = "rmw") -> Any:
    """``look_back(status, tile, agg, f_agg, f_pfx, ident)``: publish ``agg`` (tile 0: as
    its inclusive prefix), then combine predecessors' words from the nearest back, ``lb``
    independent atomic reads at a time, until an inclusive prefix; publish this tile's
    inclusive prefix and return the exclusive one. Run by one work-item of the group.
    ``read``: how a word is read, "rmw" (``atom_or(p, 0)``, a read-modify-write: any
    OpenCL 1.2 device with 64-bit atomics) or "load" (``atomic_load_explicit``, relaxed,
    device scope: a plain coherent load, no serialisation at the word's cache line; OpenCL
    C 2.0 atomics)."""
    combine, LB, FROM = op.combine, lb, FROM_BITS[t]  # noqa: N806
    peek, pack = _peek(read), _packer(t)

    @clpy.func
    def look_back(
        status: Global[ulong], tile: int32, agg: t, f_agg: uint, f_pfx: uint, ident: t
    ) -> t:
        if tile == 0:
            clpy.atom_xchg(status, 0, pack(f_pfx, agg))
            return ident
        clpy.atom_xchg(status, tile, pack(f_agg, agg))
        prefix = ident
        j = tile - 1
        done = 0
        w = clpy.private_array(ulong, LB)
        while done == 0:
            for k in range(LB):  # independent reads: one round trip for LB words
                w[k] = peek(status, j - k) if j - k >= 0 else ulong(0)
            for k in range(LB):
                if done == 0:  # j - k >= 0 here: tile 0 always holds a prefix
                    s = w[k]
                    while uint(s >> 32) < f_agg:  # spin on this predecessor only
                        s = peek(status, j - k)
                    prefix = combine(FROM(uint(s & 0xFFFFFFFF)), prefix)
                    if uint(s >> 32) == f_pfx:
                        done = 1
            j -= LB
        clpy.atom_xchg(status, tile, pack(f_pfx, combine(prefix, agg)))
        return prefix

    return look_back


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def window_look_back(t: ScalarType, op: Op, read: str = "load") -> Any:
    """``window_look_back(status, tile, sh, ctl, win, f_agg, f_pfx, ident, first)``, called
    by every work-item of the group after one of them published the tile's aggregate (tile
    0: its inclusive prefix) and stored it in ``sh[0]``, with ``ctl[0] == WINDOW`` visible
    (set before an earlier barrier). Returns the tile's exclusive prefix in every work-item.
    ``first``: lane ``L``'s word of tile ``tile - 1 - L`` if read earlier (``window_peek``,
    e.g. before the work-group scan, so that its round trip overlaps the scan; flags only
    grow within a launch, so an early word is still true, and one that holds no aggregate yet
    is read again), else 0.

    Per step, work-items ``0 .. WINDOW - 1`` each read one predecessor's word at once (lane
    ``L``: tile ``j - L``; one memory round trip for ``WINDOW`` words, where the serial
    ``look_back`` needs one per ``lb``), each spinning only on its own word until it holds at
    least an aggregate, and the lanes that see an inclusive prefix ``atomic_min`` their index
    into ``ctl[0]``; after a barrier work-item 0 combines the words from the nearest to the
    nearest prefix out of local memory, publishes the tile's inclusive prefix and resets
    ``ctl[0]``; after a second barrier every work-item reads the prefix, or all go on to the
    next window. Two barriers per step, almost always one step."""
    combine, FROM, W = op.combine, FROM_BITS[t], WINDOW  # noqa: N806
    peek, pack = _peek(read), _packer(t)

    @clpy.func
    def window_look_back(
        status: Global[ulong],
        tile: int32,
        sh: clpy.Local[t],
        ctl: clpy.Local[int32],
        win: clpy.Local[ulong],
        f_agg: uint,
        f_pfx: uint,
        ident: t,
        first: ulong,
    ) -> t:
        lid = clpy.get_local_id(0)
        if tile == 0:  # uniform: the ticket is the group's
            return ident
        j = tile - 1
        done = 0
        prefix = ident  # work-item 0's running combination of the windows read so far
        while done == 0:
            if lid < W:
                k = j - lid
                s = pack(f_pfx, ident)  # before tile 0: an empty inclusive prefix
                if k >= 0:
                    s = first  # this lane's word read early (first window), else 0
                    while uint(s >> 32) < f_agg:  # spin on this predecessor only
                        s = peek(status, k)
                first = ulong(0)
                if uint(s >> 32) == f_pfx:
                    clpy.atomic_min(ctl, 0, lid)
                win[lid] = s
            clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
            if lid == 0:
                m = ctl[0]
                for i in range(min(m + 1, W)):  # nearest first: combine(older, newer)
                    prefix = combine(FROM(uint(win[i] & 0xFFFFFFFF)), prefix)
                ctl[0] = W
                ctl[1] = 1 if m < W else 0
                if m < W:
                    clpy.atom_xchg(status, tile, pack(f_pfx, combine(prefix, sh[0])))
                    sh[1] = prefix
            clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
            done = ctl[1]
            j -= W
        return sh[1]

    return window_look_back


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def window_peek(read: str = "load") -> Any:
    """``window_peek(status, tile)``: lane ``L < WINDOW``'s early read of tile
    ``tile - 1 - L``'s word for ``window_look_back``'s ``first`` (0 for other work-items and
    before tile 0)."""
    peek, W = _peek(read), WINDOW  # noqa: N806

    @clpy.func
    def window_peek(status: Global[ulong], tile: int32) -> ulong:
        lid = clpy.get_local_id(0)
        k = tile - 1 - lid
        return peek(status, k) if lid < W and k >= 0 else ulong(0)

    return window_peek


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def publisher(t: ScalarType) -> Any:
    """``publish(status, tile, agg, f_agg, f_pfx)``: the tile's aggregate (tile 0: its
    inclusive prefix) into its status word; returns ``agg``."""
    pack = _packer(t)

    @clpy.func
    def publish(status: Global[ulong], tile: int32, agg: t, f_agg: uint, f_pfx: uint) -> t:
        clpy.atom_xchg(status, tile, pack(f_pfx if tile == 0 else f_agg, agg))
        return agg

    return publish


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def ticket_taker(nwin: int) -> Any:
    """``take_ticket(counter, ticket, ntiles, ctl)``: the group's tile from the atomic ticket
    counter (reset by the group that takes the last ticket), with ``ctl[0] = nwin`` (the
    window look-back's "no prefix seen yet") visible after its barrier."""
    NWIN = nwin  # noqa: N806

    @clpy.func
    def take_ticket(
        counter: Global[int32], ticket: clpy.Local[int32], ntiles: int32, ctl: clpy.Local[int32]
    ) -> int32:
        if clpy.get_local_id(0) == 0:
            ticket[0] = clpy.atomic_inc(counter, 0)
            ctl[0] = NWIN
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
        tile = ticket[0]
        if clpy.get_local_id(0) == 0 and tile == ntiles - 1:
            clpy.atomic_xchg(counter, 0, 0)  # every ticket is taken: ready for the next launch
        return tile

    return take_ticket


__all__ = [
    "publisher",
    "ticket_taker",
    "look_back",
    "window_look_back",
    "window_peek",
    "FROM_BITS",
    "READS",
    "LOOKBACKS",
    "WINDOW",
]
