"""kernel_diag's host side (benchmarks/programs/kernel_diag.py): the launches' kernel names and
buffer addresses, the host-buffer modes that replace where clpy's and the original host's
arrays come from, the L2 flush before a launch, and ``Swap``, which puts another program
behind clpy's launch plans."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.programs import common
from clpy.runtime.devices import RUNTIME

NAMES: list[str] = []  # kernel name of each recorded event, in launch order
# The queue to finish before each launch (the *_sync builds): a kernel whose profiled start
# is taken before the copies ahead of it in the queue are done would include their tail.
SYNC: list[Any] = []


# The buffer arguments of each kernel's first launch in the current run (kernel name ->
# [(memory object, byte offset)]), for their device addresses (``addresses``).
BUFFERS: dict[str, list[tuple[Any, int]]] = {}


def note_buffers(kname: str, args: tuple[Any, ...]) -> None:
    if kname in BUFFERS:
        return
    import pyopencl as cl

    import clpy

    bufs: list[tuple[Any, int]] = []
    for a in args:
        if isinstance(a, clpy.DeviceArray) and a.cl_array is not None:
            bufs.append((a.cl_array.base_data, int(a.cl_array.offset)))
        elif isinstance(a, cl.Buffer):
            bufs.append((a, 0))
    BUFFERS[kname] = bufs


ADDRESS_SRC = """
__kernel void kdiag_address(__global ulong *out, __global char *p, ulong i)
{
    out[i] = (ulong)p;
}
"""


def addresses(ctx: Any, queue: Any, prgs: dict[int, Any]) -> dict[str, list[int]]:
    """The device addresses of the buffers ``BUFFERS`` noted (a one-item kernel writes each
    pointer it is given; run after the timed launches), then forget them."""
    import pyopencl as cl

    key = int(ctx.int_ptr)
    if key not in prgs:
        prg = cl.Program(ctx, ADDRESS_SRC).build()
        prgs[key] = (prg, cl.Kernel(prg, "kdiag_address"))
    _, k = prgs[key]
    flat = [(n, b, off) for n, bufs in BUFFERS.items() for b, off in bufs]
    if not flat:
        return {}
    out = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 8 * len(flat))
    for i, (_, b, _) in enumerate(flat):
        k.set_args(out, b, np.uint64(i))
        cl.enqueue_nd_range_kernel(queue, k, (1,), (1,))
    got = np.empty(len(flat), np.uint64)
    cl.enqueue_copy(queue, got, out)
    res: dict[str, list[int]] = {}
    for (n, _, off), a in zip(flat, got):
        res.setdefault(n, []).append(int(a) + off)
    BUFFERS.clear()
    return res


def layout(addrs: dict[str, list[int]]) -> str:
    """Each kernel's buffer arguments as MiB from the lowest address of the run, and that
    address's offset in a 2 MiB page (hex): where the allocator put them."""
    every = [a for v in addrs.values() for a in v]
    if not every:
        return ""
    lo = min(every)
    parts = [f"{k}: " + " ".join(f"{(a - lo) / 2**20:+.1f}" for a in v) for k, v in addrs.items()]
    return f"base {lo:#x}; " + "; ".join(parts)


# The *_flush builds: (queue, scratch buffer) to overwrite before each launch, so that every
# kernel starts with an L2 cache holding none of its data (H100: 50 MB of L2; the scratch is
# FLUSH_BYTES), the queue then finished.
FLUSH: list[tuple[Any, Any]] = []
FLUSH_BYTES = 256 << 20

# The *_delay builds: microseconds of busy waiting before each launch (a slower host loop:
# does the GPU's kernel time grow when it idles between short kernels?).
DELAY_US: list[float] = []
# Host time per launch call (microseconds), in launch order, for the timeline columns.
HOST_US: list[float] = []


def before_launch() -> None:
    if DELAY_US:
        until = time.perf_counter() + DELAY_US[0] * 1e-6
        while time.perf_counter() < until:
            pass
    if FLUSH:
        import pyopencl as cl

        q, scratch = FLUSH[0]
        cl.enqueue_fill_buffer(q, scratch, np.uint32(0), 0, FLUSH_BYTES)
        q.finish()
    for q in SYNC:
        q.finish()


