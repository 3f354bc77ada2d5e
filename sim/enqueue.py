"""Device-side enqueue in the simulator (OpenCL C 2.0 spec §1.13.17).

Schedule. The spec lets a child start no earlier than its flag says (footnote 64): after the
parent kernel (``CLK_ENQUEUE_FLAGS_WAIT_KERNEL``), after the enqueuing work-group
(``WAIT_WORK_GROUP``), or any time (``NO_WAIT``). The simulator starts every child at the
latest of these points, when the parent kernel has finished; that is a schedule all three
flags allow, and it keeps results independent of how work-group batches are spread over
threads. Commands run one at a time, in this order: a launch's enqueues in work-item order
(work-group, then local id), each work-item's in program order; the commands of a child after those
already queued. A command whose wait list holds an event not yet complete waits its turn; one
waiting on a failed event (negative status) does not run and its event takes that status.
A command's event completes when its kernel and every command it enqueued, transitively,
have (spec "Determining when a parent kernel has finished execution").

Children run with the checkers on, in launches of their own: bounds, races between the
child's work-items, barriers ... (a race between a child and its parent is not reported:
they never overlap here). A child's work-items may enqueue again, up to
``clpy.sim.config(enqueue_depth=...)`` levels below the host's launch; deeper is a
``SimulationError`` naming the enqueue. A ``ndrange`` without a local size runs with work-groups
of ``min(global size, 64)`` work-items along the first dimension and 1 along the others.

Values: queues, events and ND-ranges are ids (sim/devqueue.py). Failures are returned as the
specific ``CLK_*`` codes (what a program built with ``-g`` gets). Creating the commands is a
loop over the enqueuing work-items (each makes one launch, which costs far more).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.ir.nodes import Function
from clpy.types.core import OpaqueType, PointerType, ScalarType, Type, VectorType
from clpy.types.enqueue import BlockType
from clpy.types.structs import StructType
from clpy_sim import devqueue
from clpy_sim.devqueue import (
    CL_COMPLETE,
    CL_QUEUED,
    CLK_INVALID_ARG_SIZE,
    CLK_INVALID_EVENT_WAIT_LIST,
    CLK_INVALID_NDRANGE,
    CLK_INVALID_QUEUE,
    CLK_SUCCESS,
    DEFAULT_LOCAL,
    DEFAULT_QUEUE,
    Command,
    DeviceQueue,
    call_seq,
    flat,
    lane_order,
    new_events,
    queue_of,
    write_profile,
)
from clpy_sim.frame import Frame, PtrVal, Sel, select_lanes
from clpy_sim.memory import GlobalMem, make_local
from clpy_sim.plan import get_plan
from clpy_sim.printf import flush_prints
from clpy_sim.races_global import GlobalShadow
from clpy_sim.state import Batch, Launch

if TYPE_CHECKING:
    from clpy_sim.call import Call


_PER_GROUP = ("local", "private")  # memory a child cannot reach


@dataclass
class _Local:
    """A ``local void *`` block argument: ``count`` elements of the child's ``Local[T]``."""

    count: int


def _lanes_of(v: Any, t: Type, shape: tuple[int, int]) -> Any:
    """A lane value as per-lane columns (flat), to pick one work-item's value from."""
    if isinstance(t, PointerType):
        return PtrVal(v.mem, flat(v.off, shape))
    if isinstance(t, VectorType):
        a = np.asarray(v)
        return np.broadcast_to(a, (a.shape[0], *shape)).reshape(a.shape[0], -1)
    if isinstance(t, StructType):
        return {name: _lanes_of(v[name], ft, shape) for name, ft in t.fields}
    if isinstance(t, (ScalarType, OpaqueType)):
        return flat(v, shape)
    return v  # images, samplers, pipes: one object


def _pick(cols: Any, t: Type, k: int) -> Any:
    if isinstance(t, PointerType):
        return PtrVal(cols.mem, np.int64(cols.off[k]))
    if isinstance(t, VectorType):
        return np.array(cols[:, k]).reshape(t.n, 1, 1)
    if isinstance(t, StructType):
        return {name: _pick(cols[name], ft, k) for name, ft in t.fields}
    if isinstance(t, ScalarType):
        return t.dtype.type(cols[k])
    if isinstance(t, OpaqueType):
        return np.int64(cols[k])
    return cols


# ----------------------------------------------------------------------------- enqueue


