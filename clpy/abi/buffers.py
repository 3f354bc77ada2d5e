"""Pointer parameters: global and constant buffers (``Buffer``) and local memory
(``LocalBuffer``, sized at launch with ``clpy.LocalMemory``).

A ``Buffer`` takes a NumPy array (copied to the device, and back only if the kernel writes
through the pointer, only after the kernel succeeded; the simulator writes an aligned one in
place and restores it if the launch fails), a ``clpy.DeviceArray``, a
``pyopencl.array.Array`` or a ``pyopencl.Buffer`` (used in place). A pointer the kernel never
writes is declared ``const``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, cast

import numpy as np

from clpy.abi.base import CLSite, Converter, HeaderArg, Param, SimBinder, tname
from clpy.abi.device_array import DeviceArray
from clpy.types.atomics import AtomicType
from clpy.types.core import AddressSpace, PointerType, ScalarType, Type, VectorType
from clpy.types.structs import StructType

_NOTHING = object()


class LocalMemory:
    """Size of a ``Local[T]`` kernel argument: ``count`` elements of the parameter's type.

    >>> block_sum[(1024,), (256,)](x, out, clpy.LocalMemory(256))
    """

    __slots__ = ("count", "dtype")

    def __init__(self, count: int, dtype: Any = None) -> None:
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count <= 0:
            raise ValueError(f"LocalMemory(count): count must be a positive int, got {count!r}")
        self.count = int(count)
        self.dtype = np.dtype(dtype) if dtype is not None else None

    def nbytes(self, elem: Type) -> int:
        return self.count * elem.size

    def __repr__(self) -> str:
        return f"clpy.LocalMemory({self.count})"


class ForeignContext(Exception):
    """Raised by a converter when an argument lives in another pyopencl context."""

    def __init__(self, context: Any, queue: Any, param: str) -> None:
        super().__init__(param)
        self.context = context
        self.queue = queue
        self.param = param


class SimDeferred:
    """Work around one simulator launch: ``commit`` after it returned (copy-backs of NumPy
    arguments), ``rollback`` after it failed (restoring snapshots of arrays used in place),
    and, for an argument the launch writes (``array``: the array ``sim.launch`` gets),
    ``save`` and ``restore`` (``SimSnapshot``)."""

    __slots__ = ("_commit", "_rollback", "_restore", "array")

    def __init__(
        self, commit: Any = None, rollback: Any = None, restore: Any = None, array: Any = None
    ) -> None:
        self._commit = commit
        self._rollback = rollback
        self._restore = restore  # puts ``array`` back as it was before the launch
        self.array = array

    def commit(self) -> None:
        if self._commit is not None:
            self._commit()

    def rollback(self) -> None:
        if self._rollback is not None:
            self._rollback()

    def save(self) -> None:
        """Take what ``rollback`` and ``restore`` need (nothing: a working copy)."""

    def restore(self) -> None:
        if self._restore is not None:
            self._restore()


class _CopyBack(SimDeferred):
    """A NumPy argument the kernel writes: the simulator writes a working copy, copied back
    into the caller's array after the launch succeeded; the caller's array is the snapshot."""

    __slots__ = ("source",)

    def __init__(self, source: np.ndarray, work: np.ndarray) -> None:
        super().__init__(array=work)
        self.source = source

    def commit(self) -> None:
        np.copyto(self.source, self.array)

    def restore(self) -> None:
        np.copyto(self.array, self.source)


class _InPlace(SimDeferred):
    """An array the simulator writes in place (a written NumPy argument, a ``DeviceArray``'s
    host array): its snapshot
    is taken only when the simulator asks (``SimSnapshot.save``), before a path that can fail
    after writing; a failed launch without one wrote nothing or completed (sim.launch)."""

    __slots__ = ("saved",)

    def __init__(self, host: np.ndarray) -> None:
        super().__init__(array=host)
        self.saved: np.ndarray | None = None

    def save(self) -> None:
        if self.saved is None:
            self.saved = self.array.copy()

    def rollback(self) -> None:
        if self.saved is not None:
            np.copyto(self.array, self.saved)

    def restore(self) -> None:
        assert self.saved is not None, "SimSnapshot.restore before save"
        np.copyto(self.array, self.saved)


class SimSnapshot:
    """The arguments one simulator launch writes, as ``sim.launch(..., snapshot=)`` gets
    them: ``save()`` makes the launch restorable (copies of arrays written in place; once,
    before a path that can fail after writing: the NumPy engine, the checked native engine, a
    long native launch that Ctrl-C may stop), ``restore()`` then puts every written argument
    back as it was before the launch (the checked native engine's re-run on the NumPy
    engine), and the runtime's ``rollback`` after a failure uses the same copies."""

    __slots__ = ("deferred", "saved")

    def __init__(self, deferred: list[SimDeferred]) -> None:
        self.deferred = deferred
        self.saved = False

    def save(self) -> None:
        if self.saved:
            return
        self.saved = True
        seen: list[Any] = []  # one copy of an array passed twice
        for d in self.deferred:
            if d.array is not None:
                if any(d.array is a for a in seen):
                    continue
                seen.append(d.array)
            d.save()

    def covers(self, array: Any) -> bool:
        """Whether ``restore`` puts ``array`` (an argument ``sim.launch`` got) back."""
        return any(d.array is array for d in self.deferred)

    def restore(self) -> None:
        """Every written argument as it was before the launch (after ``save``)."""
        assert self.saved, "SimSnapshot.restore before save"
        done: list[Any] = []
        for d in self.deferred:
            if d.array is None or any(d.array is a for a in done):
                continue
            done.append(d.array)
            d.restore()


