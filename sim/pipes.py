"""Pipe built-ins in the simulator (spec §1.13.16; cl_khr_subgroups reservations).

A ``clpy.Pipe`` holds its packets in a ring of ``max_packets`` slots and two counters,
``read_seq`` and ``write_seq`` (packets ever taken and ever added); the simulator works on
that object directly, so packets written by one launch are read by a later one.

Order: the spec orders nothing between the work-items of a launch, so the simulator uses
work-item order (group-major, then local linear id) within each call: the first work-items
get the packets (or the free slots), the rest see an empty (full) pipe and get -1.
Reservations take consecutive slots in that order: a reservation that does not fit fails
(``is_valid_reserve_id`` false), and so do the later ones of the same call; a reservation
of 0 packets is invalid. A write reservation counts as written at once (a later launch sees
its packets whether or not they were filled); a read reservation takes its packets at once.
Commits have nothing left to do.
``work_group_*``/``sub_group_*`` reservations make one reservation per group (sub-group:
``clpy.sim.config(sub_group_size=...)`` consecutive work-items), sized by the group's first
work-item. Packets are scalars, vectors or structs, stored as in memory (``Pipe.slots``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.types.core import Type, VectorType
from clpy.types.structs import StructType
from clpy_sim.frame import Frame, PtrVal, gather, select_lanes
from clpy_sim.state import frame_wids

if TYPE_CHECKING:
    from clpy_sim.call import Call

_SHIFT = np.int64(32)  # reserve id: start sequence number << 32 | packet count; -1 invalid


def _pipe(call: Call, fr: Frame, p: Any) -> Any:
    if p.slots is None:
        fr.batch.launch.fail(
            "unsupported", f"the simulator cannot hold packets of {p.elem}", call.loc
        )
    return p


def _raw(v: Any, t: Type, shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray:
    """Lane values of ``t`` → an array of ``shape`` elements of the packet dtype (vectors with
    a trailing lane axis padded like memory, structs as structured records)."""
    out = np.zeros(shape, dtype)
    if isinstance(t, StructType):
        for name, ft in t.fields:
            out[name] = _raw(v[name], ft, shape, dtype.fields[name][0])  # type: ignore[index]
    elif isinstance(t, VectorType):
        out[..., : t.n] = np.moveaxis(np.broadcast_to(np.asarray(v), (t.n, *shape)), 0, -1)
    else:
        out[...] = np.broadcast_to(np.asarray(v), shape)
    return out


def _lanes(raw: np.ndarray, t: Type) -> Any:
    """The inverse of ``_raw``: stored packets → lane values."""
    if isinstance(t, StructType):
        return {name: _lanes(raw[name], ft) for name, ft in t.fields}
    if isinstance(t, VectorType):
        return np.moveaxis(raw, -1, 0)[: t.n]
    return raw


def _packets(p: Any, v: Any, shape: tuple[int, int]) -> np.ndarray:
    """Lane values → one packet per lane, in flat lane order."""
    return _raw(v, p.elem, shape, p.dtype).reshape(-1, *p.slots.shape[1:])


def _values(p: Any, packets: np.ndarray, shape: tuple[int, int]) -> Any:
    """One packet per lane (flat or lane-shaped) → lane values of ``shape``."""
    return _lanes(packets.reshape(*shape, *p.slots.shape[1:]), p.elem)


def _order(fr: Frame) -> tuple[np.ndarray, np.ndarray]:
    """Work-item ids of the lanes (flat) and the lane indices in work-item order."""
    wid = np.asarray(frame_wids(fr)).ravel()
    return wid, np.argsort(wid, kind="stable")


def _ptr(args: list[Any], start: int) -> PtrVal:
    """``ptr`` or ``buf, i`` (``&buf[i]``) from ``args[start:]``."""
    ptr = args[start]
    if len(args) > start + 1:
        return PtrVal(ptr.mem, ptr.off + np.asarray(args[start + 1]).astype(np.int64))
    return ptr


def _store_where(call: Call, fr: Frame, ok: np.ndarray, ptr: PtrVal, vals: np.ndarray) -> None:
    sel = select_lanes(ok, fr.shape)
    if sel is False:
        return
    if sel is True:
        ptr.mem.store(fr, ptr.off, vals, call.loc)
        return
    sub = fr.sub(sel)
    ptr.mem.store(sub, gather(sel, np.broadcast_to(ptr.off, fr.shape)), gather(sel, vals), call.loc)


def _status(ok: np.ndarray) -> np.ndarray:
    return np.where(ok, 0, -1).astype(np.int32)


def _read_pipe(call: Call, fr: Frame, args: list[Any]) -> Any:
    p = _pipe(call, fr, args[0])
    n = fr.size
    if len(args) >= 4:
        return _reserved_rw(call, fr, p, args, read=True)
    _, order = _order(fr)
    k = min(n, p.num_packets)
    flat = np.zeros((n, *p.slots.shape[1:]), p.slots.dtype)
    flat[order[:k]] = p.slots[(p.read_seq + np.arange(k)) % p.max_packets]
    p.read_seq += k
    got = np.zeros(n, bool)
    got[order[:k]] = True
    ok = got.reshape(fr.shape)
    _store_where(call, fr, ok, _ptr(args, 1), _values(p, flat, fr.shape))
    return _status(ok)


def _write_pipe(call: Call, fr: Frame, args: list[Any]) -> Any:
    p = _pipe(call, fr, args[0])
    n = fr.size
    if len(args) >= 4:
        return _reserved_rw(call, fr, p, args, read=False)
    ptr = _ptr(args, 1)
    vals = _packets(p, ptr.mem.load(fr, ptr.off, call.loc), fr.shape)
    _, order = _order(fr)
    k = min(n, p.max_packets - p.num_packets)
    p.slots[(p.write_seq + np.arange(k)) % p.max_packets] = vals[order[:k]]
    p.write_seq += k
    ok = np.zeros(n, bool)
    ok[order[:k]] = True
    return _status(ok.reshape(fr.shape))


def _reserved_rw(call: Call, fr: Frame, p: Any, args: list[Any], read: bool) -> Any:
    rid = np.broadcast_to(np.asarray(args[1], np.int64), fr.shape)
    index = np.broadcast_to(np.asarray(args[2]).astype(np.int64), fr.shape)
    valid = rid >= 0
    count = rid & np.int64(0xFFFFFFFF)
    bad = valid & (index >= count)
    if bad.any():
        fr.batch.launch.fail_lanes(
            fr, bad, "pipe", f"{call.name}: packet index out of the reservation's range", call.loc
        )
    ok = valid & ~bad
    slot = ((rid >> _SHIFT) + index) % p.max_packets
    ptr = _ptr(args, 3)
    if read:
        _store_where(call, fr, ok, ptr, _values(p, p.slots[np.where(ok, slot, 0)], fr.shape))
    else:
        vals = _packets(p, ptr.mem.load(fr, ptr.off, call.loc), fr.shape)
        p.slots[slot[ok]] = vals[ok.ravel()]
    return _status(ok)


def _group_keys(call: Call, fr: Frame) -> np.ndarray | None:
    """Per lane (flat): the reserving unit (work-item, work-group or sub-group)."""
    wid = np.asarray(frame_wids(fr)).ravel()
    name = call.name
    if name.startswith("work_group_"):
        return wid // fr.batch.launch.W
    if name.startswith("sub_group_"):
        launch = fr.batch.launch
        sg = int(launch.cfg.sub_group_size)
        nsg = -(-launch.W // sg)
        return (wid // launch.W) * nsg + (wid % launch.W) // sg
    return None


def _reserve(call: Call, fr: Frame, args: list[Any]) -> Any:
    p = _pipe(call, fr, args[0])
    read = "_read_" in call.name
    want = np.broadcast_to(np.asarray(args[1]).astype(np.int64), fr.shape).ravel()
    keys = _group_keys(call, fr)
    if keys is None:
        keys = np.asarray(frame_wids(fr)).ravel()
    ukeys, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    sizes = want[first]  # one reservation per unit, sized by its first work-item
    if len(ukeys) < len(keys):
        differs = sizes[inverse] != want
        if differs.any():
            fr.batch.launch.fail_lanes(
                fr,
                differs.reshape(fr.shape),
                "pipe",
                f"{call.name}: the work-items of a group ask for different packet counts",
                call.loc,
            )
    room = p.num_packets if read else p.max_packets - p.num_packets
    ends = np.cumsum(sizes)
    fits = np.cumprod(ends <= room).astype(bool)  # one that fails ends the call's reservations
    ok = fits & (sizes > 0)
    starts = (p.read_seq if read else p.write_seq) + ends - sizes
    taken = int(sizes[ok].sum())
    if read:
        p.read_seq += taken
    else:
        p.write_seq += taken
    rid = np.where(ok, (starts << _SHIFT) | sizes, -1)
    return rid[inverse].reshape(fr.shape)


def _commit(call: Call, fr: Frame, args: list[Any]) -> Any:
    _pipe(call, fr, args[0])
    return None


def _is_valid(call: Call, fr: Frame, args: list[Any]) -> Any:
    return np.asarray(args[0]) >= 0


def _num_packets(call: Call, fr: Frame, args: list[Any]) -> Any:
    return np.uint32(args[0].num_packets)


def _max_packets(call: Call, fr: Frame, args: list[Any]) -> Any:
    return np.uint32(args[0].max_packets)


IMPLS: dict[str, Any] = {
    "read_pipe": _read_pipe,
    "write_pipe": _write_pipe,
    "is_valid_reserve_id": _is_valid,
    "get_pipe_num_packets": _num_packets,
    "get_pipe_max_packets": _max_packets,
}
for _pre in ("", "work_group_", "sub_group_"):
    for _dir in ("read", "write"):
        IMPLS[f"{_pre}reserve_{_dir}_pipe"] = _reserve
        IMPLS[f"{_pre}commit_{_dir}_pipe"] = _commit