def _wait_list(fr: Frame, n: Any, wl: Any, call: Call) -> list[list[int]]:
    """Per lane (flat), the events of its wait list."""
    shape = fr.shape
    counts = flat(n, shape)
    out: list[list[int]] = [[] for _ in range(counts.size)]
    if not isinstance(wl, PtrVal):
        return out
    for j in range(int(counts.max(initial=0))):
        off = wl.off + np.minimum(j, np.maximum(counts.reshape(shape) - 1, 0))
        ev = flat(wl.mem.load(fr, off, call.loc), shape)
        for k in np.flatnonzero(counts > j):
            out[k].append(int(ev[k]))
    return out


def _enqueue_kernel(call: Call, fr: Frame, args: list[Any]) -> Any:
    params = call.params
    at = next(i for i, t in enumerate(params) if isinstance(t, BlockType))
    block, caps = args[at]
    fn = block.child.get()
    sizes = [flat(s, fr.shape) for s in args[at + 1 :]]
    waits = _wait_list(fr, args[3], args[4], call) if at == 6 else None
    ret = args[5] if at == 6 and isinstance(args[5], PtrVal) else None
    cap_types = [p.type for p, (kind, _) in zip(fn.params, block.child_args()) if kind == "capture"]
    cols = [_lanes_of(v, t, fr.shape) for v, t in zip(caps, cap_types)]
    result, events = _commands(call, fr, args, fn, block, cols, cap_types, sizes, waits, ret)
    if ret is not None:
        _store_events(fr, ret, events, call)
    return result.reshape(fr.shape)


