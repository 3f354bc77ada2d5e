# mypy: disable-error-code="valid-type"
"""``argmin``/``argmax``: the first index of the smallest/largest element (NumPy's rules on
ties and NaNs), as a reduction over (value, index) structs: one launch on OpenCL devices
(the last group to finish combines, ``reductions.last_ticket``), two on the simulator."""

# No `from __future__ import annotations`: kernel annotations such as Global[t] name closure
# variables, which Python captures only when the annotations are evaluated eagerly.

import functools
import threading
from typing import Any, no_type_check

import numpy as np

import clpy
from clpy import Global, int32
from clpy.algorithms._core import Input, as_input, element_type, resolve_op, tuning
from clpy.algorithms.reductions import (
    _I32_LIMIT,
    _Prepared,
    acq_rel,
    index_type,
    last_ticket,
    launch_prepared,
    prepared,
    read_result,
    ticket_counter,
)
from clpy.builtins.reductions import Reduction
from clpy.kernel import Func
from clpy.types import catalog as C
from clpy.types.core import ScalarType
from clpy.vectors import vector


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def _arg_reduction(t: ScalarType, idx: ScalarType, want_max: bool) -> tuple[Any, Reduction]:
    """A struct (val, idx) and the reduction that keeps the extreme value, the first index on
    ties and the first NaN (NumPy's rule)."""
    S = clpy.struct(
        type(f"ValIdx_{t.name}_{idx.name}", (), {"__annotations__": {"val": t, "idx": idx}})
    )  # noqa: N806
    big = _I32_LIMIT if idx is C.int_ else 2**63 - 1
    if t.is_float:
        worst = -np.inf if want_max else np.inf
    else:
        info = np.iinfo(t.dtype)
        worst = info.min if want_max else info.max

    if want_max:

        def argmax_first(a: S, b: S) -> S:
            anan = a.val != a.val
            bnan = b.val != b.val
            if anan or bnan:
                return a if anan and (not bnan or a.idx < b.idx) else b
            return a if a.val > b.val or (a.val == b.val and a.idx < b.idx) else b

        fn = argmax_first
    else:

        def argmin_first(a: S, b: S) -> S:
            anan = a.val != a.val
            bnan = b.val != b.val
            if anan or bnan:
                return a if anan and (not bnan or a.idx < b.idx) else b
            return a if a.val < b.val or (a.val == b.val and a.idx < b.idx) else b

        fn = argmin_first
    return S, Reduction(Func(fn), S(worst, big))


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def _arg_kernel(t: ScalarType, idx: ScalarType, want_max: bool, vec: int) -> Any:
    S, red = _arg_reduction(t, idx, want_max)  # noqa: N806
    combine, I = red.func, idx  # noqa: N806

    if vec == 4:  # 4-lane loads: more bytes in flight per work-item

        @clpy.kernel
        def arg_partial(x: Global[t], part: Global[S], n: I, ident: S):
            gid = I(clpy.get_global_id(0))
            stride = I(clpy.get_global_size(0))
            nv = n // 4
            acc = ident
            i = gid
            while i < nv:
                v = clpy.vload4(i, x)
                b = i * 4
                acc = combine(acc, S(v.x, b))
                acc = combine(acc, S(v.y, b + 1))
                acc = combine(acc, S(v.z, b + 2))
                acc = combine(acc, S(v.w, b + 3))
                i += stride
            j = nv * 4 + gid
            if j < n:
                acc = combine(acc, S(x[j], j))
            r = clpy.work_group_reduce(acc, red)
            if clpy.get_local_id(0) == 0:
                part[clpy.get_group_id(0)] = r

    else:

        @clpy.kernel
        def arg_partial(x: Global[t], part: Global[S], n: I, ident: S):
            i = I(clpy.get_global_id(0))
            stride = I(clpy.get_global_size(0))
            acc = ident
            while i < n:
                acc = combine(acc, S(x[i], i))
                i += stride
            r = clpy.work_group_reduce(acc, red)
            if clpy.get_local_id(0) == 0:
                part[clpy.get_group_id(0)] = r

    @clpy.kernel
    def arg_final(part: Global[S], out: Global[S], n: I, ident: S):
        i = I(clpy.get_global_id(0))
        acc = ident
        while i < n:
            acc = combine(acc, part[i])
            i += I(clpy.get_global_size(0))
        r = clpy.work_group_reduce(acc, red)
        if clpy.get_local_id(0) == 0:
            out[0] = r

    return arg_partial, arg_final


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def _arg_once_kernel(t: ScalarType, idx: ScalarType, want_max: bool, wg: int, acqrel: bool) -> Any:
    """The whole argmax/argmin in one launch (OpenCL devices): a grid-stride share of ``x``
    per group, two 4-lane loads in flight per work-item, then the last group to finish
    combines the groups' results (``last_ticket``)."""
    S, red = _arg_reduction(t, idx, want_max)  # noqa: N806
    combine, I = red.func, idx  # noqa: N806
    took_last_ticket, parts_share = last_ticket(S, resolve_op(red, S), wg, acqrel)

    @clpy.func
    def four(acc: S, v: vector(t, 4), b: I) -> S:
        acc = combine(acc, S(v.x, b))
        acc = combine(acc, S(v.y, b + 1))
        acc = combine(acc, S(v.z, b + 2))
        return combine(acc, S(v.w, b + 3))

    @clpy.kernel
    def arg_once(
        x: Global[t],
        part: Global[S],
        out: Global[S],
        counter: Global[int32],
        n: I,
        ident: S,
        groups: int32,
    ):
        gid = I(clpy.get_global_id(0))
        stride = I(clpy.get_global_size(0))
        nv = n // 4
        a0 = ident
        a1 = ident
        i = gid
        while i + stride < nv:
            v0 = clpy.vload4(i, x)
            v1 = clpy.vload4(i + stride, x)
            a0 = four(a0, v0, i * 4)
            a1 = four(a1, v1, (i + stride) * 4)
            i += stride * 2
        if i < nv:
            a0 = four(a0, clpy.vload4(i, x), i * 4)
        acc = combine(a0, a1)  # the first index on ties whatever the order
        j = nv * 4 + gid
        if j < n:
            acc = combine(acc, S(x[j], j))
        flag = clpy.local_array(int32, 1)
        r = clpy.work_group_reduce(acc, red)
        if took_last_ticket(r, part, counter, groups, flag) != 0:
            r2 = clpy.work_group_reduce(parts_share(part, groups, ident), red)
            if clpy.get_local_id(0) == 0:
                out[0] = r2

    return arg_once


