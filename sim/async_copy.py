"""Async copies, ``wait_group_events`` and ``prefetch`` (spec §1.13.10) in the simulator.

The work-items of a frame run in lockstep, so a work-group copy is done at the call, for every
work-group of the frame at once (a gather/scatter of whole rows of elements). What the spec
leaves undefined is checked:

- the call is a work-group function: reached by part of a work-group, or with arguments
  (pointers, count, stride, event) that differ within one, it is reported like a divergent
  barrier (``barrier-divergence``, the checker ``barriers``);
- the destination counts as written by the whole work-group at the call and may be accessed
  only after ``wait_group_events`` on its event; the source may not be written before then
  (``data-race``, the checker ``races``). At the call, a local destination that a work-item
  accessed, or a local source that a work-item wrote, in the same barrier interval is a race
  too (the copy does no implicit barrier, spec §1.13.10);
- elements outside the buffers are ``out-of-bounds`` reports; a local source read before any
  work-item wrote it is an ``uninitialized-read``.

Events are int64 ids, one per work-group and call (0 is "no event"). The in-flight state lives
in a ``_Guard`` that wraps the memory's race shadow (``Memory.shadow``): loads and stores go
through it, so accesses to elements of a copy in flight are caught without a hook in
``sim/memory.py``. After the wait the copied elements carry no writer, so any work-item may
read them (a local destination) until the next barrier interval's accesses. Not checked: a
kernel that exits with a copy in flight, other work-groups' accesses to a global destination
after the wait, and races of the copy's reads of a global source with other work-groups'
writes.
"""

from __future__ import annotations

import itertools
import threading
from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.ir.nodes import Loc
from clpy.types import catalog as C
from clpy_sim.collectives import check_complete
from clpy_sim.frame import Frame, PtrVal
from clpy_sim.memory import LocalMem, Memory
from clpy_sim.state import frame_wids

if TYPE_CHECKING:
    from clpy_sim.call import Call

_CALLS = itertools.count(1)  # next() is atomic under the GIL: ids stay unique across threads
_SLOTS = 1 << 24  # event id = call number * _SLOTS + batch slot + 1
_INSTALL = threading.Lock()


class _Groups:
    """The frame's work-groups: their batch slots, and for each lane which one it is in."""

    def __init__(self, fr: Frame) -> None:
        gs = np.broadcast_to(np.asarray(fr.gslot, np.int64), fr.shape).ravel()
        self.slots, self.first, self.inv = np.unique(gs, return_index=True, return_inverse=True)
        self.fr = fr

    def per_group(self, call: Call, v: Any, what: str) -> np.ndarray:
        """``v``'s value in each work-group, reported where it differs within one."""
        fr = self.fr
        a = np.broadcast_to(np.asarray(v), fr.shape).ravel()
        ref = a[self.first]
        bad = a != ref[self.inv]
        if bad.any() and "barriers" in call.checks:
            fr.batch.launch.fail_lanes(
                fr,
                bad.reshape(fr.shape),
                "barrier-divergence",
                f"clpy.{call.name}: {what} differs between the work-items of a work-group; "
                "every work-item must reach this work-group function with the same "
                "arguments (spec §1.13.10)",
                call.loc,
            )
        return ref

    def lanes(self, per_group: np.ndarray) -> np.ndarray:
        """A per-group value as a lane value of the frame."""
        return per_group[self.inv].reshape(self.fr.shape)


class _Guard:
    """Wraps a memory's race shadow with the async copies in flight: ``dst``/``src`` hold, per
    element (per work-group row for local memory), the event of a copy writing/reading it."""

    def __init__(self, mem: Memory, inner: Any) -> None:
        self.mem = mem
        self.inner = inner
        self.local = isinstance(mem, LocalMem)
        shape = mem.data.shape[:2] if self.local else (mem.count,)
        self.dst = np.zeros(shape, np.int64)
        self.src = np.zeros(shape, np.int64)
        self.locs: dict[int, Loc] = {}  # event -> the call that started the copy

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def read(self, fr: Frame, w: Any, loc: Loc) -> None:
        self.check(fr, np.broadcast_to(w.flat(), fr.shape), loc, "read", self.dst)
        self.inner.read(fr, w, loc)

    def write(self, fr: Frame, w: Any, loc: Loc) -> None:
        flat = np.broadcast_to(w.flat(), fr.shape)
        self.check(fr, flat, loc, "write", self.dst)
        self.check(fr, flat, loc, "write", self.src)
        self.inner.write(fr, w, loc)

    def reset(self, rows: Any) -> None:
        self.inner.reset(rows)  # a barrier does not complete an async copy

    def check(self, fr: Frame, flat: np.ndarray, loc: Loc, what: str, table: np.ndarray) -> None:
        """Report the lanes whose element (flat index) is in flight in ``table``."""
        if not table.any():
            return
        ev = table.reshape(-1)[flat]
        bad = ev != 0
        if not bad.any():
            return
        wids = np.broadcast_to(frame_wids(fr), flat.shape)[bad]
        k = int(np.argmin(wids))
        e = int(ev[bad][k])
        role = "destination" if table is self.dst else "source"
        addr = int(flat[bad][k])
        fr.batch.launch.fail(
            "data-race",
            f"{what} of {self.mem.describe()} while an async copy with it as {role} is in "
            "flight: call clpy.wait_group_events on its event first (spec §1.13.10)",
            loc,
            int(wids[k]),
            self.mem.name,
            addr % self.mem.count if self.local else addr,
            self.locs.get(e),
            count=int(wids.size),
        )