def element_layout(p: Param, elem: Type) -> tuple[np.dtype[Any], int]:
    """(element dtype, lanes) of the host array for a pointer to ``elem``; lanes 0 = scalar."""
    if isinstance(elem, VectorType):
        return elem.elem.dtype, (4 if elem.n == 3 else elem.n)
    if isinstance(elem, (ScalarType, StructType, AtomicType)):
        return elem.dtype, 0  # atomic_int ...: host arrays of the value type
    raise TypeError(f"{p.where()}: pointers to {elem} cannot be passed from the host")


@dataclass(frozen=True)
class _Pointer(Param):
    """What every pointer parameter shares: its element type and its declaration (``const``
    where the kernel never writes through it)."""

    @property
    def elem(self) -> Type:
        assert isinstance(self.type, PointerType)
        return self.type.elem

    def c_declaration(self, c_name: str, restrict: bool = False) -> str:
        t = self.type
        assert isinstance(t, PointerType)
        # __constant data is read-only already; "const" would only repeat it.
        const = (t.const or not self.written) and t.space is not AddressSpace.CONSTANT
        qual = " restrict" if restrict else ""
        return f"{t.with_const(const).cl_name}{qual} {c_name}"


@dataclass(frozen=True)
class Buffer(_Pointer):
    """A ``Global[T]`` or ``Constant[T]`` pointer."""

    kind: ClassVar[str] = "buffer"
    splittable: ClassVar[bool] = True

    @property
    def constant(self) -> bool:
        assert isinstance(self.type, PointerType)
        return self.type.space is AddressSpace.CONSTANT

    def header_arg(self) -> HeaderArg:
        space = "__constant" if self.constant else "__global"
        use = "written by the kernel" if self.written else "read only"
        return HeaderArg("cl_mem", "sizeof(cl_mem)", f"{space} {self.elem.cl_name} buffer, {use}")

    def check_array(self, a: Any) -> None:
        """dtype, shape, contiguity and writability of an array argument."""
        dtype, lanes = element_layout(self, self.elem)
        if lanes == 0 and type(a) is np.ndarray and a.dtype == dtype and a.ndim:
            flags = a.flags  # (the common case first: one flags object)
            if flags.c_contiguous and (flags.writeable or not self.written):
                return
        if a.dtype != dtype:
            hint = f" (use {self.elem.name}.dtype)" if isinstance(self.elem, StructType) else ""
            raise TypeError(f"{self.where()}: expected an array of {dtype}{hint}, got {tname(a)}")
        if lanes:
            if a.ndim < 2 or a.shape[-1] != lanes:
                pad = (
                    " (3-vectors are stored padded to 4 lanes)"
                    if lanes == 4 and isinstance(self.elem, VectorType) and self.elem.n == 3
                    else ""
                )
                raise ValueError(
                    f"{self.where()}: expected shape (count, {lanes}){pad}, got shape {a.shape}"
                )
        elif a.ndim == 0:
            raise ValueError(
                f"{self.where()}: expected an array with at least one dimension, got a 0-d array"
            )
        if not a.flags.c_contiguous:
            raise ValueError(
                f"{self.where()}: the array is not C-contiguous; pass "
                "np.ascontiguousarray(...) (a copy) instead"
            )
        if self.written and isinstance(a, np.ndarray) and not a.flags.writeable:
            raise ValueError(
                f"{self.where()}: the kernel writes through this pointer but the "
                "array is read-only (flags.writeable is False)"
            )

    def _check_buffer_size(self, size: int) -> int:
        elem_size = self.elem.size
        if size % elem_size:
            raise ValueError(
                f"{self.where()}: buffer size {size} is not a multiple of the "
                f"element size {elem_size}"
            )
        return size // elem_size

    # ------------------------------------------------------------------ OpenCL

    def cl_converter(self, site: CLSite) -> Converter:
        import pyopencl as cl
        import pyopencl.array as cla

        ctx = site.context
        mf = cl.mem_flags
        written = self.written
        flags = (mf.READ_WRITE if written else mf.READ_ONLY) | mf.COPY_HOST_PTR
        ndarray, ClBuffer, Array, SVMPointer = np.ndarray, cl.Buffer, cla.Array, cl.SVMPointer
        const_limit = site.max_constant_buffer_size if self.constant else None
        # the last two device objects checked and what they bind: a loop that swaps two
        # arrays (ping-pong buffers) passes each parameter one of two objects in turn
        memo: list[tuple[Any, Any]] = [(_NOTHING, None), (_NOTHING, None)]
        scalar_dtype: list[np.dtype[Any]] = []  # a scalar element's dtype, once checked

        def remember(a: Any, out: Any) -> Any:
            memo[0] = memo[1]
            memo[1] = (a, out)
            return out

        def array(a: Any) -> Any:
            if a.context != ctx:
                raise ForeignContext(a.context, a.queue, self.name)
            self.check_array(a)
            if a.offset:
                raise ValueError(
                    f"{self.where()}: pyopencl array views with an offset "
                    "are not supported; pass a copy"
                )
            return a.base_data

        def conv(a: Any, pending: list[Any]) -> Any:
            m = memo[1]
            if a is m[0]:
                return m[1]
            m = memo[0]
            if a is m[0]:
                return m[1]
            if type(a) is ndarray:
                if not (
                    scalar_dtype  # check_array's common case, its element dtype known
                    and a.dtype == scalar_dtype[0]
                    and a.ndim
                    and (fl := a.flags).c_contiguous
                    and (fl.writeable or not written)
                ):
                    self.check_array(a)
                    if not scalar_dtype:
                        dtype, lanes = element_layout(self, self.elem)
                        if not lanes:
                            scalar_dtype.append(dtype)
                if const_limit is not None and a.nbytes > const_limit:
                    raise ValueError(
                        f"{self.where()}: {a.nbytes} bytes exceed the device's "
                        f"constant buffer size {const_limit}"
                    )
                pending.append(a)
                return HostUpload(a, flags, written)
            if type(a) is DeviceArray:
                if a.cl_array is None:
                    raise ValueError(
                        f"{self.where()}: the DeviceArray lives on {a.device}; "
                        "pass a.get() or clpy.to_device(a, <device>)"
                    )
                if a.staged:  # a view that is no sub-buffer travels as a copy
                    a.check_kernel_view(self.where())
                    self.check_array(a.cl_array)
                    up = ViewUpload(a, written)
                    pending.append(up)
                    return up
                return remember(a, array(a.cl_array))
            if isinstance(a, Array):
                return remember(a, array(a))
            if isinstance(a, ClBuffer):
                if a.context != ctx:
                    raise ForeignContext(a.context, None, self.name)
                self._check_buffer_size(a.size)
                return remember(a, a)
            if isinstance(a, SVMPointer):
                site.on_svm()
                return remember(a, a)
            if isinstance(a, np.ndarray):  # a subclass (np.matrix, memmap ...)
                # np.asarray is a view of the same memory: results copied back land in a
                # (a memory-mapped file included); a mask would be ignored, so no masked arrays.
                if written and isinstance(a, np.ma.MaskedArray):
                    raise TypeError(
                        f"{self.where()}: pass a plain NumPy array, not {type(a).__name__}"
                    )
                return conv(np.asarray(a), pending)
            raise self._wrong(
                a,
                "NumPy array, clpy.DeviceArray, pyopencl.array.Array, "
                "pyopencl.Buffer or SVM pointer",
            )

        return conv

    def _wrong(self, a: Any, expected: str) -> TypeError:
        if isinstance(a, LocalMemory):
            return TypeError(f"{self.where()}: LocalMemory is only for Local[...] parameters")
        return TypeError(f"{self.where()}: expected a {expected}, got {tname(a)}")

    # ------------------------------------------------------------------ simulator

    def sim_converter(self) -> Converter:
        written = self.written
        layout: list[np.dtype[Any]] = []  # a scalar element's dtype, once known

        def plain(h: np.ndarray) -> bool:
            """``check_array``'s common case: a C-contiguous (writable) array of scalars."""
            if not layout:
                dtype, lanes = element_layout(self, self.elem)
                if lanes:
                    return False
                layout.append(dtype)
            if h.dtype != layout[0] or not h.ndim:
                return False
            flags = h.flags
            return bool(flags.c_contiguous and (flags.writeable or not written))

        def conv(a: Any, deferred: list[SimDeferred]) -> Any:
            if isinstance(a, np.ndarray):
                self.check_array(a)
                if written and type(a) is np.ndarray and a.flags.aligned:
                    # written in place (checked: C-contiguous, writable), snapshotted when
                    # sim.launch asks, as a DeviceArray: no copy in and out on a launch
                    # that cannot fail once started
                    deferred.append(_InPlace(a))
                    return a
                work = np.array(a, copy=True, order="C")
                if written:
                    deferred.append(_CopyBack(a, work))
                return work
            if type(a) is DeviceArray:
                host = a.sim_array
                if host is None:
                    return conv(a.cl_array, deferred)
                if a.base is not None:
                    a.check_kernel_view(self.where())
                if type(host) is not np.ndarray or not plain(host):
                    self.check_array(host)
                if written:  # in place; a snapshot when sim.launch asks (SimSnapshot)
                    deferred.append(_InPlace(host))
                return host
            return self._sim_from_pyopencl(a, deferred)

        return conv

    def _sim_from_pyopencl(self, a: Any, deferred: list[SimDeferred]) -> Any:
        try:
            import pyopencl as cl
            import pyopencl.array as cla
        except ImportError:  # pragma: no cover - pyopencl is a dependency
            raise self._wrong(a, "NumPy array or clpy.DeviceArray") from None
        if isinstance(a, cla.Array):
            self.check_array(a)
            work = a.get()
            if self.written:
                deferred.append(
                    SimDeferred(
                        commit=lambda: a.set(work), restore=lambda: a.get(ary=work), array=work
                    )
                )
            return work
        if isinstance(a, cl.Buffer):
            dtype, lanes = element_layout(self, self.elem)
            count = self._check_buffer_size(a.size)
            work = np.empty((count, lanes) if lanes else (count,), dtype)
            queue = cl.CommandQueue(a.context)
            cl.enqueue_copy(queue, work, a)
            if self.written:
                deferred.append(
                    SimDeferred(
                        commit=lambda: cl.enqueue_copy(queue, a, work),
                        restore=lambda: cl.enqueue_copy(queue, work, a),
                        array=work,
                    )
                )
            return work
        raise self._wrong(
            a, "NumPy array, clpy.DeviceArray, pyopencl.array.Array or pyopencl.Buffer"
        )

    def bind_sim(self, binder: SimBinder, value: Any) -> Any:
        if not isinstance(value, np.ndarray):
            raise TypeError(f"sim.launch: argument {self.name!r} must be a NumPy array")
        return binder.global_buffer(self, value)


