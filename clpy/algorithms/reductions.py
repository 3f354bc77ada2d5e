# mypy: disable-error-code="valid-type"
"""Device-wide reductions: ``reduce`` and ``segmented_reduce`` (``argmin``/``argmax``:
extrema.py, with the same machinery).

``groups`` work-groups (enough to fill the device, from its tuning) walk the array
grid-stride, each work-item combining into private accumulators (scalars of 4 bytes or less
are read as 4-lane vectors, ``vload4``, when the operator works lane-wise; two loads in
flight either way: ``grid_share``), then one ``clpy.work_group_reduce(acc, op)`` per group.
On OpenCL devices that is one launch: the group that takes the last ticket of an atomic
counter combines the groups' results (``last_ticket``: release/acquire fences, no
forward-progress assumption). The simulator runs two launches (a second, single group
combines), since it orders groups only at launch boundaries and would report the
last-ticket reads as races. Memory traffic is one read
of the input. A reduction's launch, arguments and result buffers are prepared once per
(queue, thread, type, operator, length) and reused; the result comes back with one read.

The combination order is not the array's order: like the collectives (and OpenMP), a
reduction's operator must be associative and commutative (floating-point sums are rounded
in an unspecified order: compare with a tolerance).
"""

# No `from __future__ import annotations`: kernel annotations such as Global[t] name closure
# variables, which Python captures only when the annotations are evaluated eagerly.

import functools
import threading
import time
from dataclasses import dataclass
from typing import Any, no_type_check

import numpy as np

import clpy
from clpy import Global, Local, int32
from clpy.algorithms._core import (
    Input,
    Op,
    as_input,
    element_type,
    queue_cache,
    resolve_op,
    tuning,
)
from clpy.algorithms.bound import BoundLaunch
from clpy.runtime.transfers import pinned_array
from clpy.types import catalog as C
from clpy.types.core import ScalarType, Type
from clpy.vectors import vector

_I32_LIMIT = 2**31 - 1


def index_type(count: int, slack: int) -> ScalarType:
    """``int`` while every index a kernel forms stays below 2^31, else ``long``."""
    return C.int_ if count + slack < _I32_LIMIT else C.long


@functools.cache
@no_type_check  # device functions: clpy types them per call
def grid_share(t: Type, op: Op, idx: ScalarType, vec: int) -> Any:
    """``share(x, n, ident)``: this work-item's combination of its grid-stride share of
    ``x[:n]``, two loads in flight (``vec == 4``: 4-lane loads, ``vload4``, then the lanes
    combined; the last ``n % 4`` elements by the first work-items). The prologue of every
    reduction kernel here."""
    combine, I = op.combine, idx  # noqa: N806

    if vec == 4:
        VT = vector(t, 4)  # noqa: N806

        @clpy.func
        def share_v4(x: Global[t], n: I, ident: t) -> t:
            gid = I(clpy.get_global_id(0))
            stride = I(clpy.get_global_size(0))
            nv = n // 4
            a0 = VT(ident)
            a1 = VT(ident)
            i = gid
            while i + stride < nv:
                a0 = combine(a0, clpy.vload4(i, x))
                a1 = combine(a1, clpy.vload4(i + stride, x))
                i += stride * 2
            if i < nv:
                a0 = combine(a0, clpy.vload4(i, x))
            accv = combine(a0, a1)
            acc = combine(combine(accv.x, accv.y), combine(accv.z, accv.w))
            j = nv * 4 + gid
            if j < n:
                acc = combine(acc, x[j])
            return acc

        return share_v4

    @clpy.func
    def share(x: Global[t], n: I, ident: t) -> t:
        i = I(clpy.get_global_id(0))
        stride = I(clpy.get_global_size(0))
        a0 = ident
        a1 = ident
        while i + stride < n:
            a0 = combine(a0, x[i])
            a1 = combine(a1, x[i + stride])
            i += stride * 2
        if i < n:
            a0 = combine(a0, x[i])
        return combine(a0, a1)

    return share


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def _partial_kernel(t: Type, op: Op, idx: ScalarType, vec: int) -> Any:
    """Per group: the combination of a grid-stride share of ``x[:n]`` → ``part[group]``."""
    OP, I, share = op.op, idx, grid_share(t, op, idx, vec)  # noqa: N806

    @clpy.kernel
    def reduce_partial(x: Global[t], part: Global[t], n: I, ident: t):
        r = clpy.work_group_reduce(share(x, n, ident), OP)
        if clpy.get_local_id(0) == 0:
            part[clpy.get_group_id(0)] = r

    return reduce_partial