def _prepare_arg(inp: Input, t: ScalarType, want_max: bool) -> _Prepared:
    place, tn = inp.place, tuning(inp.place.dev)
    n, wg = inp.count, tn.wg
    vec = 4 if tn.vec == 4 else 1
    groups = max(1, min(tn.groups, -(-n // (wg * vec))))
    idx = index_type(n, groups * wg * vec)
    S, red = _arg_reduction(t, idx, want_max)  # noqa: N806
    ident = red.identity
    part = place.scratch("arg.part", groups, S.dtype)
    out = place.scratch("arg.out", 1, S.dtype)
    host = np.empty(1, S.dtype)
    nn = idx.dtype.type(n)
    if not place.is_sim and vec == 4:  # one launch
        k = _arg_once_kernel(t, idx, want_max, wg, acq_rel(place.dev))
        args = (part, out, ticket_counter(place), nn, ident, np.int32(groups))
        return _Prepared(k[(groups * wg,), (wg,)], args, out, host)
    kp, kf = _arg_kernel(t, idx, want_max, vec)  # the simulator: two launches
    last = (kf[(wg,), (wg,)], (part, out, idx.dtype.type(groups), ident))
    return _Prepared(kp[(groups * wg,), (wg,)], (part, nn, ident), out, host, last)


def _arg(x: Any, device: Any, want_max: bool) -> np.int64:
    name = "argmax" if want_max else "argmin"
    inp = as_input(x, device)
    t = element_type(inp.dtype, inp.shape, "+")
    if not isinstance(t, ScalarType):
        raise TypeError(f"x: {name} takes a 1-d array of numbers, not an array of {t}")
    n = inp.count
    if n == 0:
        raise ValueError(f"{name} of an empty array (x has no elements)")
    place = inp.place
    key = (
        "arg",
        threading.get_ident(),
        t,
        want_max,
        n,
    )
    pr = prepared(place, key, lambda: _prepare_arg(inp, t, want_max))
    launch_prepared(pr, inp)
    if pr.two_pass is not None:
        last, args = pr.two_pass
        last(*args, device=place.launch_on, wait=False)
    return np.int64(read_result(place, pr)["idx"])


def argmax(x: Any, device: Any = None) -> np.int64:
    """The index of the largest element of a 1-d ``x`` (the first one on ties, the first NaN
    if there is one, as ``np.argmax``)."""
    return _arg(x, device, True)


def argmin(x: Any, device: Any = None) -> np.int64:
    """The index of the smallest element of a 1-d ``x`` (the first one on ties, the first NaN
    if there is one, as ``np.argmin``)."""
    return _arg(x, device, False)


__all__ = ["argmax", "argmin"]
