# mypy: disable-error-code="valid-type"
"""Device-wide inclusive and exclusive scans with any operator: ``scan(x, op)``.

Tiles. For 4-byte scalars on OpenCL devices (the single-pass scheme below) a tile is
``scan_wg * 4 * scan_vecs`` elements and never touches local memory (scan_tiles.py, CUB's
design): each work-item loads its contiguous run straight into registers with 16-byte vector
loads, scans it serially, one work-group exclusive scan combines the work-items' totals, one
work-item (or a window of 32) looks back, and the run is stored with vector stores; or, with
``scan_layout="striped"`` and a lane-wise operator, the tile's rows are loaded and stored
coalesced (scan_striped.py). The tile shape is measured per vendor (``--sweep`` of
benchmarks/algorithms.py) and kept in _core.SCAN_TILES. For other
types, and with ``scan_vecs = 0``, the tile is ``wg * items`` elements scanned in local
memory: coalesced loads into a local array, each work-item scans its ``items`` consecutive
elements serially, ``clpy.work_group_scan_exclusive`` combines the work-items' totals, and the
tile is written back coalesced. Order is preserved everywhere, so the operator needs only be
associative (a user combiner need not commute).

How tiles learn the combination of all earlier tiles:

**Single pass, decoupled look-back** (Merrill & Garland, "Single-pass Parallel Prefix Scan
with Decoupled Look-back", 2016), used on GPUs for 4-byte scalars: one read and one write of
the array. Each tile publishes, in one 64-bit status word per tile (flag in the high half, the
value's bits in the low half, so one atomic access carries both and no fence is needed between
a flag and its value), first its aggregate and, once it knows it, its inclusive prefix. The
look-back is windowed, as in CUB: ``WINDOW`` (32) work-items each read one predecessor's
word into local memory, and work-item 0 walks the window from the nearest predecessor,
combining (in tile order: only associativity is needed) until it meets an inclusive prefix,
spinning only on a word that holds neither yet; without a prefix in the window, the next
window is read. The register tiles of scan_tiles.py look back either from one work-item,
which reads ``scan_lb`` predecessors' words with independent atomic reads per step (no
barrier; ``scan_lookback="serial"``), or with the same 32-word window (``"window"``), whose
lanes also spin in parallel and find the nearest prefix with a local ``atomic_min``.
(A sub-group version, sub_group_any/reduce/scan over lanes, measured 0.39x
copy on an H100, whose driver has no native sub-groups so clpy lowers them to work-group
collectives, and hung intermittently on PoCL under pytest: removed.) Flags carry a
per-launch epoch (``2e + 1``: aggregate, ``2e + 2``: prefix), so the status array is never
cleared; the tile counter is reset by the group that takes the last ticket. Full tiles of
4-byte elements move between global and local memory as 4-vectors (``vload4``/``vstore4``).

*Forward progress.* OpenCL (2.x/3.0 §3.2.2) promises nothing about work-groups making progress
while another one waits, so a tile that spins on another tile's flag can in principle wait
forever. Two things make the wait safe where we use it: (1) tiles are taken from an atomic
ticket counter, not from ``get_group_id``, so a tile only ever waits on tiles whose tickets
were taken *earlier*, i.e. by work-groups that are already running (every window lane reads a
tile below its own; a lane that would read one before tile 0 reads nothing); (2) on GPUs a
running work-group stays resident and keeps being scheduled until it finishes (no preemption
in favour of a group that has not started: the "occupancy-bound" execution model, Sorensen et
al., OOPSLA 2016), so every tile it waits on finishes its publication in finite time. Within
the waiting group only the look-back's work-items spin (one, or the window's lanes); the
others wait at a barrier. A spinning lane waits only on a word of another, earlier group,
never on a work-item of its own group, so nothing relies on work-items of one group making
independent progress: lanes that run in lock-step (a warp) loop until every lane's word is
ready, and each becomes ready regardless of them. The "early" window reads its first words
right after the ticket, before the work-group scan, without waiting: a flag only grows
within a launch (older launches' epochs read as "not yet"), so an early word is still true
and one that holds no aggregate is read again. Speculative loads (``scan_spec``: a group
loads tile ``get_group_id(0)`` before its ticket returns, and reloads if the ticket names
another tile) only read the input; the group still scans and publishes its ticket's tile, so
nothing waits on a group-id order the device does not promise. Looping groups (``scan_loop``, the
option of scan_tiles.py that takes the next tile's ticket before finishing the current one)
keep this: a group holds at most two tickets, and the later one waits only on earlier tickets,
among them its own earlier tile, which it finishes first. Neither holds on the simulator, which
runs groups in batches to completion one batch at a time with no ticket order between
batches' spins, nor is (2) promised by every CPU driver: there, and
for types that do not fit a 32-bit status half, we use:

**Reduce, then scan** (three launches, two reads and one write): ``groups`` work-groups each
reduce a contiguous run of tiles, one group scans those per-group totals, and each group
rescans its run with its carry-in. Nothing ever waits on another group.
"""