def _commands(
    call: Call,
    fr: Frame,
    args: list[Any],
    fn: Function | None,
    block: Any,
    cols: list[Any],
    cap_types: list[Type],
    sizes: list[np.ndarray],
    waits: list[list[int]] | None,
    ret: PtrVal | None,
) -> tuple[np.ndarray, np.ndarray]:
    st = fr.batch.launch
    dq = queue_of(st)
    depth = st.enqueue_depth + 1
    if depth > st.cfg.enqueue_depth:
        st.fail_lanes(
            fr,
            True,
            "unsupported",
            f"{call.name}: device-side enqueue nested {depth} levels deep, more than "
            f"clpy.sim.config(enqueue_depth={st.cfg.enqueue_depth}) allows",
            call.loc,
        )
    seq = call_seq(dq, fr)
    wids, order = lane_order(fr)
    qs = flat(args[0], fr.shape)
    nds = flat(args[2], fr.shape)
    n = wids.size
    result = np.zeros(n, np.int32)
    events = np.zeros(n, np.int64)
    parent = st.command
    for k in order:
        code, geom = _check_lane(dq, int(qs[k]), int(nds[k]), [int(s[k]) for s in sizes], waits, k)
        if code != CLK_SUCCESS:
            result[k] = code
            continue
        values: list[Any] = []
        if fn is not None:
            ci = 0
            for p, (kind, li) in zip(fn.params, block.child_args()):
                if kind == "local":
                    t = p.type
                    assert isinstance(t, PointerType)
                    values.append(_Local(max(1, int(sizes[li][k]) // max(1, t.elem.size))))
                else:
                    v = _pick(cols[ci], cap_types[ci], k)
                    if isinstance(v, PtrVal) and getattr(v.mem, "space", "") in _PER_GROUP:
                        st.fail(
                            "unsupported",
                            f"{call.name}: a generic pointer captured by the block points to "
                            f"{v.mem.describe()}, which the child cannot use (spec §1.13.17)",
                            call.loc,
                            int(wids[k]),
                        )
                    values.append(v)
                    ci += 1
        eid = 0
        if ret is not None:
            eid = int(new_events(dq, 1, CL_QUEUED, False)[0])
            events[k] = eid
        cmd = Command(call.loc, fn, geom, values, waits[k] if waits else [], eid, depth, parent)
        if parent is not None:
            parent.outstanding += 1
        dq.stage(st, int(wids[k]), seq, cmd)
    return result, events


def _check_lane(
    dq: DeviceQueue, q: int, nd: int, sizes: list[int], waits: list[list[int]] | None, k: int
) -> tuple[int, Any]:
    if q != DEFAULT_QUEUE:
        return CLK_INVALID_QUEUE, None
    desc = dq.ndrange(nd) if nd >= 0 else None
    if desc is None:
        return CLK_INVALID_NDRANGE, None
    dims, v = desc
    off, gs, ls = v[:dims], v[dims : 2 * dims], v[2 * dims :]
    if any(g <= 0 for g in gs) or any(x < 0 for x in ls):
        return CLK_INVALID_NDRANGE, None
    if all(x == 0 for x in ls):
        ls = [min(gs[0], DEFAULT_LOCAL)] + [1] * (dims - 1)
    elif any(x == 0 for x in ls):
        return CLK_INVALID_NDRANGE, None
    if any(s <= 0 for s in sizes):
        return CLK_INVALID_ARG_SIZE, None
    if waits is not None:
        for e in waits[k]:
            ev = dq.events.get(e)
            if ev is None or ev.refs <= 0:
                return CLK_INVALID_EVENT_WAIT_LIST, None
    return CLK_SUCCESS, (tuple(gs), tuple(ls), tuple(off))


def _store_events(fr: Frame, ret: PtrVal, events: np.ndarray, call: Call) -> None:
    made = events.reshape(fr.shape) != 0
    sel = select_lanes(made, fr.shape)
    if sel is False:
        return
    if sel is True:
        ret.mem.store(fr, ret.off, events.reshape(fr.shape), call.loc)
        return
    assert isinstance(sel, Sel)
    off = sel.gather(np.broadcast_to(ret.off, fr.shape))
    ret.mem.store(fr.sub(sel), off, sel.gather(events.reshape(fr.shape)), call.loc)


def _enqueue_marker(call: Call, fr: Frame, args: list[Any]) -> Any:
    waits = _wait_list(fr, args[1], args[2], call)
    ret = args[3] if isinstance(args[3], PtrVal) else None
    st = fr.batch.launch
    dq = queue_of(st)
    seq = call_seq(dq, fr)
    wids, order = lane_order(fr)
    qs = flat(args[0], fr.shape)
    result = np.zeros(wids.size, np.int32)
    events = np.zeros(wids.size, np.int64)
    for k in order:
        if int(qs[k]) != DEFAULT_QUEUE:
            result[k] = CLK_INVALID_QUEUE
            continue
        if any((ev := dq.events.get(e)) is None or ev.refs <= 0 for e in waits[k]):
            result[k] = CLK_INVALID_EVENT_WAIT_LIST
            continue
        eid = int(new_events(dq, 1, CL_QUEUED, False)[0]) if ret is not None else 0
        events[k] = eid
        cmd = Command(call.loc, None, ((), (), ()), [], waits[k], eid, st.enqueue_depth, None)
        dq.stage(st, int(wids[k]), seq, cmd)
    if ret is not None:
        _store_events(fr, ret, events, call)
    return result.reshape(fr.shape)


# ----------------------------------------------------------------------------- running


def run_enqueued(st: Launch) -> None:
    """After the host's launch ``st``: run what its work-items enqueued, and what those
    enqueued, until the queue is empty (see the module docstring for the order)."""
    dq = st.device_queue
    if dq is None or st.enqueue_depth:
        return
    dq.flush_staged(st)
    while dq.fifo:
        pos = next((i for i, c in enumerate(dq.fifo) if _ready(dq, c)), None)
        if pos is None:
            cmd = dq.fifo[0]
            st.fail(
                "unsupported",
                "device-side enqueue: the queued commands wait for events that never "
                "complete (a user event never set with set_user_event_status?)",
                cmd.loc,
            )
            return
        cmd = dq.fifo.pop(pos)
        failed = next((dq.events[e].status for e in cmd.wait if dq.events[e].status < 0), None)
        if failed is not None:
            _complete(dq, cmd, failed)
            continue
        t0 = time.perf_counter_ns()
        if cmd.fn is not None:
            _run_child(st, dq, cmd)
        if cmd.event:
            ev = dq.events[cmd.event]
            ev.times = (t0, time.perf_counter_ns())
        _done(dq, cmd)


def _ready(dq: DeviceQueue, cmd: Command) -> bool:
    return all(dq.events[e].status <= CL_COMPLETE for e in cmd.wait)


def _done(dq: DeviceQueue, cmd: Command | None) -> None:
    """One part of ``cmd`` (itself or a child) finished: complete it when nothing is left."""
    while cmd is not None:
        cmd.outstanding -= 1
        if cmd.outstanding > 0:
            return
        _complete(dq, cmd, CL_COMPLETE)
        cmd = cmd.parent


def _complete(dq: DeviceQueue, cmd: Command, status: int) -> None:
    if cmd.event:
        ev = dq.events[cmd.event]
        ev.status = status
        if status == CL_COMPLETE:
            write_profile(ev)
    if status != CL_COMPLETE and cmd.parent is not None:
        _done(dq, cmd.parent)


def _run_child(root: Launch, dq: DeviceQueue, cmd: Command) -> None:
    fn = cmd.fn
    assert fn is not None
    gs, ls, off = cmd.geometry
    st = Launch(root.cfg, gs, ls, off)
    st.device_queue = dq
    st.enqueue_depth = cmd.depth
    st.command = cmd
    plan = get_plan(fn, root.cfg.checks)
    fixed: dict[Any, Any] = {}
    locals_: list[tuple[Any, Type, int]] = []
    rebound: dict[int, Any] = {}
    for p, v in zip(fn.params, cmd.values):
        if isinstance(v, _Local):
            t = p.type
            assert isinstance(t, PointerType)
            locals_.append((p, t.elem, v.count))
        elif isinstance(v, PtrVal):
            fixed[p] = PtrVal(_rebind(st, v.mem, p.name in fn.written, rebound), v.off)
        else:
            fixed[p] = v
    W = st.W
    per_batch = max(1, root.cfg.max_lanes // W)
    llid = np.arange(W, dtype=np.int64)[None, :]
    try:
        with np.errstate(all="ignore"):
            for gfirst in range(0, st.total_groups, per_batch):
                G = min(per_batch, st.total_groups - gfirst)
                batch = Batch(st, gfirst, G)
                frame = Frame(batch, (G, W), np.arange(G, dtype=np.int64)[:, None], llid)
                frame.env.update(fixed)
                for p, elem, count in locals_:
                    lm = make_local(st, p.name, elem, count, G)
                    batch.locals[p] = lm
                    frame.env[p] = PtrVal(lm, np.int64(0))
                if st.uniform:
                    plan.body(frame)
                else:
                    active = select_lanes(st.active_lanes(gfirst, G), frame.shape)
                    plan.body(frame if active is True else frame.sub(active))  # type: ignore[arg-type]
    finally:
        flush_prints(st)
    dq.flush_staged(st)


def _rebind(st: Launch, mem: Any, written: bool, done: dict[int, Any]) -> Any:
    """The parent's global memory seen from the child's launch (same data; the child's own
    bounds reports and race shadow)."""
    new = done.get(id(mem))
    if new is None:
        if not hasattr(mem, "data") or not hasattr(mem, "elem"):
            return mem
        new = type(mem)(mem.name, mem.elem, mem.data, st)
        if isinstance(new, GlobalMem) and written and "races" in st.checks:
            new.shadow = GlobalShadow(st, new.count, new)
        done[id(mem)] = new
    return new


# ----------------------------------------------------------------------------- queries


def _query(kind: str) -> Any:
    def impl(call: Call, fr: Frame, args: list[Any]) -> Any:
        cfg = fr.batch.launch.cfg
        if kind == "wg":
            return np.uint32(cfg.max_work_group_size)
        if kind == "multiple":
            return np.uint32(min(cfg.sub_group_size, cfg.max_work_group_size))
        dq = queue_of(fr.batch.launch)
        nds = flat(args[0], fr.shape)
        out = np.zeros(nds.size, np.uint32)
        for k, nid in enumerate(nds):
            desc = dq.ndrange(int(nid))
            if desc is None:
                continue
            dims, v = desc
            ls = v[2 * dims :]
            items = int(np.prod(ls)) if all(ls) else min(v[dims], DEFAULT_LOCAL)
            sg = min(cfg.sub_group_size, items)
            out[k] = sg if kind == "sg_size" else -(-items // sg)
        return out.reshape(fr.shape)

    return impl


IMPLS: dict[str, Any] = {
    **devqueue.IMPLS,
    "enqueue_kernel": _enqueue_kernel,
    "enqueue_marker": _enqueue_marker,
    "get_default_queue": lambda call, fr, args: np.int64(DEFAULT_QUEUE),
    "get_kernel_work_group_size": _query("wg"),
    "get_kernel_preferred_work_group_size_multiple": _query("multiple"),
    "get_kernel_max_sub_group_size_for_ndrange": _query("sg_size"),
    "get_kernel_sub_group_count_for_ndrange": _query("sg_count"),
}
