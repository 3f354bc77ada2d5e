"""Launch plans for OpenCL devices: emit for the device's target, build (cached), convert
arguments, enqueue, copy written arrays back after the kernel succeeded."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.emit.program import ordered_functions, required_features
from clpy.runtime import diskcache
from clpy.runtime.build import PROGRAMS
from clpy.runtime.devices import Device
from clpy.runtime.launch import DoneHandle, ForeignContext, LaunchError, LaunchHandle, Meta
from clpy.runtime.marshal import (
    LocalMemory,
    Param,
    _tname,
    check_host_array,
    check_local,
    check_pipe,
    pointer_kind,
    value_converter,
)
from clpy.runtime.quirks import build_std
from clpy.runtime.sizes import Sizes, check_limits, check_uniform
from clpy.types.core import AddressSpace, PointerType, ScalarType

if TYPE_CHECKING:
    from clpy.kernel import Specialization

Converter = Callable[[Any, list[Any]], Any]


def plan_params(spec: Specialization, meta: Meta) -> list[tuple[int, Param]]:
    """(argument index, Param) for every argument the kernel receives (constexprs are
    baked into the source), in ``Function.params`` order."""
    fn = spec.function
    pos = {n: i for i, n in enumerate(meta.names)}
    return [(pos[v.name], Param(v.name, v.type, v.name in fn.written, meta.name))
            for v in fn.params]


class CLPlan:
    """One specialization built for one device and context."""

    def __init__(self, spec: Specialization, meta: Meta, dev: Device, ctx: Any,
                 queue: Any) -> None:
        import pyopencl as cl

        self._cl = cl
        self.device = dev
        self.context = ctx if ctx is not None else dev.context
        if queue is None:
            queue = dev.queue if ctx is None else cl.CommandQueue(self.context, dev.cl_device)
        self.queue = queue
        target = dev.target
        assert target is not None and dev.info is not None
        fn = spec.function
        self.source = spec.source_for(target)
        need = set(required_features(ordered_functions(fn)))
        std = build_std(target, need)
        self.std = std
        self.options = " ".join((f"-cl-std=CL{std[0]}.{std[1]}", *dev.build_options))
        diskcache.record(meta.name, dev.name, self.options, self.source)
        prg = PROGRAMS.get(self.context, dev.cl_device, self.source, self.options, meta.name,
                           dev.name, diskcache.binary_dir())
        self._program = prg
        self.kernel = cl.Kernel(prg, fn.name)
        self.name = meta.name
        self.lock = threading.Lock()
        info = dev.info
        wg = self.kernel.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE,
                                             dev.cl_device)
        self.max_wg = min(int(wg), info.max_work_group_size)
        self.max_items = info.max_work_item_sizes
        self.non_uniform = bool(target.info.get("non_uniform_work_groups")) and std >= (2, 0)
        self.local_limit = info.local_mem_size
        self.params = plan_params(spec, meta)
        self.converters = [(i, self._converter(p)) for i, p in self.params]
        self._bind_setters()
        self._checked: set[Sizes] = set()
        self._last: list[Any] | None = None
        self._svm_seen = False

    def _bind_setters(self) -> None:
        set_buf = getattr(self.kernel, "_set_arg_buf", None) or self.kernel.set_arg
        self._setters = [set_buf if pointer_kind(p) == "value" else self.kernel.set_arg
                         for _, p in self.params]

    # ------------------------------------------------------------------ converters

    def _converter(self, p: Param) -> Converter:
        kind = pointer_kind(p)
        if kind == "local":
            return self._local_converter(p)
        if kind == "global":
            return self._global_converter(p)
        if kind == "pipe":
            ctx = self.context
            return lambda a, pending: check_pipe(p, a).cl_pipe(ctx)
        conv = value_converter(p)
        if not isinstance(p.type, ScalarType):
            return lambda a, pending: conv(a)
        # The same immutable number as last time converts to the same NumPy scalar, which
        # _set_args then recognises by identity: no conversion, no clSetKernelArg.
        memo: list[tuple[Any, Any]] = [(_NOTHING, None)]

        def conv_scalar(a: Any, pending: list[Any]) -> Any:
            m = memo[0]
            if a is m[0]:
                return m[1]
            out = conv(a)
            if type(a) in (int, float) or isinstance(a, np.generic):
                memo[0] = (a, out)
            return out

        return conv_scalar

    def _local_converter(self, p: Param) -> Converter:
        cl = self._cl
        assert isinstance(p.type, PointerType)
        elem = p.type.elem
        limit = self.local_limit

        def conv(a: Any, copies: list[Any]) -> Any:
            lm = check_local(p, a, limit)
            return cl.LocalMemory(lm.nbytes(elem))

        return conv

    def _global_converter(self, p: Param) -> Converter:
        cl = self._cl
        import pyopencl.array as cla

        ctx = self.context
        mf = cl.mem_flags
        assert isinstance(p.type, PointerType)
        elem_size = p.type.elem.size
        written = p.written
        flags = (mf.READ_WRITE if written else mf.READ_ONLY) | mf.COPY_HOST_PTR
        ndarray, Buffer, Array, SVMPointer = np.ndarray, cl.Buffer, cla.Array, cl.SVMPointer
        const_limit = (self.device.info.max_constant_buffer_size  # type: ignore[union-attr]
                       if p.type.space is AddressSpace.CONSTANT else None)

        memo: list[tuple[Any, Any]] = [(_NOTHING, None)]   # last device object checked

        def conv(a: Any, pending: list[Any]) -> Any:
            m = memo[0]
            if a is m[0]:
                return m[1]
            if type(a) is ndarray:
                check_host_array(p, a)
                if const_limit is not None and a.nbytes > const_limit:
                    raise ValueError(f"{p.where()}: {a.nbytes} bytes exceed the device's "
                                     f"constant buffer size {const_limit}")
                pending.append(a)
                return _HostArray(a, flags, written)
            if isinstance(a, Array):
                if a.context != ctx:
                    raise ForeignContext(a.context, a.queue, p.name)
                check_host_array(p, a)
                if a.offset:
                    raise ValueError(f"{p.where()}: pyopencl array views with an offset are "
                                     "not supported; pass a copy")
                memo[0] = (a, a.base_data)
                return a.base_data
            if isinstance(a, Buffer):
                if a.context != ctx:
                    raise ForeignContext(a.context, None, p.name)
                if a.size % elem_size:
                    raise ValueError(f"{p.where()}: buffer size {a.size} is not a multiple "
                                     f"of the element size {elem_size}")
                memo[0] = (a, a)
                return a
            if isinstance(a, SVMPointer):
                self._svm_seen = True
                memo[0] = (a, a)
                return a
            if isinstance(a, np.ndarray):         # a subclass (np.matrix, memmap ...)
                return conv(np.asarray(a), pending) if not written else _subclass_err(p, a)
            if isinstance(a, LocalMemory):
                raise TypeError(f"{p.where()}: LocalMemory is only for Local[...] parameters")
            raise TypeError(f"{p.where()}: expected a NumPy array, pyopencl.array.Array, "
                            f"pyopencl.Buffer or SVM pointer, got {_tname(a)}")

        return conv

    # ------------------------------------------------------------------ running

    def _set_args(self, cl_args: list[Any]) -> None:
        """Set only the arguments that changed since the last launch of this plan: OpenCL
        keeps kernel arguments between enqueues (spec: clSetKernelArg). Values (NumPy
        scalars, vector lanes, structs) go through pyopencl's raw-bytes setter, as its own
        generated invokers do: ``Kernel.set_arg`` takes ~10 µs to classify a NumPy scalar.
        Call with ``self.lock`` held."""
        last = self._last
        self._last = None              # if a setter fails, the next launch sets everything
        if last is not None and self._svm_seen and any(
                isinstance(a, self._cl.SVMPointer) != isinstance(b, self._cl.SVMPointer)
                for a, b in zip(cl_args, last) if b is not None):
            # NVIDIA's driver rejects a buffer in a slot that last held an SVM pointer
            # (INVALID_KERNEL_ARGS at enqueue, seen on an H200): start from a fresh kernel.
            self.kernel = self._cl.Kernel(self._program, self.kernel.function_name)
            self._bind_setters()
            last = None
        setters = self._setters
        for j, a in enumerate(cl_args):
            if last is None or not _same(a, last[j]):
                setters[j](j, a)
        # Holding the previous arguments keeps their objects (and ids) alive.
        self._last = cl_args

    def check_sizes(self, sizes: Sizes) -> None:
        g, loc = sizes
        if loc is not None:
            check_limits(self.name, loc, self.device.name, self.max_wg, self.max_items)
            check_uniform(self.name, g, loc, self.device.name, self.non_uniform)
        self._checked.add(sizes)

    def run(self, args: tuple[Any, ...], sizes: Sizes, wait: bool,
            offset: Any) -> LaunchHandle | None:
        if sizes not in self._checked:
            self.check_sizes(sizes)
        pending: list[Any] = []
        cl_args = [conv(args[i], pending) for i, conv in self.converters]
        g, loc = sizes
        if 0 in g:
            return None if wait else DoneHandle()
        cl = self._cl
        copies: list[tuple[Any, Any]] = []
        temps: list[int] = []
        if pending:      # every argument checked: now copy NumPy arrays to the device
            for j, x in enumerate(cl_args):
                if type(x) is _HostArray:
                    buf = x.upload(self.context, cl)
                    cl_args[j] = buf
                    temps.append(j)
                    if x.written and x.array.nbytes:
                        copies.append((x.array, buf))
        keep = list(cl_args) if temps and not wait else None
        queue = self.queue
        try:
            with self.lock:
                self._set_args(cl_args)
                evt = cl.enqueue_nd_range_kernel(queue, self.kernel, g, loc,
                                                 global_work_offset=offset)
                for j in temps:        # don't keep temporary device copies alive in _last
                    cl_args[j] = None
        except cl.Error as e:
            raise LaunchError(f"{self.name}: launch on {self.device} failed: {e}") from e
        if wait:
            evt.wait()
            if evt.command_execution_status < 0:
                raise LaunchError(f"{self.name}: kernel failed on {self.device} with status "
                                  f"{evt.command_execution_status}; arguments left untouched")
            for host, buf in copies:
                cl.enqueue_copy(queue, host, buf)
            return None
        events = [evt] + [cl.enqueue_copy(queue, host, buf, wait_for=[evt], is_blocking=False)
                          for host, buf in copies]
        return LaunchHandle(evt, events, (keep, copies))


_NOTHING = object()


class _HostArray:
    """A checked NumPy argument, copied to the device once every argument passed its checks."""

    __slots__ = ("array", "flags", "written")

    def __init__(self, array: np.ndarray, flags: Any, written: bool) -> None:
        self.array = array
        self.flags = flags
        self.written = written

    def upload(self, ctx: Any, cl: Any) -> Any:
        if self.array.nbytes == 0:                   # OpenCL has no empty buffers
            return cl.Buffer(ctx, cl.mem_flags.READ_WRITE, max(self.array.itemsize, 1))
        return cl.Buffer(ctx, self.flags, hostbuf=self.array)


def _same(a: Any, b: Any) -> bool:
    """``a`` may stand for ``b`` as a kernel argument already set (same memory object, or the
    same NumPy scalar type and bits: -0.0 is not 0.0)."""
    if a is b:
        return True
    return isinstance(a, np.generic) and type(a) is type(b) and a.tobytes() == b.tobytes()


def _subclass_err(p: Param, a: Any) -> Any:
    raise TypeError(f"{p.where()}: pass a plain NumPy array, not {type(a).__name__}")