# No `from __future__ import annotations`: kernel annotations such as Global[t] name closure
# variables, which Python captures only when the annotations are evaluated eagerly.

import functools
import threading
from typing import Any, no_type_check

import numpy as np

import clpy
from clpy import Global, Local, int32, int64, uint, ulong
from clpy.algorithms._core import Input, Op, Place, as_input, element_type, resolve_op, tuning
from clpy.algorithms.bound import BoundLaunch
from clpy.algorithms.reductions import index_type
from clpy.algorithms.scan_striped import striped_kernel
from clpy.algorithms.scan_tiles import FROM_BITS, regs_kernel
from clpy.types.core import ScalarType, Type

WINDOW = 32  # predecessors a look-back step reads at once
_FROM_BITS = FROM_BITS


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def _serial_scan(t: Type, op: Op, items: int, incl: bool) -> Any:
    """The per-work-item step of both scan schemes: scan ``items`` elements of a local tile
    from ``b`` in place (inclusive or exclusive) and return their total."""
    combine, ITEMS = op.combine, items  # noqa: N806

    @clpy.func
    def serial_scan(buf: Local[t], b: int32, ident: t) -> t:
        run = ident
        for j in range(ITEMS):
            v = buf[b + j]
            if incl:
                run = combine(run, v)
                buf[b + j] = run
            else:
                buf[b + j] = run
                run = combine(run, v)
        return run

    return serial_scan


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def _tile_io(t: Type, wg: int, items: int) -> Any:
    """Tile loads and stores between global and local memory: ``vload4``/``vstore4`` for a
    full tile of 4-byte elements (the tile is a whole number of 4-vectors: ``wg`` is a
    multiple of 4), one element per work-item and step at the array's end."""
    WG, ITEMS, TILE = wg, items, wg * items  # noqa: N806
    VEC = t.size == 4 and TILE % 4 == 0 and isinstance(t, ScalarType)  # noqa: N806
    STEPS4 = -(-TILE // (4 * WG))  # noqa: N806

    @clpy.func
    def load_tile(x: Global[t], buf: Local[t], tile: int32, n: int64, ident: t) -> None:
        lid = clpy.get_local_id(0)
        base = int64(tile) * TILE
        if VEC and base + TILE <= n:
            base4 = int64(tile) * (TILE // 4)
            for k in range(STEPS4):
                v = k * WG + lid
                if v < TILE // 4:
                    clpy.vstore4(clpy.vload4(base4 + v, x), v, buf)
        else:
            for k in range(ITEMS):
                g = base + k * WG + lid
                buf[k * WG + lid] = x[g] if g < n else ident

    @clpy.func
    def store_tile(y: Global[t], buf: Local[t], tile: int32, n: int64) -> None:
        lid = clpy.get_local_id(0)
        base = int64(tile) * TILE
        if VEC and base + TILE <= n:
            base4 = int64(tile) * (TILE // 4)
            for k in range(STEPS4):
                v = k * WG + lid
                if v < TILE // 4:
                    clpy.vstore4(clpy.vload4(v, buf), base4 + v, y)
        else:
            for k in range(ITEMS):
                g = base + k * WG + lid
                if g < n:
                    y[g] = buf[k * WG + lid]

    return load_tile, store_tile


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def _lookback_kernel(
    t: ScalarType, op: Op, idx: ScalarType, wg: int, items: int, incl: bool
) -> Any:
    """Single-pass scan with a windowed decoupled look-back (module docstring)."""
    combine, OP, I, WG, ITEMS = op.combine, op.op, idx, wg, items  # noqa: N806
    W = min(WINDOW, wg)  # noqa: N806
    TILE, FROM = wg * items, _FROM_BITS[t]  # noqa: N806
    serial_scan = _serial_scan(t, op, items, incl)
    load_tile, store_tile = _tile_io(t, wg, items)

    @clpy.func
    def pack(flag: uint, v: t) -> ulong:
        return (ulong(flag) << 32) | ulong(clpy.as_uint(v))

    @clpy.kernel
    def scan_lookback(
        x: Global[t],
        y: Global[t],
        n: I,
        ident: t,
        status: Global[ulong],
        counter: Global[int32],
        epoch: uint,
        ntiles: int32,
    ):
        lid = clpy.get_local_id(0)
        buf = clpy.local_array(t, TILE)
        sh = clpy.local_array(t, 2)
        ticket = clpy.local_array(int32, 1)
        win = clpy.local_array(ulong, W)
        ctl = clpy.local_array(int32, 1)
        if lid == 0:
            ticket[0] = clpy.atomic_inc(counter, 0)
        clpy.barrier()
        tile = ticket[0]
        if lid == 0 and tile == ntiles - 1:
            clpy.atomic_xchg(counter, 0, 0)  # every ticket is taken: ready for the next launch
        load_tile(x, buf, tile, int64(n), ident)
        clpy.barrier()
        b = lid * ITEMS
        run = serial_scan(buf, b, ident)
        p = clpy.work_group_scan_exclusive(run, OP)
        if lid == WG - 1:
            sh[0] = combine(p, run)
        clpy.barrier()
        agg = sh[0]
        f_agg = epoch * 2 + 1
        f_pfx = epoch * 2 + 2
        if lid == 0:  # publish this tile's aggregate (tile 0: its prefix) at once
            clpy.atom_xchg(status, tile, pack(f_pfx if tile == 0 else f_agg, agg))
            if tile == 0:
                sh[1] = ident
        if tile > 0:
            # Window of W predecessors in local memory: lane L < W reads tile j - L.
            j = tile - 1
            prefix = ident
            done = 0
            while done == 0:
                if lid < W:
                    k = j - lid
                    win[lid] = pack(f_pfx, ident)  # before tile 0: an empty inclusive prefix
                    if k >= 0:
                        win[lid] = clpy.atom_or(status, k, ulong(0))
                clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
                if lid == 0:
                    i = 0
                    found = 0
                    while found == 0 and i < W:
                        s = win[i]
                        while uint(s >> 32) < f_agg:  # spin on this predecessor only
                            s = clpy.atom_or(status, j - i, ulong(0))
                        prefix = combine(FROM(uint(s & 0xFFFFFFFF)), prefix)
                        if uint(s >> 32) == f_pfx:
                            found = 1
                        i += 1
                    if found != 0:
                        clpy.atom_xchg(status, tile, pack(f_pfx, combine(prefix, agg)))
                        sh[1] = prefix
                    ctl[0] = found
                clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
                done = ctl[0]
                j -= W
        clpy.barrier()
        pre = combine(sh[1], p)
        for j in range(ITEMS):
            buf[b + j] = combine(pre, buf[b + j])
        clpy.barrier()
        store_tile(y, buf, tile, int64(n))

    return scan_lookback


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def _rts_kernels(t: Type, op: Op, idx: ScalarType, wg: int, items: int, incl: bool) -> Any:
    """Reduce-then-scan: (tile-run totals, scan of the totals, rescan with carry-in)."""
    combine, OP, I, WG, ITEMS = op.combine, op.op, idx, wg, items  # noqa: N806
    TILE = wg * items  # noqa: N806
    serial_scan = _serial_scan(t, op, items, incl)

    @clpy.kernel
    def scan_up(x: Global[t], part: Global[t], n: I, ident: t, tpg: int32):
        lid = clpy.get_local_id(0)
        g = clpy.get_group_id(0)
        acc = ident
        for tile in range(g * tpg, g * tpg + tpg):
            b = I(tile) * TILE + lid * ITEMS
            run = ident
            for j in range(ITEMS):
                if b + j < n:
                    run = combine(run, x[b + j])
            acc = combine(acc, clpy.work_group_reduce(run, OP))
        if lid == 0:
            part[g] = acc

    @clpy.kernel
    def scan_parts(part: Global[t], groups: int32, ident: t):
        lid = clpy.get_local_id(0)
        v = part[lid] if lid < groups else ident
        e = clpy.work_group_scan_exclusive(v, OP)
        if lid < groups:
            part[lid] = e

    @clpy.kernel
    def scan_down(x: Global[t], y: Global[t], n: I, ident: t, part: Global[t], tpg: int32):
        lid = clpy.get_local_id(0)
        g = clpy.get_group_id(0)
        buf = clpy.local_array(t, TILE)
        sh = clpy.local_array(t, 1)
        carry = part[g]
        for tile in range(g * tpg, g * tpg + tpg):
            base = I(tile) * TILE
            for k in range(ITEMS):
                gi = base + k * WG + lid
                buf[k * WG + lid] = x[gi] if gi < n else ident
            clpy.barrier()
            b = lid * ITEMS
            run = serial_scan(buf, b, ident)
            p = clpy.work_group_scan_exclusive(run, OP)
            if lid == WG - 1:
                sh[0] = combine(p, run)
            pre = combine(carry, p)
            for j in range(ITEMS):
                buf[b + j] = combine(pre, buf[b + j])
            clpy.barrier()
            for k in range(ITEMS):
                gi = base + k * WG + lid
                if gi < n:
                    y[gi] = buf[k * WG + lid]
            carry = combine(carry, sh[0])
            clpy.barrier()

    return scan_up, scan_parts, scan_down


class _LookbackState:
    """Per queue: the tiles' status words, the ticket counter and the launch epoch."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.status: Any = None
        self.counter: Any = None
        self.epoch = 0
        # id(_SinglePass) -> (BoundLaunch, the status array it holds, the _SinglePass)
        self.bound: dict[int, tuple[Any, ...]] = {}


_STATES: dict[Any, _LookbackState] = {}
_STATES_LOCK = threading.Lock()


def _state(place: Place) -> _LookbackState:
    key = (id(place.dev), int(place.cl_queue.int_ptr))
    with _STATES_LOCK:
        return _STATES.setdefault(key, _LookbackState())


def _whole_vectors(a: Any) -> bool:
    """A pyopencl array whose buffer can be passed as 4-vectors: no offset, 16-byte size."""
    return bool(getattr(a, "offset", 1) == 0 and a.base_data.size % 16 == 0)


_CAPPED: dict[Any, Any] = {}
MAXREG_OPTION = "-cl-nv-maxrregcount={}"  # NVIDIA's compiler option (tests swap in a -D)
# Later launches of a single-pass register-tile scan of the same length skip the launcher:
# a BoundLaunch (bound.py) with x, y and the epoch set per call. On by default since two
# H100 runs of session 5 (float32, 2^28, benchmarks/results/algorithms_h100_scan28_s5.md and
# algorithms_h100_s5.md): 2757 vs 2725 GB/s and 2663 vs 2477 GB/s for the launcher path.
BOUND_SCAN = True


def _launch_on(place: Place, maxreg: int) -> Any:
    """Where the tile kernel launches: ``place``, or with ``maxreg`` > 0 a variant of its
    device (same context and queue) built with ``-cl-nv-maxrregcount=maxreg`` (NVIDIA's
    compiler option: at most that many registers per work-item, so more groups stay
    resident; only the NVIDIA tuning sets it)."""
    if maxreg <= 0:
        return place.launch_on
    key = (id(place.dev), int(place.cl_queue.int_ptr), maxreg)
    with _STATES_LOCK:
        v = _CAPPED.get(key)
        if v is None:
            opts = (*place.dev.build_options, MAXREG_OPTION.format(maxreg))
            v = _CAPPED[key] = (place.dev, place.dev.variant(build_options=opts, queue=place.queue))
    return v[1]


def lookback_applies(place: Place, t: Type, tune: Any) -> bool:
    return bool(tune.lookback) and not place.is_sim and t in _FROM_BITS


def _striped(tn: Any, op: Op) -> bool:
    """Whether the tile is scan_striped.py's (4 vectors per work-item, lane-wise operators,
    groups that do not loop)."""
    return bool(
        tn.scan_layout == "striped"
        and op.vectorizable
        and not (tn.scan_loop > 0 and tn.scan_wgscan == "native")
    )


def tile_kernel(
    t: ScalarType, op: Op, idx: ScalarType, tn: Any, inclusive: bool, vecptr: bool
) -> tuple[Any, bool]:
    """The register tile kernel of scan_tiles.py for the tuning ``tn``, and whether its
    groups loop over tiles (one more argument: the number of groups)."""
    loop = tn.scan_loop > 0 and tn.scan_wgscan == "native"
    if _striped(tn, op):
        k = striped_kernel(
            t,
            op,
            idx,
            tn.scan_wg,
            inclusive,
            vecptr,
            tn.scan_lb,
            tn.scan_read,
            tn.scan_lookback,
            tn.scan_spec,
        )
        return k, False
    k = regs_kernel(
        t,
        op,
        idx,
        tn.scan_wg,
        tn.scan_vecs,
        inclusive,
        vecptr,
        tn.scan_wgscan,
        tn.scan_lb,
        loop,
        tn.scan_read,
        "serial" if loop else tn.scan_lookback,
        tn.scan_spec and not loop,
    )
    return k, loop


class _SinglePass:
    """A single-pass scan prepared for one (device, queue, type, operator, tuning, length):
    the kernel, its sizes and fixed arguments, where it launches, and the per-queue state
    (status words, ticket counter, epoch, bound launches)."""

    def __init__(
        self,
        place: Place,
        k: Any,
        wg: int,
        groups: int,
        ntiles: int,
        fixed: tuple[Any, ...],
        extra: tuple[Any, ...],
        on: Any,
        register_tile: bool,
    ) -> None:
        self.place, self.k, self.ntiles, self.on = place, k, ntiles, on
        self.launcher = k[(groups * wg,), (wg,)]
        self.fixed, self.extra = fixed, extra  # (n, ident), (groups,) when groups loop
        self.register_tile = register_tile
        self.st = _state(place)

    def run(self, xa: Any, ya: Any, distinct_buffers: bool) -> None:
        """Enqueue the scan of ``xa`` into ``ya``. The bound launch (bound.py) needs raw
        buffers that are not one buffer (one buffer takes the kernel variant without
        ``restrict``): ``distinct_buffers``."""
        st, place, ntiles = self.st, self.place, self.ntiles
        bindable = BOUND_SCAN and self.register_tile and distinct_buffers
        with st.lock:
            if st.status is None or st.status.shape[0] < ntiles:
                st.status = place.zeros(max(ntiles, 1024), np.uint64)
                if st.counter is None:
                    st.counter = place.zeros(1, np.int32)
            st.epoch = st.epoch + 1 if st.epoch < 2**30 else 1
            if st.epoch == 1:
                st.status.fill(0)
            epoch = np.uint32(st.epoch)
            key = id(self)
            hit = st.bound.get(key) if bindable else None
            if hit is not None and hit[1] is st.status:
                hit[0].launch(((0, xa), (1, ya), (6, epoch)))
                return
            n, ident = self.fixed
            args = (xa, ya, n, ident, st.status, st.counter, epoch, np.int32(ntiles), *self.extra)
            self.launcher(*args, device=self.on, wait=False)
            if bindable:
                if len(st.bound) > 64:
                    st.bound.clear()
                on = self.on if self.on is not place.launch_on else None
                b = BoundLaunch(self.launcher, args, place, on)
                if len(b.args) == len(args):  # one OpenCL argument per kernel argument
                    st.bound[key] = (b, st.status, self)  # self: its id stays unique


_PREPARED: dict[Any, _SinglePass] = {}


def _prepare_single_pass(
    place: Place,
    t: ScalarType,
    op: Op,
    inclusive: bool,
    tn: Any,
    n: int,
    vecptr: bool,
    items: int,
) -> _SinglePass:
    """The single-pass scan of ``n`` elements with tuning ``tn`` (module docstring)."""
    wg = tn.wg
    if tn.scan_vecs > 0:  # the register tile (scan_tiles.py, scan_striped.py)
        wg = tn.scan_wg
        tile = wg * 4 * (4 if _striped(tn, op) else tn.scan_vecs)
        idx = index_type(n, tile)
        k, loop = tile_kernel(t, op, idx, tn, inclusive, vecptr)
    else:
        tile = wg * items
        idx = index_type(n, tile)
        loop = False
        k = _lookback_kernel(t, op, idx, wg, items, inclusive)
    ntiles = -(-n // tile)
    groups = ntiles
    extra: tuple[Any, ...] = ()
    if loop:  # looping groups: as many as stay resident together, at most one per tile
        cus = place.dev.info.max_compute_units if place.dev.info else 1
        groups = max(1, min(ntiles, cus * tn.scan_loop))
        extra = (np.int32(groups),)
    on = _launch_on(place, tn.scan_maxreg if tn.scan_vecs > 0 else 0)
    fixed = (idx.dtype.type(n), op.host_identity(t))
    return _SinglePass(place, k, wg, groups, ntiles, fixed, extra, on, tn.scan_vecs > 0)


def scan_on(
    inp: Input,
    y: Any,
    t: Type,
    op: Op,
    inclusive: bool,
    tune: Any = None,
) -> None:
    """Scan ``inp`` into the device array ``y`` (which may be ``inp.data``)."""
    place = inp.place
    tn = tune or tuning(place.dev)
    n, wg = inp.count, tn.wg
    items = max(
        1,
        min(
            tn.items,
            (16384 // max(1, inp.dtype.itemsize * (inp.shape[1] if len(inp.shape) > 1 else 1)))
            // wg,
        ),
    )
    if lookback_applies(place, t, tn):
        assert isinstance(t, ScalarType)
        xa, ya = inp.data, y
        vecptr = tn.scan_vecs > 0 and n % 4 == 0 and _whole_vectors(xa) and _whole_vectors(ya)
        key = (
            id(place.dev),
            None if place.queue is None else place.queue.int_ptr,
            t,
            op,
            inclusive,
            tn,
            n,
            vecptr,
        )
        pr = _PREPARED.get(key)
        if pr is None:
            pr = _prepare_single_pass(place, t, op, inclusive, tn, n, vecptr, items)
            with _STATES_LOCK:
                if len(_PREPARED) > 256:  # many lengths: forget the oldest
                    for old in list(_PREPARED)[:128]:
                        del _PREPARED[old]
                _PREPARED[key] = pr
        if vecptr:  # the buffers themselves, typed as 4-vectors (16-byte accesses)
            xa, ya = xa.base_data, ya.base_data
        pr.run(xa, ya, vecptr and xa.int_ptr != ya.int_ptr)
        return
    tile = wg * items
    ntiles = -(-n // tile)
    idx = index_type(n, tile)
    ident = op.host_identity(t)
    groups = max(1, min(wg, tn.groups, ntiles))
    tpg = -(-ntiles // groups)
    groups = -(-ntiles // tpg)
    part = place.scratch("scan.part", (groups, *inp.shape[1:]), inp.dtype)
    up, parts, down = _rts_kernels(t, op, idx, wg, items, inclusive)
    up[(groups * wg,), (wg,)](inp.data, part, n, ident, tpg, device=place.launch_on, wait=False)
    parts[(wg,), (wg,)](part, groups, ident, device=place.launch_on, wait=False)
    down[(groups * wg,), (wg,)](
        inp.data, y, n, ident, part, tpg, device=place.launch_on, wait=False
    )


def scan(x: Any, op: Any = "+", inclusive: bool = True, out: Any = None, device: Any = None) -> Any:
    """The running combination of ``x`` with ``op`` (``"+"`` ... or a ``@clpy.reduction``):
    ``y[i] = x[0] op ... op x[i]`` (inclusive) or ``x[0] op ... op x[i - 1]`` starting from the
    identity (exclusive). ``out``: an array of the same kind, shape and dtype to write into
    (``x`` itself for an in-place scan). The result has ``x``'s kind: NumPy, DeviceArray or
    pyopencl array (on ``x``'s device).

    >>> clpy.algorithms.scan(np.array([1, 2, 3, 4], np.int32))
    array([ 1,  3,  6, 10], dtype=int32)
    """
    inp = as_input(x, device)
    t = element_type(inp.dtype, inp.shape, op)
    o = resolve_op(op, t)
    host_out = None
    if out is None:
        y = inp.place.empty(inp.shape, inp.dtype)
    elif inp.kind == "numpy":
        if not isinstance(out, np.ndarray) or out.shape != inp.shape or out.dtype != inp.dtype:
            raise ValueError(f"out: expected a NumPy array of {inp.dtype} {inp.shape}")
        host_out, y = out, inp.place.empty(inp.shape, inp.dtype)
    else:
        oi = as_input(out, device, "out", inp.place)
        if oi.kind != inp.kind or oi.shape != inp.shape or oi.dtype != inp.dtype:
            raise ValueError(f"out: expected a {inp.kind} array of {inp.dtype} {inp.shape}")
        y = oi.data
    if inp.count:
        scan_on(inp, y, t, o, inclusive)
    if host_out is not None:
        host_out[...] = y.get()
        return host_out
    return inp.result(y)


__all__ = ["scan", "scan_on", "tile_kernel"]
