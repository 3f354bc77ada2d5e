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
types (reduce, then scan, below) the tile is ``wg * items`` elements scanned in local
memory: coalesced loads into a local array, each work-item scans its ``items`` consecutive
elements serially, ``clpy.work_group_scan_exclusive`` combines the work-items' totals, and the
tile is written back coalesced. Order is preserved everywhere, so the operator needs only be
associative (a user combiner need not commute). (Session 2's single-pass tile staged in local
memory, ``scan_vecs = 0``, was pruned in session 6: 0.70x copy on the H100 against the
striped register tile's 0.96x; scan_tiles.py lists the other pruned variants.)

How tiles learn the combination of all earlier tiles:

**Single pass, decoupled look-back** (Merrill & Garland, "Single-pass Parallel Prefix Scan
with Decoupled Look-back", 2016), used on GPUs for 4-byte scalars: one read and one write of
the array. Each tile publishes, in one 64-bit status word per tile (flag in the high half, the
value's bits in the low half, so one atomic access carries both and no fence is needed between
a flag and its value), first its aggregate and, once it knows it, its inclusive prefix. A
tile looks back (scan_lookback.py) either from one work-item, which reads ``scan_lb``
predecessors' words with independent atomic reads per step (no barrier;
``scan_lookback="serial"``), or windowed, as in CUB (``"window"``, ``"early"``): ``WINDOW``
(32) work-items each read one predecessor's word, spinning in parallel only on a word that
holds neither value yet, find the nearest inclusive prefix with a local ``atomic_min``, and
work-item 0 combines the window from the nearest predecessor to that prefix (in tile order:
only associativity is needed); without a prefix in the window, the next window is read.
(A sub-group version, sub_group_any/reduce/scan over lanes, measured 0.39x
copy on an H100, whose driver has no native sub-groups so clpy lowers them to work-group
collectives, and hung intermittently on PoCL under pytest: removed.) Flags carry a
per-launch epoch (``2e + 1``: aggregate, ``2e + 2``: prefix), so the status array is never
cleared; the tile counter is reset by the group that takes the last ticket.

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
and one that holds no aggregate is read again. Neither holds on the simulator, which
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
from clpy import Global, Local, int32
from clpy.algorithms._core import (
    Input,
    Op,
    Place,
    as_input,
    element_type,
    queue_cache,
    resolve_op,
    tuning,
)
from clpy.algorithms.bound import BoundLaunch
from clpy.algorithms.reductions import index_type
from clpy.algorithms.scan_striped import striped_kernel
from clpy.algorithms.scan_tiles import FROM_BITS, regs_kernel
from clpy.types.core import ScalarType, Type


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def _serial_scan(t: Type, op: Op, items: int, incl: bool) -> Any:
    """The per-work-item step of reduce-then-scan: scan ``items`` elements of a local tile
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


def _state(place: Place) -> _LookbackState:
    """The look-back state of ``place``'s queue (in its ``QueueCache``)."""
    return queue_cache(place).get(("lookback",), _LookbackState)


def _whole_vectors(a: Any) -> bool:
    """A pyopencl array whose buffer can be passed as 4-vectors: no offset, 16-byte size."""
    return bool(getattr(a, "offset", 1) == 0 and a.base_data.size % 16 == 0)


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
    opts = (*place.dev.build_options, MAXREG_OPTION.format(maxreg))
    return queue_cache(place).get(
        ("maxreg", opts), lambda: place.dev.variant(build_options=opts, queue=place.queue)
    )


def lookback_applies(place: Place, t: Type, tune: Any) -> bool:
    return bool(tune.lookback) and not place.is_sim and t in FROM_BITS


def _striped(tn: Any, op: Op) -> bool:
    """Whether the tile is scan_striped.py's (4 vectors per work-item, lane-wise operators)."""
    return bool(tn.scan_layout == "striped" and op.vectorizable)


def tile_kernel(
    t: ScalarType, op: Op, idx: ScalarType, tn: Any, inclusive: bool, vecptr: bool
) -> Any:
    """The register tile kernel (scan_striped.py or scan_tiles.py) for the tuning ``tn``."""
    if tn.scan_vecs < 1:
        raise ValueError(f"scan_vecs: the register tile needs 1 or more, not {tn.scan_vecs}")
    if _striped(tn, op):
        return striped_kernel(
            t,
            op,
            idx,
            tn.scan_wg,
            inclusive,
            vecptr,
            tn.scan_lb,
            tn.scan_read,
            tn.scan_lookback,
        )
    return regs_kernel(
        t,
        op,
        idx,
        tn.scan_wg,
        tn.scan_vecs,
        inclusive,
        vecptr,
        tn.scan_wgscan,
        tn.scan_lb,
        tn.scan_read,
        tn.scan_lookback,
    )


class _SinglePass:
    """A single-pass scan prepared for one (device, queue, type, operator, tuning, length):
    the kernel, its sizes and fixed arguments, where it launches, and the per-queue state
    (status words, ticket counter, epoch, bound launches)."""

    def __init__(
        self,
        place: Place,
        k: Any,
        wg: int,
        ntiles: int,
        fixed: tuple[Any, ...],
        on: Any,
    ) -> None:
        self.place, self.k, self.ntiles, self.on = place, k, ntiles, on
        self.launcher = k[(ntiles * wg,), (wg,)]  # one group per tile
        self.fixed = fixed  # (n, ident)
        self.st = _state(place)

    def run(self, xa: Any, ya: Any, distinct_buffers: bool) -> None:
        """Enqueue the scan of ``xa`` into ``ya``. The bound launch (bound.py) needs raw
        buffers that are not one buffer (one buffer takes the kernel variant without
        ``restrict``): ``distinct_buffers``."""
        st, place, ntiles = self.st, self.place, self.ntiles
        bindable = BOUND_SCAN and distinct_buffers
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
            args = (xa, ya, n, ident, st.status, st.counter, epoch, np.int32(ntiles))
            self.launcher(*args, device=self.on, wait=False)
            if bindable:
                if len(st.bound) > 64:
                    st.bound.clear()
                on = self.on if self.on is not place.launch_on else None
                b = BoundLaunch(self.launcher, args, place, on)
                if len(b.args) == len(args):  # one OpenCL argument per kernel argument
                    st.bound[key] = (b, st.status, self)  # self: its id stays unique


def _prepare_single_pass(
    place: Place,
    t: ScalarType,
    op: Op,
    inclusive: bool,
    tn: Any,
    n: int,
    vecptr: bool,
) -> _SinglePass:
    """The single-pass scan of ``n`` elements with tuning ``tn`` (module docstring): the
    register tile of scan_striped.py or scan_tiles.py."""
    wg = tn.scan_wg
    tile = wg * 4 * (4 if _striped(tn, op) else tn.scan_vecs)
    idx = index_type(n, tile)
    k = tile_kernel(t, op, idx, tn, inclusive, vecptr)
    fixed = (idx.dtype.type(n), op.host_identity(t))
    return _SinglePass(place, k, wg, -(-n // tile), fixed, _launch_on(place, tn.scan_maxreg))


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
    if lookback_applies(place, t, tn):
        assert isinstance(t, ScalarType)
        xa, ya = inp.data, y
        vecptr = n % 4 == 0 and _whole_vectors(xa) and _whole_vectors(ya)
        key = ("scan", t, op, inclusive, tn, n, vecptr)
        pr = queue_cache(place).get(
            key, lambda: _prepare_single_pass(place, t, op, inclusive, tn, n, vecptr)
        )
        if vecptr:  # the buffers themselves, typed as 4-vectors (16-byte accesses)
            xa, ya = xa.base_data, ya.base_data
        pr.run(xa, ya, vecptr and xa.int_ptr != ya.int_ptr)
        return
    width = inp.dtype.itemsize * (inp.shape[1] if len(inp.shape) > 1 else 1)
    items = max(1, min(tn.items, (16384 // max(1, width)) // wg))  # a tile within 16 KiB
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
