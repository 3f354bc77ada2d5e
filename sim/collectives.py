"""Work-group and sub-group collectives in the simulator, vectorized over work-groups.

The lanes of each work-group are arranged as rows in linear local id order; reductions and
scans then run the same chunked algorithm as the lowered OpenCL C (clpy/emit/lower_helpers.py):
chunks of ``k`` items (``k * k >= n``) combined sequentially, then the chunk totals in order.
So floating-point results equal PoCL's lowered code bit for bit, and user-defined combiners
(``@clpy.reduction``) are called on whole columns of lanes at once (Python loops run over the
``k`` positions of a chunk and the ``c`` chunks, never over work-items).

Sub-groups: ``clpy.sim.config(sub_group_size=...)`` lanes per sub-group (default 32),
consecutive in linear local id; the last sub-group of a work-group is smaller when the
work-group size is not a multiple (as cl_khr_subgroups allows). A collective reached by only
part of a work-group (or sub-group) is reported like a divergent barrier.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.builtins.registry import REGISTRY
from clpy.ir.operators import BINARY, identity_value
from clpy.types.core import ScalarType, Type, VectorType, element_of
from clpy.types.structs import StructType
from clpy_sim.builtins.sync import barrier
from clpy_sim.frame import Frame
from clpy_sim.plan import get_plan
from clpy_sim.values import RET

if TYPE_CHECKING:
    from clpy_sim.call import Call

Tree = Any  # an array, or a dict of trees (struct values)


def tmap(f: Callable[..., Any], *trees: Tree) -> Tree:
    t0 = trees[0]
    if isinstance(t0, dict):
        return {k: tmap(f, *(t[k] for t in trees)) for k in t0}
    return f(*trees)


def _leaf(t: Tree) -> np.ndarray:
    while isinstance(t, dict):
        t = next(iter(t.values()))
    return np.asarray(t)


# ----------------------------------------------------------------------------- operators


def builtin_combiner(op: str) -> Callable[[Tree, Tree], Tree]:
    """``op(a, b)`` with OpenCL C semantics in the element dtype (a: earlier items), from the
    operator table (clpy/ir/operators.py). ``comb.ufunc`` lets ``chunked`` use
    ``ufunc.accumulate`` (sequential, so the rounding is the same as the lowered loop's;
    logical operands are normalised to 0/1 first)."""
    bop = BINARY[op]
    lanes = bop.lanes

    def comb(a: Any, b: Any) -> Any:
        return lanes(np.asarray(a), np.asarray(b))

    comb.ufunc = bop.ufunc  # type: ignore[attr-defined]
    return comb


def user_combiner(fn: Any, fr: Frame, checks: frozenset[str]) -> Callable[[Tree, Tree], Tree]:
    """Call the combiner ``Function`` on whole 2-D blocks of lanes."""
    plan = get_plan(fn, checks)
    pa, pb = fn.params

    def comb(a: Tree, b: Tree) -> Tree:
        shape = _leaf(a).shape[-2:]
        sub = Frame(
            fr.batch, shape, np.zeros((shape[0], 1), np.int64), np.zeros((1, shape[1]), np.int64)
        )
        sub.env[pa] = a
        sub.env[pb] = b
        sub.env[RET] = tmap(np.copy, a)
        plan.body(sub)
        r = sub.env[RET]
        return tmap(
            lambda x, ref: np.broadcast_to(np.asarray(x, dtype=ref.dtype), ref.shape).copy(), r, a
        )

    return comb


# ----------------------------------------------------------------------------- algorithms


def _isqrt_ceil(n: int) -> int:
    k = 1
    while k * k < n:
        k += 1
    return k


def chunked(
    v: Tree,
    mode: str,
    comb: Callable[[Tree, Tree], Tree],
    ident: Tree | None,
    normalize: bool = False,
) -> Tree:
    """Reduce or scan along the last axis (the items of each group, in local id order)."""
    n = _leaf(v).shape[-1]
    k = _isqrt_ceil(n)
    c = -(-n // k)
    if normalize:
        v = tmap(lambda x: (x != 0).astype(x.dtype), v)

    def blocks(x: np.ndarray) -> np.ndarray:
        if c * k == n:
            return x.reshape(x.shape[:-1] + (c, k))
        pad = np.zeros(x.shape[:-1] + (c * k - n,), x.dtype)
        return np.concatenate([x, pad], -1).reshape(x.shape[:-1] + (c, k))

    w = tmap(blocks, v)
    uf = getattr(comb, "ufunc", None)
    if uf is not None and not isinstance(v, dict):
        return _chunked_ufunc(w, mode, comb, uf, ident, n, k, c)
    acc = tmap(lambda x: x[..., 0].copy(), w)
    prefix = tmap(np.copy, w)
    starts = np.arange(c) * k
    for j in range(1, k):
        valid = starts + j < n
        new = comb(acc, tmap(lambda x, j=j: x[..., j], w))
        acc = tmap(lambda nw, old, valid=valid: np.where(valid, nw, old), new, acc)
        if mode != "reduce":
            tmap(lambda p, a, j=j: p.__setitem__((..., j), a), prefix, acc)
    totals = acc  # (..., G, c)
    for i in range(1, c):
        t = comb(
            tmap(lambda x, i=i: x[..., i - 1 : i], totals),
            tmap(lambda x, i=i: x[..., i : i + 1], totals),
        )
        tmap(lambda x, y, i=i: x.__setitem__((..., slice(i, i + 1)), y), totals, t)
    if mode == "reduce":
        return tmap(lambda x: np.repeat(x[..., c - 1 : c], n, -1), totals)
    pre = tmap(lambda x: x.reshape(x.shape[:-2] + (c * k,))[..., :n], prefix)
    ch = np.arange(n) // k
    if mode == "scan_inclusive":
        out = tmap(np.copy, pre)
        m = ch > 0
        if m.any():
            r = comb(tmap(lambda x: x[..., ch[m] - 1], totals), tmap(lambda x: x[..., m], pre))
            tmap(lambda o, x: o.__setitem__((..., m), x), out, r)
        return out
    # exclusive
    out = tmap(lambda x, e: np.broadcast_to(np.asarray(e, x.dtype), x.shape).copy(), pre, ident)
    lid = np.arange(n)
    inner = (lid % k != 0) & (ch > 0)
    first_in = (lid % k != 0) & (ch == 0)
    starts_m = (lid % k == 0) & (ch > 0)
    if inner.any():
        r = comb(
            tmap(lambda x: x[..., ch[inner] - 1], totals),
            tmap(lambda x: x[..., lid[inner] - 1], pre),
        )
        tmap(lambda o, x: o.__setitem__((..., inner), x), out, r)
    if first_in.any():
        tmap(lambda o, x: o.__setitem__((..., first_in), x[..., lid[first_in] - 1]), out, pre)
    if starts_m.any():
        tmap(lambda o, x: o.__setitem__((..., starts_m), x[..., ch[starts_m] - 1]), out, totals)
    return out


def _chunked_ufunc(
    w: np.ndarray, mode: str, comb: Any, uf: Any, ident: Any, n: int, k: int, c: int
) -> np.ndarray:
    """``chunked`` for built-in operators without Python loops: ``accumulate`` within chunks
    and over chunk totals is the same sequential order as the lowered C. Works on
    ``(..., c, k)`` blocks; padding (zeros) only ever follows the last item."""
    dt = w.dtype
    if dt.kind == "f" and uf in (np.bitwise_and, np.bitwise_or):
        # && and || on floating lanes: the operands are already 0/1 (normalised), and NumPy's
        # bitwise ufuncs take integers only
        return _chunked_ufunc(w.astype(np.int8), mode, comb, uf, ident, n, k, c).astype(dt)
    prefix = uf.accumulate(w, axis=-1, dtype=dt)  # (..., c, k)
    last = n - (c - 1) * k  # items in the last chunk
    tot = prefix[..., k - 1]
    if last != k:
        tot = tot.copy()
        tot[..., c - 1] = prefix[..., c - 1, last - 1]
    totals = uf.accumulate(tot, axis=-1, dtype=dt)  # (..., c)
    lead = w.shape[:-2]
    if mode == "reduce":
        return np.broadcast_to(totals[..., c - 1 : c], lead + (n,)).copy()
    if mode == "scan_inclusive":
        out = prefix
        if c > 1:
            out[..., 1:, :] = comb(totals[..., :-1, None], prefix[..., 1:, :])
    else:
        out = np.empty_like(prefix)
        out[..., :, 1:] = prefix[..., :, :-1]
        if c > 1:
            out[..., 1:, 1:] = comb(totals[..., :-1, None], prefix[..., 1:, :-1])
            out[..., 1:, 0] = totals[..., :-1]
        # the identity is shaped for (lead..., G, n) leaves; out[..., 0, 0] drops the last axis
        e = np.asarray(ident)
        out[..., 0, 0] = e.reshape(e.shape[:-1]) if e.ndim else e
    flat = out.reshape(lead + (c * k,))
    return flat if c * k == n else flat[..., :n]


# ----------------------------------------------------------------------------- lanes ↔ rows


def _lead(t: Type) -> tuple[int, ...]:
    return (t.n,) if isinstance(t, VectorType) else ()


def _full(v: Tree, t: Type, shape: tuple[int, int]) -> Tree:
    if isinstance(v, dict):
        assert isinstance(t, StructType)
        return {name: _full(v[name], ft, shape) for name, ft in t.fields}
    lead = _lead(t)
    a = np.asarray(v)
    if lead and a.ndim < 3:
        a = a.reshape(a.shape + (1,) * (3 - a.ndim)) if a.ndim == 1 else a
    return np.broadcast_to(a, lead + shape)


def groups_of(fr: Frame, unit: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lane order and group ids: ``order`` sorts the frame's flattened lanes by (group, local
    id); ``key`` is the group (or sub-group) key of each sorted lane; ``counts`` per group."""
    gs = np.broadcast_to(np.asarray(fr.gslot, np.int64), fr.shape).ravel()
    ls = np.broadcast_to(np.asarray(fr.llid, np.int64), fr.shape).ravel()
    key = gs * (fr.batch.launch.W + 1)
    if unit is not None:
        key = key + ls // unit
    order = np.lexsort((ls, key))
    _, counts = np.unique(key[order], return_counts=True)
    return order, key[order], counts