def acq_rel(dev: Any) -> bool:
    """Whether ``dev`` takes release/acquire fences (OpenCL C 2.0, or 3.0 with
    ``__opencl_c_atomic_order_acq_rel`` and ``__opencl_c_atomic_scope_device``)."""
    tgt = dev.target
    return bool(
        tgt.version >= (2, 0)
        and tgt.has("__opencl_c_atomic_order_acq_rel")
        and tgt.has("__opencl_c_atomic_scope_device")
    )


@functools.cache
@no_type_check  # device functions: clpy types them per call
def last_ticket(t: Type, op: Op, wg: int, acqrel: bool) -> tuple[Any, Any]:
    """The "last group combines" step of a one-launch reduction, as two device functions:

    ``took_last_ticket(r, part, counter, groups, flag)``, called by every work-item of every
    group with its group's result ``r``: work-item 0 stores ``r`` in ``part[group]`` and takes
    a ticket from ``counter``; non-zero (in every work-item of the group) for the group that
    took the last ticket, which also resets ``counter`` to 0 for the next launch. ``flag``:
    one ``int`` of local memory. ``parts_share(part, groups, ident)``: this work-item's
    combination of ``part[lid::wg]``, to be combined by ``work_group_reduce`` in the kernel
    body (lowered collectives need the kernel's local scratch).

    Ordering (OpenCL 2.0 §3.3.6 fences, §6.13.11 atomics; the CUDA ``threadFenceReduction``
    pattern): work-item 0 of each group stores the group's part, then a *release* fence
    (device scope), then takes a ticket with an atomic increment (read-modify-writes, so the
    increments form one release sequence on ``counter``). The work-item that reads the last
    ticket has read every other group's increment; its *acquire* fence after that read makes
    every part stored before those increments visible to it, and the group barrier (global
    fence) passes that on to the other work-items of its group. On OpenCL C 1.2 targets (or
    3.0 without acquire/release) ``mem_fence(CLK_GLOBAL_MEM_FENCE)`` stands for both fences,
    as in the 1.x memory model. Nothing waits on another group: no forward-progress
    assumption."""
    combine, WG = op.combine, wg  # noqa: N806

    if acqrel:

        @clpy.func
        def release() -> None:
            clpy.atomic_work_item_fence(
                clpy.CLK_GLOBAL_MEM_FENCE, clpy.memory_order_release, clpy.memory_scope_device
            )

        @clpy.func
        def acquire() -> None:
            clpy.atomic_work_item_fence(
                clpy.CLK_GLOBAL_MEM_FENCE, clpy.memory_order_acquire, clpy.memory_scope_device
            )

    else:

        @clpy.func
        def release() -> None:
            clpy.mem_fence(clpy.CLK_GLOBAL_MEM_FENCE)

        @clpy.func
        def acquire() -> None:
            clpy.mem_fence(clpy.CLK_GLOBAL_MEM_FENCE)

    @clpy.func
    def took_last_ticket(
        r: t, part: Global[t], counter: Global[int32], groups: int32, flag: Local[int32]
    ) -> int32:
        if clpy.get_local_id(0) == 0:
            part[clpy.get_group_id(0)] = r
            release()
            last = clpy.atomic_inc(counter, 0) == groups - 1
            if last:
                acquire()
                clpy.atomic_xchg(counter, 0, 0)  # every ticket is taken: ready for the next launch
            flag[0] = 1 if last else 0
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE | clpy.CLK_GLOBAL_MEM_FENCE)
        return flag[0]

    @clpy.func
    def parts_share(part: Global[t], groups: int32, ident: t) -> t:
        acc = ident
        k = clpy.get_local_id(0)
        while k < groups:
            acc = combine(acc, part[k])
            k += WG
        return acc

    return took_last_ticket, parts_share