def record_names() -> Callable[[], None]:
    """Make both hosts note each launch's kernel name in ``NAMES``; returns the undo."""
    host_call, orig_call = common.Host.__call__, common.OrigHost.__call__

    def host(self: Any, k: Any, gsize: Any, lsize: Any, *args: Any) -> None:
        n = len(self.events) if self.events is not None else 0
        before_launch()
        t0 = time.perf_counter()
        host_call(self, k, gsize, lsize, *args)
        HOST_US.append((time.perf_counter() - t0) * 1e6)
        if self.events is not None and len(self.events) > n:
            NAMES.append(k.__name__)
            note_buffers(k.__name__, args)

    def orig(self: Any, name: str, gsize: Any, lsize: Any, *args: Any) -> None:
        before_launch()
        t0 = time.perf_counter()
        orig_call(self, name, gsize, lsize, *args)
        HOST_US.append((time.perf_counter() - t0) * 1e6)
        if self.events is not None:
            NAMES.append(name)
            note_buffers(name, args)

    common.Host.__call__ = host  # type: ignore[method-assign]
    common.OrigHost.__call__ = orig  # type: ignore[method-assign]

    def undo() -> None:
        common.Host.__call__ = host_call  # type: ignore[method-assign]
        common.OrigHost.__call__ = orig_call  # type: ignore[method-assign]

    return undo


# Where the hosts' arrays come from in the host-buffer builds: None (each host's own way),
# for clpy's Host "fresh", "pageable", "pooled" or "nofill", for the original host "staged" or
# "zerofill" (the module docstring says what each is).
HOST_BUFFERS: list[str | None] = [None]
CLPY_MODES = ("fresh", "pageable", "pooled", "nofill")
# (pool, buffer, bytes) taken by a "pooled" run, given back when it ends
POOLED: list[tuple[Any, Any, int]] = []


