"""The simulator's default device queue (OpenCL C 2.0 spec §1.13.17): ND-range descriptors,
events and the commands work-items enqueue, shared by a host launch and its children
(``Launch.device_queue``); the built-ins on ND-ranges and events. sim/enqueue.py makes and
runs the commands.

Queues, events and ND-ranges are int64 ids, as every opaque value in the simulator;
``get_default_queue()`` is 1 (``CLK_NULL_QUEUE`` is 0). An ND-range id indexes the table of
descriptors the ``ndrange_*`` calls made, one per work-item. Events made by parallel batches get
ids in any order; programs only compare them with nothing (opaque), so results do not depend
on it. Misuse the spec leaves undefined (an invalid event, a status that is neither
``CL_COMPLETE`` nor negative) is a ``SimulationError`` naming the call.
"""

from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.ir.nodes import Function, Loc
from clpy_sim.frame import Frame
from clpy_sim.state import Launch, frame_wids

if TYPE_CHECKING:
    from clpy_sim.call import Call

_LOCK = threading.Lock()
DEFAULT_QUEUE = 1
CL_COMPLETE, CL_SUBMITTED, CL_QUEUED = 0, 2, 3
CLK_SUCCESS = 0
CLK_INVALID_QUEUE, CLK_INVALID_NDRANGE, CLK_INVALID_EVENT_WAIT_LIST = -102, -160, -57
CLK_INVALID_ARG_SIZE = -51
DEFAULT_LOCAL = 64


@dataclass
class Event:
    status: int
    user: bool = False
    refs: int = 1
    times: tuple[int, int] = (0, 0)
    profile_to: list[tuple[np.ndarray, int]] = field(default_factory=list)


@dataclass
class Command:
    loc: Loc
    fn: Function | None  # None: a marker
    geometry: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]  # global, local, offset
    values: list[Any]
    wait: list[int]
    event: int
    depth: int
    parent: Command | None
    outstanding: int = 1  # itself, plus each child command not yet complete