@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def _once_kernel(t: Type, op: Op, idx: ScalarType, vec: int, wg: int, acqrel: bool) -> Any:
    """The whole reduction in one launch: each group combines a grid-stride share of
    ``x[:n]`` (``grid_share``) into its result; the group that takes the last ticket
    combines the groups' results (``last_ticket``)."""
    OP, I, share = op.op, idx, grid_share(t, op, idx, vec)  # noqa: N806
    took_last_ticket, parts_share = last_ticket(t, op, wg, acqrel)

    @clpy.kernel
    def reduce_once(
        x: Global[t],
        part: Global[t],
        out: Global[t],
        counter: Global[int32],
        n: I,
        ident: t,
        groups: int32,
    ):
        flag = clpy.local_array(int32, 1)
        r = clpy.work_group_reduce(share(x, n, ident), OP)
        if took_last_ticket(r, part, counter, groups, flag) != 0:
            r2 = clpy.work_group_reduce(parts_share(part, groups, ident), OP)
            if clpy.get_local_id(0) == 0:
                out[0] = r2

    return reduce_once


def ticket_counter(place: Any) -> Any:
    """A zeroed ``int32`` ticket counter per device queue (the last group resets it)."""
    return queue_cache(place).get(("counter",), lambda: place.zeros(1, np.int32))


@dataclass(eq=False)
class _Prepared:
    """What one (queue, thread, type, operator, length) reduction reuses from call to call:
    the bound launch, its arguments and a host buffer for the result."""

    launch: Any
    args: tuple[Any, ...]  # after x
    out: Any
    host: np.ndarray
    two_pass: Any = None  # the simulator's second launch (and its arguments)
    bound: Any = None  # the BoundLaunch, after the first launch (OpenCL, BOUND_LAUNCH)


def prepared(place: Any, key: Any, make: Any) -> _Prepared:
    """The ``_Prepared`` of ``key`` on ``place``'s queue (made by ``make()`` the first
    time; kept in its ``QueueCache``)."""
    return queue_cache(place).get(key, make)