@dataclass(frozen=True)
class LocalBuffer(_Pointer):
    """A ``Local[T]`` pointer: per-work-group memory of ``LocalMemory(count)`` elements."""

    kind: ClassVar[str] = "local"

    def header_arg(self) -> HeaderArg:
        return HeaderArg(
            "NULL",
            f"count * sizeof(cl_{self.elem.cl_name})"
            if isinstance(self.elem, (ScalarType, VectorType))
            else f"count * {self.elem.size}",
            f"__local {self.elem.cl_name} array: pass its size in bytes and a NULL value",
        )

    def check(self, a: Any, limit: int | None) -> LocalMemory:
        if not isinstance(a, LocalMemory):
            raise TypeError(
                f"{self.where()}: local memory is sized with "
                f"clpy.LocalMemory(count), got {tname(a)}"
            )
        if limit is not None and a.nbytes(self.elem) > limit:
            raise ValueError(
                f"{self.where()}: LocalMemory({a.count}) needs "
                f"{a.nbytes(self.elem)} bytes; the device has {limit}"
            )
        return a

    def cl_converter(self, site: CLSite) -> Converter:
        import pyopencl as cl

        elem = self.elem
        limit = site.local_mem_size
        return lambda a, pending: cl.LocalMemory(self.check(a, limit).nbytes(elem))

    def sim_converter(self) -> Converter:
        return lambda a, deferred: self.check(a, None)

    def bind_sim(self, binder: SimBinder, value: Any) -> Any:
        for attr in ("count", "size", "nbytes"):
            v = getattr(value, attr, None)
            if isinstance(v, (int, np.integer)):
                return binder.local_buffer(self, int(v))
        if isinstance(value, (int, np.integer)):
            return binder.local_buffer(self, int(value))
        raise TypeError(
            f"sim.launch: Local argument {self.name!r} must be a clpy.LocalMemory(count)"
        )