def apply_grouped(
    fr: Frame, v: Tree, t: Type | None, fn: Callable[[Tree], Tree], unit: int | None = None
) -> Tree:
    """Run ``fn`` (last axis = items of one group) on the frame's lanes grouped by work-group
    (or sub-group of ``unit`` lanes) and put the results back in lane order. ``t`` None: the
    leaves are already full lane arrays."""
    shape = fr.shape
    if t is not None:
        v = _full(v, t, shape)
    if (
        unit is None
        and fr.complete
        and np.shape(fr.gslot) == (shape[0], 1)
        and np.shape(fr.llid) == (1, shape[1])
        and shape[1] == fr.batch.launch.W
    ):
        return fn(v)  # the root layout: one row per work-group, in local id order
    order, _, counts = groups_of(fr, unit)
    total = shape[0] * shape[1]
    flat = tmap(lambda x: x.reshape(x.shape[:-2] + (total,))[..., order], v)
    out = tmap(lambda x: np.empty(x.shape[:-1] + (total,), x.dtype), flat)
    sizes = np.unique(counts)
    bounds = np.concatenate([[0], np.cumsum(counts)])
    for m in sizes:  # groups of equal size together
        sel = np.flatnonzero(counts == m)
        idx = bounds[sel][:, None] + np.arange(m)[None, :]
        r = fn(tmap(lambda x, idx=idx: x[..., idx], flat))
        tmap(lambda o, x, idx=idx: o.__setitem__((..., order[idx]), x), out, r)
    return tmap(lambda x: x.reshape(x.shape[:-1] + shape), out)


