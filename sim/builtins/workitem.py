"""Work-item functions (spec §1.13.1). Ids are computed from the frame's lane coordinates
(``gslot``, ``llid``) and cached per frame; a dimension index past ``get_work_dim()`` gives
the spec's defaults (ids 0, sizes 1)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.ir.nodes import Const
from clpy_sim.frame import Frame

if TYPE_CHECKING:
    from clpy_sim.call import Call

_U64 = np.uint64


def _dim(fr: Frame, args: list[Any]) -> int:
    d = np.asarray(args[0])
    if d.ndim:
        raise NotImplementedError("work-item functions need a uniform dimension index")
    return int(d)


def local_id(fr: Frame, d: int) -> Any:
    L = fr.batch.launch
    if d >= L.dims:
        return _U64(0)
    key = ("lid", d)
    v = fr.cache.get(key)
    if v is None:
        stride = int(np.prod(L.lsize[:d]))
        ll = fr.llid
        v = ll if L.dims == 1 else (ll // stride) % L.lsize[d]
        v = np.asarray(v).astype(_U64)
        if L.dims == 1 and v.shape == (1, L.W):
            fr.batch.note_run(v, 0)  # the row 0, 1, ..., W-1
        fr.cache[key] = v
    return v


def group_id(fr: Frame, d: int) -> Any:
    L = fr.batch.launch
    if d >= L.dims:
        return _U64(0)
    key = ("grp", d)
    v = fr.cache.get(key)
    if v is None:
        glin = np.asarray(fr.gslot) + fr.batch.gfirst
        stride = int(np.prod(L.ngroups[:d]))
        v = (glin if L.dims == 1 else (glin // stride) % L.ngroups[d]).astype(_U64)
        fr.cache[key] = v
    return v


def global_id(fr: Frame, d: int) -> Any:
    L = fr.batch.launch
    if d >= L.dims:
        return _U64(0)
    key = ("gid", d)
    v = fr.cache.get(key)
    if v is None:
        b = fr.batch
        if L.dims == 1 and fr.shape == (b.G, L.W) and np.shape(fr.gslot) == (b.G, 1):
            # every lane of the batch, in order: the ids are one run of integers
            first = b.gfirst * L.W + L.offset[0]
            v = np.arange(first, first + b.G * L.W, dtype=_U64).reshape(fr.shape)
            b.note_run(v, first)
        else:
            v = group_id(fr, d) * _U64(L.lsize[d]) + local_id(fr, d)
            if L.offset[d]:
                v = v + _U64(L.offset[d])
        fr.cache[key] = v
    return v


def _sizes(attr: str, default: int) -> Callable[[Any, Frame, list[Any]], Any]:
    def impl(call: Call, fr: Frame, args: list[Any]) -> Any:
        L = fr.batch.launch
        d = _dim(fr, args)
        vals = getattr(L, attr)
        return _U64(vals[d] if d < L.dims else default)

    return impl


def actual_local_size(fr: Frame, d: int) -> Any:
    """``get_local_size(d)``: the size of each lane's work-group (smaller for the last
    work-group of a non-uniform NDRange, OpenCL 2.0 §3.2)."""
    L = fr.batch.launch
    if d >= L.dims:
        return _U64(1)
    if L.uniform:
        return _U64(L.lsize[d])
    glin = np.asarray(fr.gslot, dtype=np.int64) + fr.batch.gfirst
    return L.group_local_sizes(glin)[d].astype(_U64)


def _local_size(call: Call, fr: Frame, args: list[Any]) -> Any:
    return actual_local_size(fr, _dim(fr, args))


def _ids(fn: Callable[[Frame, int], Any]) -> Callable[[Any, Frame, list[Any]], Any]:
    def impl(call: Call, fr: Frame, args: list[Any]) -> Any:
        return fn(fr, _dim(fr, args))

    def specialize(call: Call, arg_fns: list[Any]) -> Any:
        a = call.expr.args[0]
        if isinstance(a, Const):
            d = int(a.value)
            return lambda fr: fn(fr, d)
        return None

    impl.specialize = specialize  # type: ignore[attr-defined]
    return impl


def _work_dim(call: Call, fr: Frame, args: list[Any]) -> Any:
    return np.uint32(fr.batch.launch.dims)


def _global_linear(call: Call, fr: Frame, args: list[Any]) -> Any:
    L = fr.batch.launch
    out: Any = _U64(0)
    stride = 1
    for d in range(L.dims):
        out = out + (global_id(fr, d) - _U64(L.offset[d])) * _U64(stride)
        stride *= L.gsize[d]
    return out


def _local_linear(call: Call, fr: Frame, args: list[Any]) -> Any:
    L = fr.batch.launch
    if L.uniform:
        return np.asarray(fr.llid).astype(_U64)
    out: Any = _U64(0)
    stride: Any = _U64(1)
    for d in range(L.dims):
        out = out + local_id(fr, d) * stride
        stride = stride * actual_local_size(fr, d)
    return out


IMPLS = {
    "get_work_dim": _work_dim,
    "get_global_size": _sizes("gsize", 1),
    "get_local_size": _local_size,
    "get_enqueued_local_size": _sizes("lsize", 1),
    "get_num_groups": _sizes("ngroups", 1),
    "get_global_offset": _sizes("offset", 0),
    "get_global_id": _ids(global_id),
    "get_local_id": _ids(local_id),
    "get_group_id": _ids(group_id),
    "get_global_linear_id": _global_linear,
    "get_local_linear_id": _local_linear,
}