def _prepare(inp: Input, t: Type, op: Op, tn: Any) -> _Prepared:
    place = inp.place
    n = inp.count
    wg = tn.wg
    vec = tn.vec if op.vectorizable and isinstance(t, ScalarType) and t.size <= 4 else 1
    groups = max(1, min(tn.groups, -(-n // (wg * vec))))
    idx = index_type(n, groups * wg * vec)
    ident = op.host_identity(t)
    part = place.scratch("reduce.part", (groups, *inp.shape[1:]), inp.dtype)
    out = place.scratch("reduce.out", (1, *inp.shape[1:]), inp.dtype)
    host = np.empty((1, *inp.shape[1:]), inp.dtype)
    if not place.is_sim:  # one launch (see last_ticket)
        if PINNED_RESULT:  # one DMA into page-locked memory, no staging copy by the driver
            import pyopencl as cl

            host = pinned_array(cl, place.cl_queue, host.shape, host.dtype)
        out = _result_buffer(place, (1, *inp.shape[1:]), inp.dtype)
        once = _once_kernel(t, op, idx, vec, wg, acq_rel(place.dev))
        args = (part, out, ticket_counter(place), idx.dtype.type(n), ident, np.int32(groups))
        return _Prepared(once[(groups * wg,), (wg,)], args, out, host)
    # The simulator: two launches (it has no order between groups but barriers, so it would
    # report the last-ticket pattern's reads of other groups' parts as races).
    k = _partial_kernel(t, op, idx, vec)
    first = k[(groups * wg,), (wg,)]
    if groups == 1:
        return _Prepared(first, (part, idx.dtype.type(n), ident), part, host)
    last = _partial_kernel(t, op, C.int_, 1)[(wg,), (wg,)]
    return _Prepared(
        first,
        (part, idx.dtype.type(n), ident),
        out,
        host,
        (last, (part, out, np.int32(groups), ident)),
    )


def launch_prepared(pr: _Prepared, inp: Input) -> None:
    """Enqueue ``pr``'s launch on ``inp``: through its BoundLaunch when it has one and the
    input is a whole pyopencl buffer (no offset), else through the launcher (which makes
    the BoundLaunch on OpenCL when BOUND_LAUNCH is set)."""
    data = inp.data
    if pr.bound is not None and getattr(data, "offset", 1) == 0:
        pr.bound(data.base_data)
        return
    place = inp.place
    pr.launch(data, *pr.args, device=place.launch_on, wait=False)
    if BOUND_LAUNCH and pr.bound is None and not place.is_sim and pr.two_pass is None:
        pr.bound = BoundLaunch(pr.launch, (data, *pr.args), place)


def reduce_on(inp: Input, t: Type, op: Op, tune: Any = None) -> Any:
    """Enqueue the reduction of ``inp`` (no wait); returns its ``_Prepared`` (the result is
    in ``.out``, a one-element device array of ``t``)."""
    place = inp.place
    key = (
        "reduce",
        threading.get_ident(),
        t,
        op,
        inp.count,
        tune,
        RESULT_PATH,
        BOUND_LAUNCH,
        PINNED_RESULT,
    )
    pr = prepared(place, key, lambda: _prepare(inp, t, op, tune or tuning(place.dev)))
    launch_prepared(pr, inp)
    if pr.two_pass is not None:
        last, args = pr.two_pass
        last(*args, device=place.launch_on, wait=False)
    return pr


# How a reduction's one result comes back on GPUs (benchmarks/algorithms.py compares them):
# "read": a blocking read (default; polling the read's event measured slower on an H100);
# "poll": a non-blocking read whose event is polled for at most POLL_S seconds; "map": the
# result lives in host-allocated memory (CL_MEM_ALLOC_HOST_PTR) and a blocking map reads it
# (no copy command where the driver maps host memory directly). CPU devices never "poll".
RESULT_PATH = "read"
POLL_S = 0.005
# "wait": a non-blocking read, then a wait on its event. BOUND_LAUNCH: later launches of a
# prepared reduction skip the launcher (bound.py). PINNED_RESULT: the result is read into
# page-locked host memory (one DMA; a pageable destination costs the driver a staging copy).
BOUND_LAUNCH = True
PINNED_RESULT = True


def _result_buffer(place: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    """A device array for one result, host-allocated when RESULT_PATH is "map"."""
    if RESULT_PATH != "map" or place.is_sim:
        return place.scratch("reduce.out", shape, dtype)
    import pyopencl as cl
    import pyopencl.array as cla

    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    mf = cl.mem_flags
    buf = cl.Buffer(place.cl_queue.context, mf.READ_WRITE | mf.ALLOC_HOST_PTR, nbytes)
    return cla.Array(place.cl_queue, shape, dtype, data=buf)


def read_result(place: Any, pr: _Prepared) -> Any:
    """The one result, read with one copy into the prepared host buffer (or one map)."""
    if place.is_sim:
        v = pr.out.get()[0]
    else:
        import pyopencl as cl

        q = place.cl_queue
        info = place.dev.info
        path = RESULT_PATH
        if path == "poll" and (info is None or info.device_type != "gpu"):
            path = "read"  # a spinning host thread would take a core from the kernel
        if path == "map" and pr.out.data.flags & cl.mem_flags.ALLOC_HOST_PTR:
            m, _ = cl.enqueue_map_buffer(
                q, pr.out.data, cl.map_flags.READ, 0, pr.host.shape, pr.host.dtype
            )
            pr.host[...] = m
            m.base.release(queue=q)
        elif path == "poll":
            evt = cl.enqueue_copy(q, pr.host, pr.out.data, is_blocking=False)
            q.flush()
            end = time.perf_counter() + POLL_S
            while evt.command_execution_status > 0 and time.perf_counter() < end:
                pass  # CL_COMPLETE is 0; errors are negative (evt.wait() raises them)
            evt.wait()
        elif path == "wait":
            cl.enqueue_copy(q, pr.host, pr.out.data, is_blocking=False).wait()
        else:
            cl.enqueue_copy(q, pr.host, pr.out.data, is_blocking=True)
        v = pr.host[0]
    return v.copy() if isinstance(v, (np.ndarray, np.void)) else v


def reduce(x: Any, op: Any = "+", device: Any = None) -> Any:
    """Combine all elements of ``x`` with ``op`` (``"+" "-" "*" "&" "|" "^" "&&" "||" "min"
    "max"`` or a ``@clpy.reduction``): a NumPy scalar (a lanes array for vectors, a record for
    structs). An empty ``x`` gives the identity.

    >>> clpy.algorithms.reduce(np.arange(10, dtype=np.int32), "+")
    np.int32(45)
    """
    inp = as_input(x, device)
    t = element_type(inp.dtype, inp.shape, op)
    o = resolve_op(op, t)
    if inp.count == 0:
        return o.host_identity(t)
    return read_result(inp.place, reduce_on(inp, t, o))


# --- segmented reduction ----------------------------------------------------------------------
@functools.cache
@no_type_check  # kernel bodies are clpy, typed by clpy
def _segment_kernel(t: Type, op: Op, idx: ScalarType) -> Any:
    combine, OP, I = op.combine, op.op, idx  # noqa: N806

    @clpy.kernel
    def segment_reduce(x: Global[t], offsets: Global[I], out: Global[t], ident: t):
        s = clpy.get_group_id(0)
        b = offsets[s]
        e = offsets[s + 1]
        acc = ident
        i = b + I(clpy.get_local_id(0))
        while i < e:
            acc = combine(acc, x[i])
            i += I(clpy.get_local_size(0))
        r = clpy.work_group_reduce(acc, OP)
        if clpy.get_local_id(0) == 0:
            out[s] = r

    return segment_reduce


def segmented_reduce(x: Any, offsets: Any, op: Any = "+", device: Any = None) -> Any:
    """``out[i] = reduce(x[offsets[i]:offsets[i + 1]], op)`` for each of the
    ``len(offsets) - 1`` segments (an empty segment gives the identity). ``offsets``: a
    non-decreasing integer array from 0 ... to at most ``len(x)``, on the host or on ``x``'s
    device. The result has ``x``'s kind (NumPy, DeviceArray or pyopencl array)."""
    inp = as_input(x, device)
    t = element_type(inp.dtype, inp.shape, op)
    o = resolve_op(op, t)
    offs = as_input(offsets, device, "offsets", inp.place)
    host_offs = offs.data.get() if offs.kind != "numpy" else np.asarray(offsets)
    if host_offs.ndim != 1 or host_offs.dtype.kind not in "iu":
        raise TypeError(
            f"offsets: expected a 1-d integer array, got {host_offs.dtype} {host_offs.shape}"
        )
    m = host_offs.size - 1
    if m < 0:
        raise ValueError("offsets: needs at least one element (len(offsets) - 1 segments)")
    if m and (np.any(np.diff(host_offs) < 0) or host_offs[0] < 0 or host_offs[-1] > inp.count):
        raise ValueError(f"offsets: must be non-decreasing and within [0, {inp.count}]")
    place = inp.place
    out = place.empty((m, *inp.shape[1:]), inp.dtype)
    if m:
        tn = tuning(place.dev)
        idx = index_type(inp.count, tn.wg)
        dev_offs = place.upload(host_offs.astype(idx.dtype))
        k = _segment_kernel(t, o, idx)
        k[(m * tn.wg,), (tn.wg,)](
            inp.data, dev_offs, out, o.host_identity(t), device=place.launch_on, wait=False
        )
    return inp.result(out)


__all__ = [
    "reduce",
    "segmented_reduce",
    "reduce_on",
    "read_result",
    "index_type",
]