def check_complete(call: Call, fr: Frame, what: str) -> None:
    """Report a collective reached by only part of a work-group."""
    if fr.complete:
        return
    batch = fr.batch
    gs = np.broadcast_to(np.asarray(fr.gslot), fr.shape)
    counts = np.bincount(gs.ravel(), minlength=batch.G)
    full = batch.group_sizes if batch.group_sizes is not None else batch.launch.W
    partial = (counts > 0) & (counts < full)
    if np.count_nonzero(partial) and "barriers" in call.checks:
        g = int(np.flatnonzero(partial)[0])
        batch.launch.fail_lanes(
            fr,
            partial[gs],
            "barrier-divergence",
            f"{what} reached by {int(counts[g])} of the "
            f"{int(np.broadcast_to(full, counts.shape)[g])} work-items of a work-group: "
            "collectives must be reached by every work-item (spec §1.13.15)",
            call.loc,
        )


# ----------------------------------------------------------------------------- built-ins


def _identity(op: str, t: Type) -> Any:
    e = element_of(t)
    return np.asarray(identity_value(op, e)).astype(e.dtype)


def _sg_unit(call: Call, fr: Frame) -> int | None:
    coll = call.builtin.collective
    if coll is None or coll.scope != "sg":
        return None
    return int(fr.batch.launch.cfg.sub_group_size)