def _guard(fr: Frame, mem: Memory) -> _Guard | None:
    """The memory's guard, installed on first use (only with the race checker on)."""
    sh = mem.shadow
    if isinstance(sh, _Guard):
        return sh
    if sh is None or "races" not in fr.batch.launch.checks:
        return None
    with _INSTALL:  # global memory is shared by the batches of a launch (threads)
        sh = mem.shadow
        if isinstance(sh, _Guard):
            return sh
        g = _Guard(mem, sh)
        mem.shadow = g
    return g


def _batch_guards(fr: Frame) -> list[_Guard]:
    b = fr.batch
    out: list[_Guard] | None = getattr(b, "async_guards", None)
    if out is None:
        out = []
        b.async_guards = out  # type: ignore[attr-defined]
    return out


def _indices(
    call: Call,
    fr: Frame,
    mem: Memory,
    base: np.ndarray,
    j: np.ndarray,
    stride: np.ndarray,
    valid: np.ndarray,
    gr: _Groups,
    what: str,
) -> tuple[np.ndarray, np.ndarray]:
    """Per (group, element) flat indices into ``mem.flat_data()`` and the valid mask (those in
    bounds; the others reported)."""
    idx = base[:, None] + j[None, :] * stride[:, None]
    bad = valid & ((idx < 0) | (idx >= mem.count))
    if bad.any():
        g, e = (int(x[0]) for x in np.nonzero(bad))
        if "bounds" in call.checks:
            lanes = np.flatnonzero(gr.inv == g)
            wid = int(frame_wids(fr).ravel()[lanes].min())
            fr.batch.launch.fail(
                "out-of-bounds",
                f"clpy.{call.name}: its {what} element {e} is outside {mem.describe()} (it has "
                f"{mem.count} elements)",
                call.loc,
                wid,
                mem.name,
                int(idx[g, e]),
            )
        valid = valid & ~bad
    idx = np.where(valid, idx, 0)
    if isinstance(mem, LocalMem):
        idx = idx + gr.slots[:, None] * mem.count
    return idx, valid


def _at_call(
    call: Call, fr: Frame, mem: Memory, flat: np.ndarray, gr: _Groups, write: bool
) -> None:
    """Races at the call with earlier accesses of the same barrier interval (local memory)."""
    inner = mem.shadow.inner if isinstance(mem.shadow, _Guard) else mem.shadow
    if inner is None or not isinstance(mem, LocalMem) or flat.size == 0:
        return
    launch = fr.batch.launch
    if write and getattr(inner, "init", None) is not None:
        inner.init.reshape(-1)[flat] = True
        inner.all_init = bool(inner.init.all())
    elif not write and getattr(inner, "uninit", False) and not inner.all_init:
        ini = inner.init.reshape(-1)[flat]
        if not ini.all():
            addr = int(flat[~ini][0])
            launch.fail(
                "uninitialized-read",
                f"clpy.{call.name} copies from {mem.describe()} elements no work-item of the "
                "group has written",
                call.loc,
                None,
                mem.name,
                addr % mem.count,
            )
    if "races" not in call.checks or not hasattr(inner, "w_own"):
        return
    inner._replay()
    tables = [("write", inner.w_own)] + ([("read", inner.r_own)] if write else [])
    for kind, table in tables:
        own = table.reshape(-1)[flat]
        if not own.any():
            continue
        addr = int(flat[own != 0][0])
        o = int(own[own != 0][0])
        slot = addr // mem.count
        other = (slot + fr.batch.gfirst) * launch.W + o - 1 if o > 0 else None
        other_loc, logged, _ = inner._line_of(addr, kind, -1, other)
        launch.fail(
            "data-race",
            f"clpy.{call.name} {'writes' if write else 'reads'} elements of "
            f"{mem.describe()} that another work-item {kind}s in the same barrier interval: "
            "the copy does no implicit barrier (spec §1.13.10); put a barrier before it",
            call.loc,
            None,
            mem.name,
            addr % mem.count,
            other_loc,
            other if other is not None else logged,
        )


