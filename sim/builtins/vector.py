"""Vector data load/store (spec §1.13.7), shuffle/shuffle2 and vec_step (§1.13.12), and the
address-space functions (§1.13.9). Loads and stores go through the memory objects (bounds and
race checks), one component at a time."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.builtins.registry import REGISTRY
from clpy.types import catalog as C
from clpy.types.core import VectorType
from clpy_sim.builtins import fix
from clpy_sim.builtins.conversions import directed_float
from clpy_sim.frame import PtrVal

if TYPE_CHECKING:
    from clpy_sim.call import Call
    from clpy_sim.frame import Frame


def _vload(n: int, stride: int, to_float: bool) -> Any:
    def impl(call: Call, fr: Frame, args: list[Any]) -> Any:
        off, p = args
        base = np.asarray(off).astype(np.int64) * stride + np.asarray(p.off, dtype=np.int64)
        comps = [np.asarray(p.mem.load(fr, base + k, call.loc)) for k in range(n)]
        shape = np.broadcast_shapes(*(c.shape for c in comps))
        v = np.stack([np.broadcast_to(c, shape) for c in comps])
        if v.ndim == 1:
            v = v.reshape(n, 1, 1)
        if n == 1:
            v = v[0]
        return fix(v, call.ret)

    return impl


def _vstore(n: int, stride: int, half: str | None) -> Any:
    def impl(call: Call, fr: Frame, args: list[Any]) -> Any:
        data, off, p = args
        d = np.asarray(data)
        if half is not None:
            d = directed_float(d, C.half, half or None)
        base = np.asarray(off).astype(np.int64) * stride + np.asarray(p.off, dtype=np.int64)
        if n == 1:
            p.mem.store(fr, base, d, call.loc)
            return None
        for k in range(n):
            p.mem.store(fr, base + k, d[k], call.loc)
        return None

    return impl


def _shuffle(call: Call, fr: Frame, args: list[Any]) -> Any:
    *xs, mask = (np.asarray(a) for a in args)
    x = np.concatenate([np.asarray(v) for v in np.broadcast_arrays(*xs)]) if len(xs) > 1 else xs[0]
    m = x.shape[0]
    idx = mask.astype(np.int64) % m
    shape = np.broadcast_shapes(x.shape[1:], idx.shape[1:])
    xb = np.broadcast_to(x, (m, *shape))
    ib = np.broadcast_to(idx, (idx.shape[0], *shape))
    return fix(np.take_along_axis(xb, ib, axis=0), call.ret)


def _vec_step(call: Call, fr: Frame, args: list[Any]) -> Any:
    t = call.expr.args[0].type
    n = (4 if t.n == 3 else t.n) if isinstance(t, VectorType) else 1
    return np.int32(n)


def _space_of(p: Any) -> str | None:
    mem = p.mem
    return None if mem is None else getattr(mem, "space", "private")


def _to_space(space: str) -> Any:
    def impl(call: Call, fr: Frame, args: list[Any]) -> Any:
        p = args[0]
        s = _space_of(p)
        ok = s == space or (space == "global" and s == "constant")
        return p if ok else PtrVal(None, np.int64(0))

    return impl


def _get_fence(call: Call, fr: Frame, args: list[Any]) -> Any:
    return np.uint32(1 if _space_of(args[0]) == "local" else 2)


IMPLS: dict[str, Any] = {
    "shuffle": _shuffle,
    "shuffle2": _shuffle,
    "vec_step": _vec_step,
    "to_global": _to_space("global"),
    "to_local": _to_space("local"),
    "to_private": _to_space("private"),
    "get_fence": _get_fence,
}
for _name, _b in REGISTRY.items():  # vload/vstore: from each declaration's VectorAccess
    _va = _b.vector_access
    if _va is None:
        continue
    if _va.store:
        IMPLS[_name] = _vstore(_va.lanes, _va.stride, (_va.rounding or "") if _va.half else None)
    else:
        IMPLS[_name] = _vload(_va.lanes, _va.stride, _va.half)