def _collective(call: Call, fr: Frame, args: list[Any]) -> Any:
    coll = call.builtin.collective
    assert coll is not None
    mode, op = coll.mode, coll.op
    check_complete(call, fr, f"clpy.{call.builtin.name}")
    t = call.params[0]
    unit = _sg_unit(call, fr)
    if mode == "broadcast":
        return _broadcast(call, fr, args, t, unit)
    x = args[0]
    ident: Any = None
    if op == "user":
        fn = call.expr.combiner
        if fn is None:
            fr.batch.launch.fail(
                "unsupported",
                f"clpy.{call.builtin.name} is what "
                f"clpy.{call.builtin.name[: -len('_user')]}(x, r) compiles to "
                "for a @clpy.reduction r; call that form",
                call.loc,
            )
            return x
        comb = user_combiner(fn, fr, call.checks)
        ident = args[1]
        if mode == "scan_exclusive":
            ident = tmap(
                lambda a: (
                    _leaf(a).reshape(-1)[0]
                    if _leaf(a).ndim == 0 or isinstance(t, ScalarType)
                    else a
                ),
                ident,
            )
    else:
        if mode in ("all", "any"):
            mode = "reduce"
            x = (np.asarray(x) != 0).astype(np.int32)
        comb = builtin_combiner(op)
        ident = _identity(op, t)
    normalize = op.startswith("logical")
    ident_for = _ident_leaf(ident, t)

    def run(v: Tree) -> Tree:
        return chunked(v, mode, comb, ident_for, normalize)

    return apply_grouped(fr, x, t, run, unit)


def _ident_leaf(ident: Any, t: Type) -> Any:
    """The identity shaped to broadcast against ``(lead..., G, n)`` leaves."""
    if ident is None:
        return None
    if isinstance(ident, dict):
        assert isinstance(t, StructType)
        return {name: _ident_leaf(ident[name], ft) for name, ft in t.fields}
    a = np.asarray(ident)
    if isinstance(t, VectorType):
        a = a.reshape(-1)[: t.n] if a.size >= t.n else np.broadcast_to(a.reshape(-1), (t.n,))
        return a.reshape((t.n, 1, 1))
    return a.reshape(-1)[0] if a.size else a


def _broadcast(call: Call, fr: Frame, args: list[Any], t: Type, unit: int | None) -> Any:
    ids = [np.asarray(a, np.int64) for a in args[1:]]
    lsize = tuple(fr.batch.launch.lsize) + (1, 1, 1)
    if len(ids) == 1:
        lin = ids[0]
    elif len(ids) == 2:
        lin = ids[1] * lsize[0] + ids[0]
    else:
        lin = (ids[2] * lsize[1] + ids[1]) * lsize[0] + ids[0]
    both = {"v": _full(args[0], t, fr.shape), "lin": np.broadcast_to(lin, fr.shape)}
    return apply_grouped(fr, both, None, _select_by_lin, unit)["v"]


def _select_by_lin(v: Tree) -> Tree:
    lin = np.asarray(v["lin"])[..., :1]  # the same for every item of a group
    x = v["v"]
    pos = np.clip(lin, 0, _leaf(x).shape[-1] - 1)

    def take(a: np.ndarray) -> np.ndarray:
        p = np.broadcast_to(pos, a.shape[:-1] + (1,))
        return np.repeat(np.take_along_axis(a, p, -1), a.shape[-1], -1)

    return {"v": tmap(take, x), "lin": v["lin"]}


def _info(call: Call, fr: Frame, args: list[Any]) -> Any:
    name = call.builtin.name
    launch = fr.batch.launch
    sg = int(launch.cfg.sub_group_size)
    w = launch.W
    llid = np.broadcast_to(np.asarray(fr.llid, np.int64), fr.shape)
    nsg = -(-w // sg)
    if name == "get_sub_group_local_id":
        return (llid % sg).astype(np.uint32)
    if name == "get_sub_group_id":
        return (llid // sg).astype(np.uint32)
    if name in ("get_num_sub_groups", "get_enqueued_num_sub_groups"):
        return np.uint32(nsg)
    if name == "get_max_sub_group_size":
        return np.uint32(min(sg, w))
    if name == "get_sub_group_size":
        return np.minimum(sg, w - (llid // sg) * sg).astype(np.uint32)
    raise NotImplementedError(name)


def _sg_barrier(call: Call, fr: Frame, args: list[Any]) -> Any:
    return barrier(call, fr, args)


IMPLS: dict[str, Any] = {}
for _name, _b in REGISTRY.items():  # every collective declaration, by its mode
    _c = _b.collective
    if _c is not None:
        IMPLS[_name] = (
            _info if _c.mode == "info" else _sg_barrier if _c.mode == "barrier" else _collective
        )