def _copy(call: Call, fr: Frame, args: list[Any]) -> Any:
    strided = call.name == "async_work_group_strided_copy"
    check_complete(call, fr, f"clpy.{call.name}")
    gr = _Groups(fr)
    dst, src = args[0], args[1]
    assert isinstance(dst, PtrVal) and isinstance(src, PtrVal)
    doff = gr.per_group(call, dst.off, "dst")
    soff = gr.per_group(call, src.off, "src")
    n = gr.per_group(call, args[2], "num_gentypes").astype(np.int64)
    ones = np.ones_like(n)
    dstride = sstride = ones
    if strided:
        stride = gr.per_group(call, args[3], "the stride").astype(np.int64)
        if isinstance(dst.mem, LocalMem):
            sstride = stride  # a gather from global memory
        else:
            dstride = stride  # a scatter to global memory
    nargs = 5 if strided else 4
    ev_in = (
        gr.per_group(call, args[nargs - 1], "the event").astype(np.int64)
        if len(args) == nargs
        else np.zeros_like(n)
    )
    ev = np.where(ev_in != 0, ev_in, next(_CALLS) * _SLOTS + gr.slots + 1)
    j = np.arange(int(n.max()) if n.size else 0, dtype=np.int64)
    valid = j[None, :] < n[:, None]
    di, dv = _indices(call, fr, dst.mem, doff, j, dstride, valid, gr, "destination")
    si, sv = _indices(call, fr, src.mem, soff, j, sstride, valid, gr, "source")
    ok = dv & sv
    dflat, sflat = di[ok], si[ok]
    dg, sg = _guard(fr, dst.mem), _guard(fr, src.mem)
    evs = np.broadcast_to(ev[:, None], ok.shape)[ok]
    if dg is not None:
        dg.check(_flat_frame(fr), dflat[None, :], call.loc, "async copy into", dg.dst)
    if sg is not None:
        sg.check(_flat_frame(fr), sflat[None, :], call.loc, "async copy from", sg.dst)
    _at_call(call, fr, src.mem, sflat, gr, False)
    _at_call(call, fr, dst.mem, dflat, gr, True)
    target = dst.mem.flat_data()
    target[dflat] = src.mem.flat_data()[sflat]
    guards = _batch_guards(fr)
    for g, table, idx in ((dg, "dst", dflat), (sg, "src", sflat)):
        if g is None:
            continue
        getattr(g, table).reshape(-1)[idx] = evs
        for e in np.unique(ev):
            g.locs[int(e)] = call.loc
        if g not in guards:
            guards.append(g)
    return gr.lanes(ev)


def _flat_frame(fr: Frame) -> Frame:
    """A one-lane view for reports made at the call (the first work-item of the frame)."""
    wids = frame_wids(fr).ravel()
    k = int(np.argmin(wids))
    gs = np.broadcast_to(np.asarray(fr.gslot), fr.shape).ravel()[k]
    ll = np.broadcast_to(np.asarray(fr.llid), fr.shape).ravel()[k]
    return Frame(fr.batch, (1, 1), np.array([[gs]]), np.array([[ll]]), complete=False)


def _wait(call: Call, fr: Frame, args: list[Any]) -> None:
    check_complete(call, fr, f"clpy.{call.name}")
    gr = _Groups(fr)
    if call.params[0] is C.event_t:
        values = list(args)
    else:
        num = gr.per_group(call, args[0], "num_events")
        ptr = args[1]
        assert isinstance(ptr, PtrVal)
        k = int(num.max()) if num.size else 0
        values = [ptr.mem.load(fr, ptr.off + i, call.loc) for i in range(k)]
        if num.size and (num != k).any():
            short = gr.lanes(num)  # fewer events in some groups: theirs end earlier
            values = [np.where(short > i, v, 0) for i, v in enumerate(values)]
    per = [gr.per_group(call, v, f"event {i}") for i, v in enumerate(values)]
    if not per:
        return
    evs = np.stack(per, axis=1).astype(np.int64)  # (groups, k)
    for g in _batch_guards(fr):
        for table in (g.dst, g.src):
            if not table.any():
                continue
            if g.local:
                rows = table[gr.slots]
                done = (rows[:, :, None] == evs[:, None, :]).any(-1) & (rows != 0)
                rows[done] = 0
                table[gr.slots] = rows
            else:
                flat = evs[evs != 0]
                table[np.isin(table, flat)] = 0


def _prefetch(call: Call, fr: Frame, args: list[Any]) -> None:
    return None  # a cache hint: no functional effect (spec §1.13.10)


IMPLS: dict[str, Any] = {
    "async_work_group_copy": _copy,
    "async_work_group_strided_copy": _copy,
    "wait_group_events": _wait,
    "prefetch": _prefetch,
}