class HostUpload:
    """A checked NumPy argument, copied to the device once every argument passed its checks."""

    __slots__ = ("array", "flags", "written")

    def __init__(self, array: np.ndarray, flags: Any, written: bool) -> None:
        self.array = array
        self.flags = flags
        self.written = written

    def upload(self, ctx: Any, cl: Any) -> Any:
        if self.array.nbytes == 0:  # OpenCL has no empty buffers
            return cl.Buffer(ctx, cl.mem_flags.READ_WRITE, max(self.array.itemsize, 1))
        return cl.Buffer(ctx, self.flags, hostbuf=self.array)


class ViewUpload(HostUpload):
    """A ``clpy.DeviceArray`` view that is no sub-buffer (misaligned: clpy/abi/device_array.py),
    copied on the device into a buffer of its own for one launch, and back (``array.
    copy_from_buffer``) if the kernel wrote it and succeeded."""

    __slots__ = ("view",)

    def __init__(self, view: DeviceArray, written: bool) -> None:
        # ``array``: what the launcher copies back into (DeviceArray.copy_from_buffer)
        super().__init__(cast(Any, view), None, written)
        self.view = view

    def upload(self, ctx: Any, cl: Any) -> Any:
        return self.view.staged_buffer(cl)

    def upload_pooled(self, cl: Any, queue: Any, pool: Any) -> Any:
        """The copy in a buffer from ``pool`` (the launch queue's: clpy/runtime/transfers.py),
        filled on ``queue``; the launcher gives it back once the copy-back is enqueued (the
        queue is in order: the next use of the buffer runs after it)."""
        buf = pool.take(self.view.nbytes)
        self.view.stage_into(cl, queue, buf)
        return buf
