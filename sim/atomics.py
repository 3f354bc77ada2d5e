"""Atomic built-ins in the simulator, vectorized over lanes.

The results are those of one sequential order of the atomic operations of a call: increasing
work-item id (group-major, then local linear id) by default, or a seeded random permutation
with ``clpy.sim.config(atomic_order="shuffled", seed=...)``. Lanes are sorted by (address,
order); every lane's fetched value comes from a segmented prefix over the lanes hitting the
same address before it (a log-step scan, vectorized), and each address receives the segment's
total. Compare-exchange resolves successes address by address in rounds (one success per
address per round, typically one or two rounds), never looping over lanes. Floating-point
adds are summed in order exactly when the call touches at most ``SEQUENTIAL_SEGMENTS``
addresses, otherwise by the log-step scan (then rounding may differ from a sequential order,
which the spec leaves unspecified anyway).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.builtins.atomics import ATOMICS
from clpy.ir.operators import BINARY
from clpy_sim.frame import Frame
from clpy_sim.state import frame_wids

if TYPE_CHECKING:
    from clpy_sim.call import Call

SEQUENTIAL_SEGMENTS = 256

# Read-modify-write operators: NumPy ufuncs from the operator table (clpy/ir/operators.py).
_COMBINE: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    name: BINARY[name].ufunc for name in ("add", "min", "max", "and", "or", "xor")
}


def _order_key(call: Call, fr: Frame, n: int) -> np.ndarray:
    wid = np.asarray(frame_wids(fr)).ravel()
    cfg = fr.batch.launch.cfg
    if cfg.atomic_order != "shuffled":
        return wid
    # reproducible per seed, batch, call site and barrier interval
    rng = np.random.default_rng(
        (int(cfg.seed), fr.batch.gfirst, call.loc.line, call.loc.col, fr.batch.barriers)
    )
    return rng.permutation(n)[np.argsort(np.argsort(wid))]


def _segmented_scan(v: np.ndarray, seg_start: np.ndarray, f: Any) -> np.ndarray:
    """Inclusive scan of ``v`` with ``f`` restarting at each True of ``seg_start``."""
    out = v.copy()
    n = len(v)
    seg = np.cumsum(seg_start)
    d = 1
    while d < n:
        same = np.zeros(n, bool)
        same[d:] = seg[d:] == seg[:-d]
        shifted = np.empty_like(out)
        shifted[d:] = out[:-d]
        out = np.where(same, f(shifted, out) if f is not None else out, out)
        d <<= 1
    return out


def _stable_argsort(a: np.ndarray) -> np.ndarray:
    """Stable argsort of non-negative ints: LSD radix on 16-bit digits (NumPy sorts uint16
    stably by radix sort, in linear time)."""
    top = int(a.max()) if a.size else 0
    if top >= 1 << 32:
        return np.argsort(a, kind="stable")
    perm = np.argsort((a & 0xFFFF).astype(np.uint16), kind="stable")
    if top >= 1 << 16:
        hi = (a[perm] >> 16).astype(np.uint16)
        perm = perm[np.argsort(hi, kind="stable")]
    return perm


class _Sorted:
    """The lanes of one atomic call sorted by (address, order)."""

    def __init__(self, call: Call, fr: Frame, idx: np.ndarray) -> None:
        flat = np.asarray(idx).ravel()
        self.n = flat.size
        key = _order_key(call, fr, self.n)
        if self.n > 1 and np.all(key[1:] > key[:-1]):
            # lanes already in order: a stable sort by address suffices (narrow keys sort fast)
            self.perm = _stable_argsort(flat)
        else:
            self.perm = np.lexsort((key, flat))
        self.addr = flat[self.perm]
        self.start = np.ones(self.n, bool)
        self.start[1:] = self.addr[1:] != self.addr[:-1]
        self.last = np.ones(self.n, bool)
        self.last[:-1] = self.start[1:]
        self.seg = np.cumsum(self.start) - 1

    def sort(self, v: Any, dtype: np.dtype[Any], shape: tuple[int, int]) -> np.ndarray:
        return np.broadcast_to(np.asarray(v).astype(dtype, copy=False), shape).ravel()[self.perm]

    def unsort(self, v: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
        out = np.empty_like(v)
        out[self.perm] = v
        return out.reshape(shape)


def _fetch_op(op: str, data: np.ndarray, s: _Sorted, operand: np.ndarray) -> np.ndarray:
    """Apply ``op`` in order; return the old value seen by each (sorted) lane."""
    init = data[s.addr[s.start]][s.seg]  # per lane: its address's value before the call
    dt = data.dtype
    if op == "xchg":
        old = np.where(s.start, init, np.roll(operand, 1))
        data[s.addr[s.last]] = operand[s.last]
        return old
    if op in ("add", "sub", "inc", "dec"):
        if op in ("inc", "dec"):
            operand = np.ones(s.n, dt)
        sign_sub = op in ("sub", "dec")
        if dt.kind == "f":
            if sign_sub:
                operand = -operand
            starts = np.flatnonzero(s.start)
            if len(starts) <= SEQUENTIAL_SEGMENTS:
                old = np.empty(s.n, dt)
                bounds = np.append(starts, s.n)
                for a, b in zip(bounds[:-1], bounds[1:]):  # per address, not per lane
                    cs = np.cumsum(np.concatenate([init[a : a + 1], operand[a:b]]), dtype=dt)
                    old[a:b] = cs[:-1]
                    data[s.addr[a]] = cs[-1]
                return old
            inc = _segmented_scan(operand, s.start, np.add)
            old = init + np.where(s.start, dt.type(0), np.roll(inc, 1))
            data[s.addr[s.last]] = (init + inc)[s.last]
            return old.astype(dt)
        if op in ("inc", "dec"):  # the fetched value moves by the lane's rank at its address
            excl = (np.arange(s.n) - np.flatnonzero(s.start)[s.seg]).astype(dt)
            inc = excl + dt.type(1)
        else:
            cs = np.cumsum(operand, dtype=dt)  # integers wrap: segment sums by differences
            base = (cs - operand)[s.start]
            inc = cs - base[s.seg]
            excl = inc - operand
        old = (init - excl) if sign_sub else (init + excl)
        final = (init - inc) if sign_sub else (init + inc)
        data[s.addr[s.last]] = final[s.last].astype(dt)
        return old.astype(dt)
    f = _COMBINE[op]
    inc = _segmented_scan(operand, s.start, f)
    prev = np.roll(inc, 1)
    old = np.where(s.start, init, f(init, prev))
    data[s.addr[s.last]] = f(init, inc)[s.last]
    return old


def _cmpxchg(data: np.ndarray, s: _Sorted, cmp: np.ndarray, val: np.ndarray) -> np.ndarray:
    """Sequential compare-exchange per address, resolved in rounds of one success each."""
    dt = data.dtype
    as_bits = (
        (lambda a: a.view(np.uint64 if dt.itemsize == 8 else np.uint32))
        if dt.kind == "f"
        else (lambda a: a)
    )
    nseg = int(s.seg[-1]) + 1 if s.n else 0
    cur = data[s.addr[s.start]].copy()  # per segment
    ptr = np.flatnonzero(s.start)  # next unresolved lane of each segment
    end = np.append(ptr[1:], s.n)
    old = np.empty(s.n, dt)
    lane = np.arange(s.n)
    active = np.ones(nseg, bool)
    while np.count_nonzero(active):
        pending = lane >= ptr[s.seg]
        hit = pending & (as_bits(cmp) == as_bits(cur[s.seg])) & active[s.seg]
        first = np.full(nseg, s.n)
        np.minimum.at(first, s.seg[hit], lane[hit])
        upto = np.where(first < s.n, first, end - 1)  # lanes resolved in this round
        resolve = pending & active[s.seg] & (lane <= upto[s.seg])
        old[resolve] = cur[s.seg[resolve]]
        won = first < s.n
        cur[won] = val[first[won]]
        ptr = np.where(won, first + 1, end)
        active = won & (ptr < end)
    data[s.addr[s.start]] = cur
    return old


def _atomic(call: Call, fr: Frame, args: list[Any]) -> Any:
    spec = call.builtin.atomic
    assert spec is not None
    if spec.op == "fence":
        return None
    params = call.params
    indexed = not spec.explicit and len(params) == 2 + spec.nvals
    p = args[0]
    off = p.off + np.asarray(args[1], np.int64) if indexed else p.off
    rest = args[2 if indexed else 1 :]
    if p.mem.space != "local":
        fr.batch.ordered()  # across work-groups: in batch order, whatever the thread count
    idx = p.mem.element_indices(fr, off, call.loc)
    data = p.mem.flat_data()
    dt = data.dtype
    shape = fr.shape
    op = spec.op
    if (
        getattr(call.expr.type, "cl_name", "") == "void"
        and spec.ret == "old"
        and _discarded(op, data, idx, rest, shape, p.mem.space == "local")
    ):
        return dt.type(0)
    s = _Sorted(call, fr, idx)
    if op == "load":
        return data[np.broadcast_to(idx, shape)].copy()
    if op in ("store", "init", "flag_clear"):
        v = s.sort(0 if op == "flag_clear" else rest[0], dt, shape)
        data[s.addr[s.last]] = v[s.last]
        return None
    if op == "flag_set":
        old = _fetch_op("xchg", data, s, np.ones(s.n, dt))
        return s.unsort(old != 0, shape)
    if op == "cmpxchg":
        old = _cmpxchg(data, s, s.sort(rest[0], dt, shape), s.sort(rest[1], dt, shape))
        return s.unsort(old, shape)
    if op in ("cas_strong", "cas_weak"):
        ep = rest[0]
        expected = np.broadcast_to(np.asarray(ep.mem.load(fr, ep.off, call.loc), dt), shape)
        old = s.unsort(
            _cmpxchg(data, s, s.sort(expected, dt, shape), s.sort(rest[1], dt, shape)), shape
        )
        if dt.kind == "f":
            bits = np.uint64 if dt.itemsize == 8 else np.uint32
            ok = old.view(bits) == np.ascontiguousarray(expected).view(bits)
        else:
            ok = old == expected
        ep.mem.store(fr, ep.off, old, call.loc)
        return ok
    operand = s.sort(rest[0], dt, shape) if spec.nvals else np.zeros(s.n, dt)
    return s.unsort(_fetch_op(op, data, s, operand), shape)


_AT = {name: BINARY[name].ufunc for name in ("min", "max", "and", "or", "xor")}


def _discarded(
    op: str,
    data: np.ndarray,
    idx: np.ndarray,
    vals: list[Any],
    shape: tuple[int, int],
    whole: bool = False,
) -> bool:
    """Integer read-modify-writes whose results are unused: order-free final values (no
    sort). Returns False where the general path is needed. ``whole``: the batch owns all of
    ``data`` (local memory), which may then be rewritten in one pass; otherwise only the
    elements hit are written (other threads' batches may be storing to the others)."""
    dt = data.dtype
    if dt.kind not in "iu" or op not in ("add", "sub", "inc", "dec", *_AT):
        return False
    if not whole and idx.ndim == 2 and idx.shape[0] > 1 and idx.strides[0] == 0:
        return _discarded_rows(op, data, idx, vals, shape)
    flat = np.asarray(idx).ravel()
    if op in ("inc", "dec"):
        counts = np.bincount(flat, minlength=data.size)
        if whole:
            delta = counts if op == "inc" else -counts
            data += delta.astype(dt, copy=False) if dt.itemsize < 8 else delta.astype(dt)
            return True
        hit = np.flatnonzero(counts)
        delta = counts[hit] if op == "inc" else -counts[hit]
        data[hit] += delta.astype(dt, copy=False) if dt.itemsize < 8 else delta.astype(dt)
        return True
    v = np.broadcast_to(np.asarray(vals[0]).astype(dt, copy=False), shape).ravel()
    if op in ("add", "sub"):
        if dt.itemsize <= 4 and whole:  # exact in float64: |sum| < 2^20 * 2^32 per address
            sums = np.bincount(flat, weights=v, minlength=data.size).astype(np.int64)
            sums = sums if op == "add" else -sums
            data[...] = (data.astype(np.int64) + sums).astype(dt)
        elif dt.itemsize <= 4:
            counts = np.bincount(flat, minlength=data.size)
            hit = np.flatnonzero(counts)
            sums = np.bincount(flat, weights=v, minlength=data.size)[hit].astype(np.int64)
            sums = sums if op == "add" else -sums
            data[hit] = (data[hit].astype(np.int64) + sums).astype(dt)
        else:
            (np.add if op == "add" else np.subtract).at(data, flat, v)
        return True
    _AT[op].at(data, flat, v)
    return True


def _discarded_rows(
    op: str, data: np.ndarray, idx: np.ndarray, vals: list[Any], shape: tuple[int, int]
) -> bool:
    """``_discarded`` on global memory where every work-group of the batch hits the same
    addresses (``idx`` broadcast over the groups, e.g. ``atomic_add(h, lid, v)`` merging
    per-group histograms): the lanes' operands are first combined down the groups (a
    column sum, or the ufunc's reduction), then per address over the one row. Integer
    ``+``/``-`` wrap and ``min``/``max``/``and``/``or``/``xor`` are associative and
    commutative, so the final values are those of ``_discarded``'s general path."""
    dt = data.dtype
    row = np.ascontiguousarray(idx[0])  # (W,): the addresses of one group's lanes
    G = shape[0]
    if op in ("inc", "dec"):
        per = np.full(row.shape, G, np.int64)
        op = "add" if op == "inc" else "sub"
    else:
        v = np.broadcast_to(np.asarray(vals[0]).astype(dt, copy=False), shape)
        if op in ("add", "sub"):
            acc = np.uint64 if dt == np.uint64 else np.int64  # exact, or wrapping as dt does
            per = v.sum(axis=0, dtype=acc)
        else:
            per = _AT[op].reduce(v, axis=0)
    if row.size > 1 and not (row[1:] > row[:-1]).all():
        # several lanes of a group share an address: combine them per address
        order = np.argsort(row, kind="stable")
        row = row[order]
        start = np.ones(row.size, bool)
        start[1:] = row[1:] != row[:-1]
        firsts = np.flatnonzero(start)
        f = np.add if op in ("add", "sub") else _AT[op]
        per = f.reduceat(per[order], firsts)
        row = row[firsts]
    if op in ("add", "sub"):
        old = data[row].astype(per.dtype)
        data[row] = ((old + per) if op == "add" else (old - per)).astype(dt)
    else:
        data[row] = _AT[op](data[row], per).astype(dt, copy=False)
    return True


IMPLS: dict[str, Any] = {name: _atomic for name in ATOMICS}