class DeviceQueue:
    """The default device queue of one host launch: ND-ranges, events and queued commands,
    shared by the launches of its children."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ndranges: list[tuple[int, int, list[np.ndarray]]] = []  # (base, dims, columns)
        self.bases: list[int] = []
        self.next_id = 1
        self.events: dict[int, Event] = {}
        self.fifo: list[Command] = []
        self.staged: dict[int, list[tuple[int, int, Command]]] = {}  # id(launch) -> keyed
        self.seq: dict[tuple[int, int], int] = {}

    def ids(self, n: int) -> int:
        with self.lock:
            base = self.next_id
            self.next_id += n
        return base

    def ndrange(self, nid: int) -> tuple[int, list[int]] | None:
        """(dims, [offsets..., globals..., locals...]) of ND-range ``nid``."""
        k = bisect.bisect_right(self.bases, nid) - 1
        if k < 0:
            return None
        base, dims, cols = self.ndranges[k]
        i = nid - base
        if i >= cols[0].size:
            return None
        return dims, [int(c[i]) for c in cols]

    def stage(self, st: Launch, wid: int, seq: int, cmd: Command) -> None:
        with self.lock:
            self.staged.setdefault(id(st), []).append((wid, seq, cmd))

    def flush_staged(self, st: Launch) -> None:
        """A launch ended: its commands join the queue in work-item, then program order."""
        for _, _, cmd in sorted(self.staged.pop(id(st), []), key=lambda t: (t[0], t[1])):
            self.fifo.append(cmd)


def queue_of(st: Launch) -> DeviceQueue:
    with _LOCK:
        dq = st.device_queue
        if dq is None:
            dq = st.device_queue = DeviceQueue()
    assert isinstance(dq, DeviceQueue)
    return dq


def flat(v: Any, shape: tuple[int, int]) -> np.ndarray:
    return np.broadcast_to(np.asarray(v), shape).ravel()


def call_seq(dq: DeviceQueue, fr: Frame) -> int:
    key = (id(fr.batch.launch), fr.batch.gfirst)
    with dq.lock:
        n = dq.seq.get(key, 0)
        dq.seq[key] = n + 1
    return n


def lane_order(fr: Frame) -> tuple[np.ndarray, np.ndarray]:
    wids = flat(frame_wids(fr), fr.shape)
    order = np.argsort(wids, kind="stable")
    return wids, order


def _ndrange_impl(dims: int) -> Any:
    def impl(call: Call, fr: Frame, args: list[Any]) -> Any:
        shape = fr.shape
        n = shape[0] * shape[1]
        cols = [flat(a, shape).astype(np.int64) for a in args]
        zero = np.zeros(n, np.int64)
        if len(cols) == dims:  # global only
            cols = [zero] * dims + cols + [zero] * dims
        elif len(cols) == 2 * dims:  # global, local
            cols = [zero] * dims + cols
        dq = queue_of(fr.batch.launch)
        base = dq.ids(n)
        with dq.lock:
            k = bisect.bisect_right(dq.bases, base)
            dq.bases.insert(k, base)
            dq.ndranges.insert(k, (base, dims, cols))
        return (base + np.arange(n, dtype=np.int64)).reshape(shape)

    return impl


def new_events(dq: DeviceQueue, n: int, status: int, user: bool) -> np.ndarray:
    base = dq.ids(n)
    with dq.lock:
        for i in range(n):
            dq.events[base + i] = Event(status, user)
    return base + np.arange(n, dtype=np.int64)


def _create_user_event(call: Call, fr: Frame, args: list[Any]) -> Any:
    dq = queue_of(fr.batch.launch)
    return new_events(dq, fr.size, CL_SUBMITTED, True).reshape(fr.shape)


def _event_lanes(fr: Frame, e: Any) -> list[int]:
    wids, order = lane_order(fr)
    ids = flat(e, fr.shape)
    return [int(ids[k]) for k in order]


def _bad_event(call: Call, fr: Frame, what: str) -> None:
    fr.batch.launch.fail("unsupported", f"{call.name}: {what}", call.loc)


def _retain(call: Call, fr: Frame, args: list[Any]) -> Any:
    dq = queue_of(fr.batch.launch)
    for eid in _event_lanes(fr, args[0]):
        ev = dq.events.get(eid)
        if ev is None or ev.refs <= 0:
            _bad_event(call, fr, f"event {eid} is not a valid event")
        else:
            ev.refs += 1 if call.name == "retain_event" else -1
    return None


def _is_valid(call: Call, fr: Frame, args: list[Any]) -> Any:
    dq = queue_of(fr.batch.launch)
    ids = flat(args[0], fr.shape)
    ok = [bool((ev := dq.events.get(int(i))) is not None and ev.refs > 0) for i in ids]
    return np.array(ok, dtype=bool).reshape(fr.shape)


def _set_status(call: Call, fr: Frame, args: list[Any]) -> Any:
    dq = queue_of(fr.batch.launch)
    status = flat(args[1], fr.shape)
    _, order = lane_order(fr)
    ids = flat(args[0], fr.shape)
    for k in order:
        ev = dq.events.get(int(ids[k]))
        s = int(status[k])
        if ev is None or not ev.user:
            _bad_event(call, fr, "the event is not a user event (create_user_event)")
        elif s != CL_COMPLETE and s >= 0:
            _bad_event(call, fr, f"status {s}: set CL_COMPLETE or an error (< 0)")
        else:
            assert ev is not None
            ev.status = s
    return None


def _profiling(call: Call, fr: Frame, args: list[Any]) -> Any:
    dq = queue_of(fr.batch.launch)
    ids = flat(args[0], fr.shape)
    p = args[2]
    offs = flat(p.off, fr.shape)
    idx = p.mem.element_indices(fr, p.off + 1, call.loc)  # bounds: two 64-bit values
    del idx
    for k in lane_order(fr)[1]:
        ev = dq.events.get(int(ids[k]))
        if ev is None:
            _bad_event(call, fr, "not an event returned by enqueue_kernel")
        else:
            assert ev is not None
            ev.profile_to.append((p.mem.flat_data(), int(offs[k])))
            if ev.status == CL_COMPLETE:
                write_profile(ev)
    return None


def write_profile(ev: Event) -> None:
    start, end = ev.times
    for data, off in ev.profile_to:
        data[off] = end - start  # CL_PROFILING_COMMAND_END - START
        data[off + 1] = end - start  # COMPLETE - START: children ran within
    ev.profile_to.clear()


IMPLS: dict[str, Any] = {
    "ndrange_1D": _ndrange_impl(1),
    "ndrange_2D": _ndrange_impl(2),
    "ndrange_3D": _ndrange_impl(3),
    "retain_event": _retain,
    "release_event": _retain,
    "create_user_event": _create_user_event,
    "is_valid_event": _is_valid,
    "set_user_event_status": _set_status,
    "capture_event_profiling_info": _profiling,
}
