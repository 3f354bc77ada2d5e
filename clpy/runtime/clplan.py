"""Launch plans for OpenCL devices: emit for the device's target, build (cached), convert
arguments, enqueue, copy written arrays back after the kernel succeeded."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.abi import (
    Buffer,
    CLSite,
    Converter,
    DeviceArray,
    LocalBuffer,
    Param,
    StructValue,
    Value,
)
from clpy.emit.program import ordered_functions, required_features
from clpy.runtime import diskcache
from clpy.runtime.build import PROGRAMS
from clpy.runtime.clvariant import Recent, Variant, identical, matcher
from clpy.runtime.device_queue import DEVICE_QUEUES, needs_device_queue
from clpy.runtime.devices import Device
from clpy.runtime.handles import DoneHandle, LaunchError, LaunchHandle
from clpy.runtime.launch_copies import LaunchCopies
from clpy.runtime.quirks import build_std, fp_build_options
from clpy.runtime.registered import Registered
from clpy.runtime.sizes import (
    Sizes,
    check_device_ids,
    check_index_range,
    check_limits,
    check_uniform,
    index_range,
)
from clpy.runtime.transfers import (
    GENERATION,
    RepeatWatch,
    Ring,
    Staging,
    pool_for,
    staged,
    staging_of_queue,
)
from clpy.types.core import ScalarType

if TYPE_CHECKING:
    from clpy.kernel import Specialization


# The launch sizes a plan remembers as checked (checked again once forgotten).
_CHECKED_SIZES = 1024


class CLPlan:
    """One specialization built for one device and context."""

    def __init__(self, spec: Specialization, name: str, dev: Device, ctx: Any, queue: Any) -> None:
        import pyopencl as cl  # deferred: `import clpy` does not load pyopencl

        self._cl = cl
        self.device = dev
        self.context = ctx if ctx is not None else dev.context
        if queue is None:
            queue = dev.queue if ctx is None else cl.CommandQueue(self.context, dev.cl_device)
        self.queue = queue
        target = dev.target
        assert target is not None and dev.info is not None
        fn = spec.function
        self.index_range = index_range(fn)
        self.max_global_id: int | None = target.info.get("max_global_id")
        self._restrict_all_or_none = bool(target.info.get("restrict_all_or_none"))
        self.spec = spec
        self.params: tuple[Param, ...] = spec.abi
        self._svm_any = False
        self._alias_memo: tuple[tuple[Any, ...], frozenset[str] | None] | None = None
        # the answer before that one: a loop that swaps two arrays (ping-pong buffers)
        # alternates between two sets of objects, and finds both remembered
        self._alias_prev: tuple[tuple[Any, ...], frozenset[str] | None] | None = None
        # Buffers get ``restrict`` when no other argument reaches their memory (the launch
        # sees it: _noalias); the common case, every buffer distinct, is the main variant.
        self.buffers: tuple[str, ...] = tuple(p.name for p in spec.abi if isinstance(p, Buffer))
        self._buffer_slots = tuple(
            (j, p.name, p.written) for j, p in enumerate(spec.abi) if isinstance(p, Buffer)
        )
        self._multi_buffer = len(self._buffer_slots) > 1
        need = set(required_features(ordered_functions(fn)))
        std = build_std(target, need)
        self.std = std
        self.options = " ".join(
            (f"-cl-std=CL{std[0]}.{std[1]}", *fp_build_options(target), *dev.build_options)
        )
        self.name = name
        self.lock = threading.Lock()
        self._variants: dict[frozenset[str], Variant] = {}
        main = self._variant(frozenset(self.buffers))
        self._main = main
        if needs_device_queue(need):  # kernels that enqueue: the on-device default queue
            DEVICE_QUEUES.ensure(cl, self.context, dev.cl_device)
        info = dev.info
        wg = main.kernel.get_work_group_info(
            cl.kernel_work_group_info.WORK_GROUP_SIZE, dev.cl_device
        )
        self.kernel_wg = int(wg)
        # The spec's limit for this kernel (CL_KERNEL_WORK_GROUP_SIZE), unless the driver is
        # known to report less than it runs (clpy/runtime/quirks.py): then the device's.
        trust = not target.info.get("kernel_wg_query_low")
        self.max_wg = min(int(wg), info.max_work_group_size) if trust else info.max_work_group_size
        self.max_items = info.max_work_item_sizes
        self.non_uniform = bool(target.info.get("non_uniform_work_groups")) and std >= (2, 0)
        self.local_limit = info.local_mem_size
        self._pool = pool_for(cl, self.queue)
        self._staged: tuple[int, Staging | Ring | Registered | None] | None = None
        self._repeats = RepeatWatch()
        self._plain = all(
            isinstance(p, (Buffer, LocalBuffer, Value, StructValue)) for p in self.params
        )
        self._buffer_args = tuple(p.index for p in self.params if isinstance(p, Buffer))
        self._value_args = tuple(p.index for p in self.params if not isinstance(p, Buffer))
        site = CLSite(self.context, self.local_limit, info.max_constant_buffer_size, self._saw_svm)
        self.converters: list[tuple[int, Converter]] = [
            (p.index, p.cl_converter(site)) for p in self.params
        ]
        self._checked: set[Sizes] = set()
        # the arguments converted again on a launch that _recent recognises (all but
        # buffers), (slot, argument index, converter): scalars, whose immutable numbers the
        # variant remembers (Variant.set_recent), or with local memory, vectors or structs
        # all of them, as the other path, in parameter order (the first bad one raises)
        value_slots = tuple(
            (j, i, conv)
            for j, (i, conv) in enumerate(self.converters)
            if not isinstance(self.params[j], Buffer)
        )
        self._number_slots: tuple[tuple[int, int, Any], ...] = ()
        self._other_slots = value_slots
        if all(_scalar(self.params[j]) for j, _, _ in value_slots):
            self._other_slots = ()
            self._number_slots = tuple(
                (j, i, self.params[j].cl_scalar_converter())  # type: ignore[attr-defined]
                for j, i, _ in value_slots
            )
        # the last two launches' buffer arguments with what they bound (see _run_recent)
        self._recent: Recent | None = None
        self._recent_prev: Recent | None = None
        self._resident_memo: tuple[Any, ...] = ()
        self._resident_prev: tuple[Any, ...] = ()  # the set before (ping-pong arrays)
        # the last launch when it uploaded nothing: (sizes, args, converted args, variant,
        # resident, whether the numbers are immutable: None until asked); see _run_again
        self._again: tuple[Any, ...] | None = None
        # the last recognised launch was of the set before (see run)
        self._alternating = False

    # The main variant's state, for tools and tests that look inside a plan.
    @property
    def source(self) -> str:
        return self._main.source

    @property
    def kernel(self) -> Any:
        return self._main.kernel

    @property
    def _last(self) -> list[Any] | None:
        return self._main.last

    def _saw_svm(self) -> None:
        for v in self._variants.values():
            v.svm_seen = True
        self._svm_any = True

    def _variant(self, noalias: frozenset[str]) -> Variant:
        v = self._variants.get(noalias)
        if v is None:
            dev = self.device
            assert dev.target is not None
            source = self.spec.source_for(dev.target, noalias=noalias)
            diskcache.record(self.name, dev.name, self.options, source)
            prg = PROGRAMS.get(
                self.context,
                dev.cl_device,
                source,
                self.options,
                self.name,
                dev.name,
                diskcache.binary_dir(),
            )
            v = Variant(self._cl, prg, self.spec.function.name, source, self.params)
            v.svm_seen = self._svm_any
            self._variants[noalias] = v
        return v

    def _noalias(self, cl_args: list[Any], uploaded: list[int]) -> frozenset[str] | None:
        """The buffers no other argument reaches (None: all of them, the main variant).
        Two buffer arguments alias when their byte ranges in one memory object overlap and
        the kernel writes one of them (C99 6.7.3.1: ``restrict`` only promises that what is
        modified through one pointer is not reached through another). A sub-buffer (an
        aligned ``DeviceArray`` view) is its parent's range [offset, offset + size); this
        launch's uploads are buffers of their own, one per distinct array (clpy/abi/
        aliasing.py). SVM pointers may overlap anything. The answers for the same device
        objects as in the last two launches are remembered (the plan holds them)."""
        cl = self._cl
        objs = tuple([cl_args[j] for j, _, _ in self._buffer_slots])
        memo = self._alias_memo
        if memo is not None and identical(memo[0], objs):
            return memo[1]
        prev = self._alias_prev
        if prev is not None and identical(prev[0], objs):
            self._alias_prev, self._alias_memo = memo, prev
            return prev[1]
        own = {id(cl_args[j]) for j in uploaded}
        spans: list[tuple[str, bool, int, int, int]] = []  # name, written, memory, start, end
        unsure = False
        for a, (_, name, written) in zip(objs, self._buffer_slots):
            span = _byte_span(cl, a, id(a) in own)
            if span is None:
                unsure = True
                break
            spans.append((name, written, *span))
        if unsure:
            out: frozenset[str] | None = frozenset()
        else:
            shared: set[str] = set()
            for n, (na, wa, ma, a0, a1) in enumerate(spans):
                for nb, wb, mb, b0, b1 in spans[:n]:
                    if (wa or wb) and ma == mb and a0 < b1 and b0 < a1:
                        shared.update((na, nb))
            out = frozenset(self.buffers) - shared if shared else None
            if out and self._restrict_all_or_none:  # quirks.py: no restrict beside aliases
                out = frozenset()
        self._alias_prev, self._alias_memo = memo, (objs, out)
        return out

    def check_sizes(self, sizes: Sizes) -> None:
        g, loc = sizes
        check_index_range(self.name, g, None, self.index_range)
        check_device_ids(self.name, g, None, self.index_range, self.max_global_id, self.device.name)
        if loc is not None:
            check_limits(self.name, loc, self.device.name, self.max_wg, self.max_items)
            check_uniform(self.name, g, loc, self.device.name, self.non_uniform)
        if 0 in g:  # (an empty launch runs nothing: never remembered, see run)
            return
        if len(self._checked) >= _CHECKED_SIZES:  # a kernel launched with ever-new sizes
            self._checked.clear()
        self._checked.add(sizes)

    def run(
        self, args: tuple[Any, ...], sizes: Sizes, wait: bool, offset: Any
    ) -> LaunchHandle | None:
        if offset is None:
            # A launch whose buffer arguments are those of one of the last two launches,
            # with checked sizes (no empty launch): _run_recent; the same launch as the last
            # one: _run_again. A loop that swaps two arrays alternates between two sets:
            # after a swap, the other set is tried first.
            if self._alternating:
                rec = self._recent_prev
                if rec is not None and rec.match(args) and sizes in self._checked:
                    self._recent_prev, self._recent = self._recent, rec
                    return self._run_recent(rec, args, sizes, wait)
            again = self._again  # the last launch, if it uploaded nothing
            if again is not None and again[0] == sizes and identical(again[1], args):
                frozen = again[5]
                if frozen is None:  # known once: the same objects are as (im)mutable
                    frozen = self._frozen_values(args)
                    self._again = again = (*again[:5], frozen)
                if frozen:
                    self._alternating = False
                    return self._run_again(again, wait)
            rec = self._recent
            if rec is not None and sizes in self._checked:
                if rec.match(args):
                    self._alternating = False
                    return self._run_recent(rec, args, sizes, wait)
                prev = self._recent_prev
                if prev is not None and prev.match(args):
                    self._recent_prev, self._recent = rec, prev
                    self._alternating = True
                    return self._run_recent(prev, args, sizes, wait)
        if sizes not in self._checked:
            self.check_sizes(sizes)
        if offset is not None:
            offset = tuple(int(x) for x in np.atleast_1d(offset))  # offset=5 as the simulator
            if self.index_range is not None:
                check_index_range(self.name, sizes[0], offset, self.index_range)
                check_device_ids(
                    self.name,
                    sizes[0],
                    offset,
                    self.index_range,
                    self.max_global_id,
                    self.device.name,
                )
        pending: list[Any] = []
        cl_args = [conv(args[i], pending) for i, conv in self.converters]
        g, loc = sizes
        if 0 in g:
            return None if wait else DoneHandle()
        cl = self._cl
        queue = self.queue
        moves = None
        temps: list[int] = []
        if pending:  # every argument checked: now copy NumPy arrays to the device
            moves = LaunchCopies(self, wait)
            moves.upload(cl_args, args, pending)
            temps = moves.temps
        keep = list(cl_args) if temps and not wait else None
        noalias = self._noalias(cl_args, temps) if self._multi_buffer else None
        try:
            with self.lock:
                var = self._main if noalias is None else self._variant(noalias)
                var.set_args(cl_args)
                evt = cl.enqueue_nd_range_kernel(
                    queue, var.kernel, g, loc, global_work_offset=offset
                )
                for j in temps:  # don't keep temporary device copies alive in _last
                    cl_args[j] = None
        except cl.Error as e:
            if moves is not None:
                moves.end()  # the caller's arrays are free to change once this raises
            raise self._launch_error(e, loc) from e
        self._again = None
        if moves is None:
            if offset is None and self._plain:
                rec = self._remember(args, cl_args, var)
                if rec is not None:
                    return self._done(rec, args, sizes, cl_args, evt, wait)
            if wait and self._resident(args):
                # Device arrays on this plan's queue only: nothing comes back, and reading
                # them (DeviceArray.get, a later launch) is ordered after the kernel by the
                # queue.
                return None
        if wait:
            try:
                self._wait_kernel(evt)
                if moves is not None:
                    moves.download()
            finally:
                if moves is not None:
                    moves.end()
            return None
        if moves is None:
            return LaunchHandle(evt, [evt], (keep, []))
        events = [evt, *moves.download_events(evt)]
        moves.end()  # the queue is in order: a later write runs after these
        return LaunchHandle(evt, events, (keep, moves.copies))

    def _wait_kernel(self, evt: Any) -> None:
        """Wait for a launch's kernel; a ``LaunchError`` if it failed."""
        cl = self._cl
        try:
            evt.wait()
        except cl.Error as e:  # the device was lost, the kernel aborted ...
            raise LaunchError(
                f"{self.name}: kernel failed on {self.device}: {e}; arguments left untouched"
            ) from e
        if evt.command_execution_status < 0:
            raise LaunchError(
                f"{self.name}: kernel failed on {self.device} with status "
                f"{evt.command_execution_status}; arguments left untouched"
            )

    def _remember(self, args: tuple[Any, ...], cl_args: list[Any], var: Variant) -> Recent | None:
        """Keep what this launch's buffer arguments bound, for ``_run_recent``: only memory
        objects (device arrays, pyopencl arrays and buffers; nothing uploaded for the launch,
        no SVM pointer), which the converters also remember by the argument's identity."""
        buffer_type = self._cl.Buffer
        template: list[Any] = [None] * len(cl_args)
        for j, _, _ in self._buffer_slots:
            b = cl_args[j]
            if type(b) is not buffer_type:
                return None
            template[j] = b
        objs = tuple([args[i] for i in self._buffer_args])
        alias = self._alias_memo if self._multi_buffer else None
        match = matcher(self._buffer_args, objs)
        rec = Recent(objs, match, template, var, alias, self._resident(args))
        recent = self._recent
        if recent is not None and identical(recent.objs, objs):
            self._recent = rec  # (new sizes, same arguments: keep the other set)
        else:
            self._recent_prev, self._recent = recent, rec
        return rec

    def _run_recent(
        self, rec: Recent, args: tuple[Any, ...], sizes: Sizes, wait: bool
    ) -> LaunchHandle | None:
        """A launch whose buffer arguments are the same objects as in one of the last two
        launches (a loop that swaps two arrays alternates between two such sets), with
        checked sizes and no offset: the buffers bind what they bound then and the variant
        (the aliasing answer) is the same; only the other arguments (numbers, local memory)
        are converted and checked, and only arguments that changed are set again."""
        g, loc = sizes
        var = rec.var
        cl = self._cl
        lock = self.lock
        lock.acquire()  # (~0.1 µs less than ``with``)
        try:
            cl_args = var.set_recent(rec, args, self._number_slots, self._other_slots)
            evt = cl.enqueue_nd_range_kernel(self.queue, var.kernel, g, loc)
        except cl.Error as e:
            self._again = None
            raise self._launch_error(e, loc) from e
        finally:
            lock.release()
        alias = rec.alias
        if alias is not self._alias_memo:  # _noalias's memo: the last launch's answer
            self._alias_prev, self._alias_memo = self._alias_memo, alias
        return self._done(rec, args, sizes, cl_args, evt, wait)

    def _done(
        self,
        rec: Recent,
        args: tuple[Any, ...],
        sizes: Sizes,
        cl_args: list[Any],
        evt: Any,
        wait: bool,
    ) -> LaunchHandle | None:
        """The end of a launch that uploaded nothing (``rec``: its buffer arguments): a
        handle, or for ``wait=True`` the kernel's end, except on device arrays of this plan's
        queue (nothing comes back, and reading them, with DeviceArray.get or a later launch,
        is ordered after the kernel by the queue). The launch may be repeated (_run_again)."""
        self._again = (sizes, args, cl_args, rec.var, rec.resident, None)
        return self._end(evt, wait, rec.resident)

    def _end(self, evt: Any, wait: bool, resident: bool) -> LaunchHandle | None:
        """A handle for ``wait=False``; else the kernel's end, unless every buffer is a
        device array of this plan's queue (nothing comes back)."""
        if not wait:
            return LaunchHandle(evt, [evt], None)
        if not resident:
            self._wait_kernel(evt)
        return None

    def _frozen_values(self, args: tuple[Any, ...]) -> bool:
        """The arguments besides buffers are immutable numbers: the same objects next time
        mean the same values (a 0-d NumPy array, a list of lanes or a structured ``np.void``,
        which may be a view of an array, may change in place)."""
        for i in self._value_args:
            a = args[i]
            t = type(a)
            if t is not int and t is not float and t is not bool:
                if not isinstance(a, _generic) or t is _void:
                    return False
        return True

    def _run_again(self, again: tuple[Any, ...], wait: bool) -> LaunchHandle | None:
        """The same launch as the last one that uploaded nothing (the same objects as
        arguments: memory objects and immutable numbers): its converted arguments and variant
        serve again; only the kernel is enqueued (the arguments are set again if another
        launch of this variant changed them)."""
        sizes, _, cl_args, var, resident, _ = again
        g, loc = sizes
        cl = self._cl
        lock = self.lock
        lock.acquire()  # (as _run_recent)
        try:
            if var.last is not cl_args:
                var.set_args(cl_args)
            evt = cl.enqueue_nd_range_kernel(self.queue, var.kernel, g, loc)
        except cl.Error as e:
            self._again = None
            raise self._launch_error(e, loc) from e
        finally:
            lock.release()
        return self._end(evt, wait, resident)

    def _staging(self, host: np.ndarray) -> Staging | Ring | Registered | None:
        """Pinned staging for a large pageable array (None: copy it directly); the queue's
        staging area is looked up once per generation of the pools (transfers.GENERATION)."""
        if self._pool is None:
            return None
        kept = self._staged
        if kept is None or kept[0] != GENERATION[0]:
            st = staging_of_queue(self._cl, self.queue)
            kept = self._staged = (GENERATION[0], st)
        return None if kept[1] is None else staged(host, kept[1])

    def _resident(self, args: tuple[Any, ...]) -> bool:
        """Every buffer argument is a DeviceArray on this plan's queue (and the kernel has
        no images or pipes, whose host sides may be read elsewhere)."""
        if not self._plain:
            return False
        objs = tuple([args[j] for j in self._buffer_args])
        if identical(self._resident_memo, objs):
            return True
        if identical(self._resident_prev, objs):
            self._resident_prev, self._resident_memo = self._resident_memo, objs
            return True
        queue = self.queue
        for a in objs:
            if type(a) is not DeviceArray:
                return False
            arr = a.cl_array
            if arr is None or (arr.queue is not queue and arr.queue != queue):
                return False
        # the same device arrays next time need no check (a DeviceArray's queue is fixed;
        # kept only when True: NumPy arguments are not held)
        self._resident_prev, self._resident_memo = self._resident_memo, objs
        return True

    def _launch_error(self, e: Any, loc: Any) -> Exception:
        """A refused enqueue as a clpy error; a work-group the driver would not run (only
        reachable where its kernel query is not trusted) names the local size."""
        code = getattr(e, "code", None)
        status = self._cl.status_code
        if loc is not None and code in (status.INVALID_WORK_GROUP_SIZE, status.OUT_OF_RESOURCES):
            total = int(np.prod(loc))
            return ValueError(
                f"{self.name}[...]: {self.device} refused a work-group of {total} work-items "
                f"(local size {tuple(loc)}): {e}; the kernel query reports at most "
                f"{self.kernel_wg} (CL_KERNEL_WORK_GROUP_SIZE); arguments left untouched"
            )
        return LaunchError(f"{self.name}: launch on {self.device} failed: {e}")


def _scalar(p: Param) -> bool:
    return isinstance(p, Value) and isinstance(p.type, ScalarType)


def _byte_span(cl: Any, buf: Any, own: bool) -> tuple[int, int, int] | None:
    """(memory object handle, first byte, last byte + 1) a buffer argument reaches: a
    sub-buffer's range in its parent (OpenCL 2.0 API spec §5.2.1: sub-buffers are not made
    of sub-buffers), a whole buffer's own. None: unknown (an SVM pointer, a failed query)."""
    if not isinstance(buf, cl.Buffer):
        return None
    if own:  # uploaded for this launch: no other argument's memory
        return buf.int_ptr, 0, 1
    try:
        parent = buf.get_info(cl.mem_info.ASSOCIATED_MEMOBJECT)
        if parent is None:
            return buf.int_ptr, 0, buf.size
        start = int(buf.get_info(cl.mem_info.OFFSET))
        return parent.int_ptr, start, start + buf.size
    except cl.Error:
        return None


_generic = np.generic
_void = np.void