def patch_buffers() -> Callable[[], None]:
    """Make ``common.Host`` and ``common.OrigHost`` follow ``HOST_BUFFERS``; returns the undo."""
    import pyopencl as cl
    import pyopencl.array as cla

    import clpy
    from clpy.runtime import transfers

    mf = cl.mem_flags
    H, O = common.Host, common.OrigHost
    saved = (H.put, H.empty, H.set, H.get, O.buf, O.empty, O.write)
    put, empty, set_, get, obuf, oempty, owrite = saved

    def mode_of(h: Any) -> str | None:
        m = HOST_BUFFERS[0]
        return m if m in CLPY_MODES and h.resident and h.queue is not None else None

    def new_buffer(q: Any, nbytes: int, pooled: bool) -> Any:
        nbytes = max(nbytes, 1)
        if not pooled:
            return cl.Buffer(q.context, mf.READ_WRITE, nbytes)
        pool = transfers.pool_for(cl, q)
        assert pool is not None
        buf = pool.take(nbytes)
        POOLED.append((pool, buf, nbytes))
        return buf

    def wrap(q: Any, buf: Any, shape: Any, dtype: Any) -> Any:
        arr = cla.Array(q, shape, np.dtype(dtype), data=buf)
        return clpy.DeviceArray(RUNTIME.find(q), None, arr, transfers.MOVER)

    def h_put(self: Any, a: np.ndarray) -> Any:
        mode = mode_of(self)
        if mode is None or mode == "nofill":
            return put(self, a)
        a = np.ascontiguousarray(a)
        q = self.queue
        if mode == "fresh":
            buf = cl.Buffer(q.context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a)
        else:
            buf = new_buffer(q, a.nbytes, mode == "pooled")
            cl.enqueue_copy(q, buf, a, is_blocking=True)
        return wrap(q, buf, a.shape, a.dtype)

    def h_empty(self: Any, shape: Any, dtype: Any) -> Any:
        mode = mode_of(self)
        if mode is None:
            return empty(self, shape, dtype)
        if mode == "nofill":
            return clpy.empty(shape, dtype, device=self.queue)
        nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        return wrap(self.queue, new_buffer(self.queue, nbytes, mode == "pooled"), shape, dtype)

    def h_set(self: Any, a: Any, value: np.ndarray) -> None:
        mode = mode_of(self)
        if mode is None or mode == "nofill" or not isinstance(a, clpy.DeviceArray):
            return set_(self, a, value)
        src = np.ascontiguousarray(value, dtype=a.dtype)
        cl.enqueue_copy(self.queue, a.cl_array.base_data, src, is_blocking=True)
        return None

    def h_get(self: Any, a: Any) -> np.ndarray:
        mode = mode_of(self)
        if mode is None or mode == "nofill" or not isinstance(a, clpy.DeviceArray):
            return get(self, a)
        out = np.empty(a.shape, a.dtype)
        cl.enqueue_copy(self.queue, out, a.cl_array.base_data, is_blocking=True)
        return out

    def o_buf(self: Any, a: np.ndarray) -> Any:
        if HOST_BUFFERS[0] != "staged":
            return obuf(self, a)
        a = np.ascontiguousarray(a)
        b = cl.Buffer(self.ctx, mf.READ_WRITE, max(a.nbytes, 1))
        transfers.upload(cl, self.queue, b, a)
        return b

    def o_empty(self: Any, nbytes: int) -> Any:
        b = oempty(self, nbytes)
        if HOST_BUFFERS[0] == "zerofill":
            cl.enqueue_fill_buffer(self.queue, b, np.uint8(0), 0, max(nbytes, 1))
        return b

    def o_write(self: Any, b: Any, a: np.ndarray) -> None:
        if HOST_BUFFERS[0] != "staged":
            return owrite(self, b, a)
        transfers.upload(cl, self.queue, b, np.ascontiguousarray(a))
        return None

    H.put, H.empty, H.set, H.get = h_put, h_empty, h_set, h_get  # type: ignore[method-assign]
    O.buf, O.empty, O.write = o_buf, o_empty, o_write  # type: ignore[method-assign]

    def undo() -> None:
        H.put, H.empty, H.set, H.get = saved[:4]  # type: ignore[method-assign]
        O.buf, O.empty, O.write = saved[4:]  # type: ignore[method-assign]

    return undo


def with_buffers(mode: str, fn: Callable[[list[Any]], Any]) -> Callable[[list[Any]], Any]:
    """``fn`` (a build's run) with the hosts' arrays made the ``mode`` way."""

    def run(events: list[Any]) -> Any:
        HOST_BUFFERS[0] = mode
        try:
            return fn(events)
        finally:
            HOST_BUFFERS[0] = None
            for pool, buf, nbytes in POOLED:  # the next run takes them again
                pool.give(buf, nbytes)
            POOLED.clear()

    return run


def plans(m: Any, queue: Any) -> list[Any]:
    out = []
    for v in vars(m).values():
        plans = getattr(getattr(v, "launches", None), "plans", None)
        if isinstance(plans, dict):
            out += [p for p in plans.values() if getattr(p, "queue", None) == queue]
    return out


class Swap:
    """Replace the program behind every variant of the module's plans on ``queue``."""

    def __init__(self, cl: Any, m: Any, queue: Any) -> None:
        self.cl = cl
        self.plans = plans(m, queue)
        self.saved = [(v, v.program, v.kernel) for p in self.plans for v in p._variants.values()]
        self.options = self.plans[0].options if self.plans else ""
        self.built: dict[str, Any] = {}

    def apply(self, transform: Callable[[str], str], options: str | None) -> None:
        cl = self.cl
        opts = self.options if options is None else options
        for v, prg, k in self.saved:
            src = transform(v.source)
            new = cl.Program(prg.context, src).build(options=opts)
            self.built[getattr(transform, "__name__", "?")] = new  # the last, for its PTX
            v.program = new
            v.kernel = cl.Kernel(new, k.function_name)
            v._bind_setters()
            v.last = None

    def restore(self) -> None:
        for v, prg, k in self.saved:
            v.program, v.kernel = prg, k
            v._bind_setters()
            v.last = None
