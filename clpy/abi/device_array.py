"""``clpy.DeviceArray``: data that stays on a device between launches.

    x = clpy.to_device(np.arange(n, dtype=np.float32), device="opencl:gpu")
    y = clpy.zeros_like(x)
    for _ in range(100):
        step[(n,), (64,)](x, y, device=x.device)     # no host transfers
        x, y = y, x
    result = x.get()
    total = float(y[0])          # one element: one small read
    head = y[:16]                # a view: same buffer, usable as a kernel argument
    y[16:32] = np.zeros(16)      # writes only that region

On an OpenCL device the data is a ``pyopencl.array.Array`` in the context and on the queue clpy
uses for that device (``.cl_array``), so launches bind it in place. On the simulator it is a
NumPy array the simulator reads and writes directly: no copy in, no copy back. Either way a
launch that fails leaves a device array as it was on the simulator (written arrays are
snapshotted and restored); on an OpenCL device a kernel that faults may have written part of
it, as with any device-resident buffer.

Indexing is NumPy's basic indexing (clpy/abi/array_index.py): an integer per axis reads one
element as a NumPy scalar; slices with step 1, ``...`` and ``None`` give a *view* that shares
the buffer. A contiguous view whose first byte is a multiple of the device's base address
alignment (``CL_DEVICE_MEM_BASE_ADDR_ALIGN``, OpenCL 2.0 API spec §5.2.1
``clCreateSubBuffer``) is a sub-buffer, bound in place like the whole array (overlapping views
are then one memory: the launcher drops ``restrict`` for two arguments whose byte ranges overlap
where the kernel writes either, and keeps it for disjoint views). Any other contiguous view
travels to a kernel as a copy (made on the device, copied back after the kernel succeeded if it
wrote it); such a view overlapping another argument of the same array that either writes is a
``ValueError`` (clpy/abi/aliasing.py). A view that is not contiguous (``d[:, 1:3]``) reads and
writes with rectangular copies but is no kernel argument. On the simulator views are NumPy
views and every contiguous one is bound in place.
"""

from __future__ import annotations

import math
import weakref
from typing import Any, cast

import numpy as np

from clpy.abi.array_index import Layout, index_layout, rect_blocks
from clpy.runtime import regions, transfers

# Sub-buffer views one array keeps (for views of the same regions made again and again).
_SUB_CACHE = 64

# NVIDIA's OpenCL (driver 580, H100) crashes releasing a sub-buffer that a kernel used while
# a newer sub-buffer overlapping it still exists; newest first is safe
# (scripts/gpu_segv_diag.py, benchmarks/results/segv_diag_h100_s9.md: pyopencl alone does it).
# Garbage collection and interpreter exit drop the last references in no particular order, so
# a root keeps the sub-buffers of its views itself (``_SubBuffers``) and releases them newest
# first: when it goes (a weakref.finalize, which the collector calls before it clears anything,
# and atexit too), and, beyond ``_SUB_KEEP`` of them, those at the newest end that nothing else
# holds.
_SUB_KEEP = 256


class _SubBuffers:
    """The sub-buffers made from one root's memory, oldest first."""

    __slots__ = ("bufs", "__weakref__")

    def __init__(self) -> None:
        self.bufs: list[Any] = []

    def add(self, buf: Any) -> None:
        if len(self.bufs) >= _SUB_KEEP:
            self.trim()
        self.bufs.append(buf)

    def trim(self) -> None:
        """Release the newest sub-buffers that only this list holds (refcount: the list and
        getrefcount's argument)."""
        import sys

        while self.bufs and sys.getrefcount(self.bufs[-1]) <= 2:
            _release(self.bufs.pop())

    @staticmethod
    def release_all(bufs: list[Any]) -> None:
        while bufs:
            _release(bufs.pop())


def _release(buf: Any) -> None:
    try:
        buf.release()
    except Exception:  # noqa: BLE001 - the context is gone already (interpreter exit)
        pass


def _clear_views(cache: dict[Any, Any]) -> None:
    """Empty a root's cache of views and sub-buffer arrays, keeping its ``_SubBuffers``."""
    subs = cache.get("subs")
    cache.clear()
    if subs is not None:
        cache["subs"] = subs


class DeviceArray:
    """An array that lives on one device (``device``); ``get()`` copies it to the host,
    ``d[i]`` reads one element, ``d[a:b]`` is a view of the same memory."""

    __slots__ = ("device", "_host", "_cl", "_io", "_root", "_lay", "staged", "_subs", "__weakref__")

    def __init__(self, device: Any, host: np.ndarray | None, cl_array: Any, io: Any = None) -> None:
        self.device = device
        self._host = host
        self._cl = cl_array
        # the runtime's mover of an OpenCL array's data (pinned staging: clpy/runtime/
        # transfers.py); None: pyopencl's own get/set
        self._io = io
        self._root: DeviceArray | None = None  # the array a view was taken from
        self._lay: Layout | None = None  # a view's place in its root's buffer (OpenCL)
        # True for a view a kernel cannot take in place (not a sub-buffer): launches copy it
        # (clpy/abi/buffers.py); plain attribute, read on every launch
        self.staged = False
        # a root's cache for its views: sub-buffer arrays by (offset, shape), the alignment;
        # views of one region then bind the same memory object launch after launch
        self._subs: dict[Any, Any] | None = None

    # ------------------------------------------------------------------ description

    @property
    def cl_array(self) -> Any:
        """The ``pyopencl.array.Array`` (None on the simulator). For a view: an array on a
        sub-buffer, or (misaligned or not contiguous) one with an offset and strides."""
        if self._cl is None and self._lay is not None:
            self._cl = self._view_array()
        return self._cl

    @property
    def sim_array(self) -> np.ndarray | None:
        """The simulator's NumPy array, used in place (None on an OpenCL device)."""
        return self._host

    @property
    def base(self) -> DeviceArray | None:
        """The device array this one is a view of (None: it owns its memory)."""
        return self._root

    @property
    def shape(self) -> tuple[int, ...]:
        if self._host is not None:
            return tuple(self._host.shape)
        if self._lay is not None:
            return self._lay.shape
        return tuple(self._cl.shape)

    @property
    def dtype(self) -> np.dtype[Any]:
        if self._host is not None:
            return self._host.dtype
        root = self._root if self._root is not None else self
        return root._cl.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def flags(self) -> Any:
        if self._host is not None:
            return self._host.flags
        return self.cl_array.flags

    def _layout(self) -> Layout:
        """Where this array's elements are in its root's ``base_data`` (OpenCL)."""
        if self._lay is not None:
            return self._lay
        cache = self._cache()
        got = cache.get("layout")
        if got is None:  # a whole array's place never changes
            arr = self._cl
            got = Layout(tuple(arr.shape), tuple(arr.strides), int(arr.offset), arr.dtype.itemsize)
            cache["layout"] = got
        return cast(Layout, got)

    def _buffer(self) -> tuple[Any, Any]:
        """(queue, the root's memory object) of an OpenCL array or view."""
        root = self._root._cl if self._root is not None else self._cl
        return root.queue, root.base_data

    # ------------------------------------------------------------------ whole-array copies

    def get(self, out: np.ndarray | None = None) -> np.ndarray:
        """A host copy of the data; into ``out`` (same shape and dtype, C-contiguous, e.g. a
        ``clpy.pinned_empty`` array) when given."""
        if out is not None:
            if out.shape != self.shape or out.dtype != self.dtype or not out.flags.c_contiguous:
                raise ValueError(
                    f"DeviceArray.get(out=...): expected a C-contiguous {self.dtype} array of "
                    f"shape {self.shape}, got {out.dtype} {out.shape}"
                )
        if self._host is not None:
            if out is None:
                return self._host.copy()
            np.copyto(out, self._host)
            return out
        if self._root is not None:
            return self._read(self._lay, out)  # type: ignore[arg-type]
        if self._io is not None:
            return self._io.read(self._cl, out)
        if out is None:
            return self._cl.get()
        self._cl.get(ary=out)
        return out

    def set(self, a: Any) -> None:
        """Overwrite the data with ``a`` (same shape; converted to this array's dtype)."""
        if isinstance(a, DeviceArray):
            a = a.get()
        src = np.ascontiguousarray(a, dtype=self.dtype)
        if src.shape != self.shape:
            raise ValueError(f"DeviceArray.set: expected shape {self.shape}, got {src.shape}")
        if self._host is not None:
            np.copyto(self._host, src)
        elif self._root is not None:
            self._write(self._lay, src)  # type: ignore[arg-type]
        elif self._io is not None:
            self._io.write(self._cl, src)
        else:
            self._cl.set(src)

    def copy(self) -> DeviceArray:
        """A new device array with the same data, on the same device (a view's copy owns a
        contiguous buffer of its own)."""
        if self._host is not None:
            return DeviceArray(self.device, self._host.copy(), None)
        if self._root is None:
            return DeviceArray(self.device, None, self._cl.copy(), self._io)
        import pyopencl as cl  # deferred: `import clpy` does not load pyopencl
        import pyopencl.array as cla

        queue, buf = self._buffer()
        lay = self._lay
        assert lay is not None
        dst = cla.empty(queue, lay.shape, self.dtype)
        if lay.nbytes:
            run = (lay.offset, lay.nbytes) if lay.c_contiguous else None
            regions.copy_region(cl, queue, dst.base_data, buf, rect_blocks(lay), run)
        return DeviceArray(self.device, None, dst, transfers.MOVER)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = self.get()
        return a if dtype is None else a.astype(dtype)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d DeviceArray")
        return self.shape[0]

    def __repr__(self) -> str:
        what = "view" if self._root is not None else "DeviceArray"
        return f"<clpy.DeviceArray {what} {self.dtype} {self.shape} on {self.device}>"

    # ------------------------------------------------------------------ indexing

    def __getitem__(self, key: Any) -> Any:
        """``d[i, j]``: one element (a NumPy scalar, one small read); ``d[a:b]``, ``d[...]``,
        ``d[i]`` of a multi-dimensional array: a view of the same memory."""
        if self._host is not None:
            lay = index_layout(Layout.contiguous(self.shape, self.dtype.itemsize), key)
            got = self._host[key]
            if not lay.shape and not isinstance(got, np.ndarray):
                return got  # NumPy scalar
            return self._view_of(got, None)
        arr = self._cl
        if type(key) is int and self._lay is None and arr.ndim == 1 and -arr.size <= key < arr.size:
            # the common d[i] of a reduction's result on a whole array: one small blocking read
            import pyopencl as cl

            out = np.empty(1, arr.dtype)
            offset = arr.offset + (key % arr.size) * arr.strides[0]
            cl.enqueue_copy(arr.queue, out, arr.base_data, src_offset=offset)
            return out[0]
        base = self._layout()
        if type(key) is int and len(base.shape) == 1 and -base.shape[0] <= key < base.shape[0]:
            # the common d[i] of a reduction's result: straight to the one-element read
            import pyopencl as cl

            out = np.empty(1, self.dtype)
            queue, buf = self._buffer()
            offset = base.offset + (key % base.shape[0]) * base.strides[0]
            transfers.download(cl, queue, out, buf, offset)
            return out[0]
        lay = index_layout(base, key)
        if not lay.shape:
            out = np.empty(1, self.dtype)
            self._read(lay, out)
            return out[0]
        return self._view_of(None, lay)

    def __setitem__(self, key: Any, value: Any) -> None:
        """``d[a:b] = values``: writes that region only (``values`` broadcast to it and
        converted to the dtype, as NumPy does; a DeviceArray is copied on the device)."""
        if self._host is not None:
            index_layout(Layout.contiguous(self.shape, self.dtype.itemsize), key)
            if isinstance(value, DeviceArray):
                value = value.get()
            src = np.asarray(value, dtype=self.dtype)
            target = self._host[key]
            try:
                shaped = np.broadcast_to(src, np.shape(target))
            except ValueError:
                raise self._broadcast_error(src.shape, np.shape(target)) from None
            self._host[key] = shaped
            return
        lay = index_layout(self._layout(), key)
        if lay.size == 0:
            return
        if isinstance(value, DeviceArray) and value._host is None:
            same = value.shape == lay.shape and value.dtype == self.dtype
            if same and self._same_buffer_ok(value, lay):
                self._copy_from_device(value, lay)
                return
            value = value.get()
        src = np.asarray(value, dtype=self.dtype)
        size = self.dtype.itemsize  # fill patterns are 1, 2, 4 ... 128 bytes (spec §5.2.3)
        if src.ndim == 0 and lay.c_contiguous and size <= 128 and not size & (size - 1):
            import pyopencl as cl

            queue, buf = self._buffer()
            regions.fill_region(cl, queue, buf, lay.offset, lay.nbytes, src)
            return
        try:
            shaped = np.ascontiguousarray(np.broadcast_to(src, lay.shape))
        except ValueError:
            raise self._broadcast_error(src.shape, lay.shape) from None
        self._write(lay, shaped)

    @staticmethod
    def _broadcast_error(got: tuple[int, ...], want: tuple[int, ...]) -> ValueError:
        return ValueError(
            f"DeviceArray assignment: could not broadcast values of shape {got} into the "
            f"indexed region of shape {want}"
        )

    def _view_of(self, host: np.ndarray | None, lay: Layout | None) -> DeviceArray:
        root = self._root if self._root is not None else self
        cache = None
        if lay is not None:
            # the same region again is the same view object while one is alive (OpenCL): a
            # view holds nothing but its place, and a loop launching on d[a:b] then repeats
            # the same launch (clpy/runtime/clplan.py _run_again; the plan holds the last
            # launch's views) instead of converting new objects. Weak: a strong entry would be
            # a cycle (root -> view -> root), freeing the device memory only at a collection.
            cache = root._cache()
            ref = cache.get(lay)
            v = ref() if ref is not None else None
            if v is not None:
                return cast(DeviceArray, v)
        v = DeviceArray(self.device, host, None, self._io)
        v._root = root
        if lay is not None and cache is not None:
            v._lay = lay
            v.staged = not (lay.c_contiguous and lay.offset % root._align() == 0)
            if len(cache) > _SUB_CACHE:
                _clear_views(cache)
            cache[lay] = weakref.ref(v)
        return v

    def _sub_buffers(self) -> _SubBuffers:
        """This root's ``_SubBuffers`` (made with the finalizer that releases them)."""
        cache = self._cache()
        subs = cache.get("subs")
        if subs is None:
            subs = cache["subs"] = _SubBuffers()
            weakref.finalize(self, _SubBuffers.release_all, subs.bufs)
        return cast(_SubBuffers, subs)

    def _cache(self) -> dict[Any, Any]:
        if self._subs is None:
            self._subs = {}
        return self._subs

    def _align(self) -> int:
        """The device's base address alignment in bytes (sub-buffer origins)."""
        cache = self._cache()
        got = cache.get("align")
        if got is None:
            got = cache["align"] = max(int(self._cl.queue.device.mem_base_addr_align) // 8, 1)
        return int(got)

    def _view_array(self) -> Any:
        import pyopencl.array as cla

        queue, buf = self._buffer()
        lay = self._lay
        assert lay is not None
        dtype = self.dtype
        if lay.nbytes == 0:
            return cla.empty(queue, lay.shape, dtype)
        if not self.staged:
            import pyopencl as cl

            assert self._root is not None
            cache = self._root._cache()
            key = (lay.offset, lay.shape)
            arr = cache.get(key)
            if arr is None:
                if len(cache) > _SUB_CACHE:
                    _clear_views(cache)
                sub = buf.get_sub_region(lay.offset, lay.nbytes, cl.mem_flags.READ_WRITE)
                arr = cache[key] = cla.Array(queue, lay.shape, dtype, data=sub)
                self._root._sub_buffers().add(sub)
            return arr
        return cla.Array(queue, lay.shape, dtype, strides=lay.strides, data=buf, offset=lay.offset)

    # ------------------------------------------------------------------ region copies (OpenCL)

    def _read(self, lay: Layout, out: np.ndarray | None) -> np.ndarray:
        import pyopencl as cl

        if out is None:
            out = np.empty(lay.shape, self.dtype)
        if lay.nbytes == 0:
            return out
        queue, buf = self._buffer()
        if lay.c_contiguous:
            transfers.download(cl, queue, out, buf, lay.offset)
        else:
            regions.read_rects(cl, queue, out, buf, rect_blocks(lay))
        return out

    def _write(self, lay: Layout, src: np.ndarray) -> None:
        import pyopencl as cl

        if lay.nbytes == 0:
            return
        queue, buf = self._buffer()
        if lay.c_contiguous:
            transfers.upload(cl, queue, buf, src, lay.offset)
        else:
            regions.write_rects(cl, queue, buf, src, rect_blocks(lay))

    def _same_buffer_ok(self, value: DeviceArray, lay: Layout) -> bool:
        """``value`` can be copied into ``lay`` on the device: same context, and not an
        overlapping region of the same buffer (OpenCL forbids overlapping copies)."""
        vq, vbuf = value._buffer()
        q, buf = self._buffer()
        if vq.context != q.context:
            return False
        if vbuf.int_ptr != buf.int_ptr:
            return True
        a0, a1 = lay.extent()
        b0, b1 = value._layout().extent()
        return a1 <= b0 or b1 <= a0

    def _copy_from_device(self, value: DeviceArray, lay: Layout) -> None:
        import pyopencl as cl

        q, buf = self._buffer()
        vq, vbuf = value._buffer()
        vlay = value._layout()
        if vq is not q and vq != q:
            vq.finish()  # the source's pending writes on its own queue come first
        if vlay.c_contiguous and lay.c_contiguous:
            cl.enqueue_copy(
                q, buf, vbuf, src_offset=vlay.offset, dst_offset=lay.offset, byte_count=lay.nbytes
            )
        else:  # through the host: rectangular device-to-device copies need matching pitches
            self._write(lay, value.get())

    # ------------------------------------------------------------------ launches (OpenCL)

    def staged_buffer(self, cl: Any) -> Any:
        """A new device buffer holding this (contiguous, staged) view's data, for a launch
        (clpy/abi/buffers.py ``ViewUpload``); the copy has finished on return, so a launch on
        another queue of the context sees it."""
        queue, buf = self._buffer()
        lay = self._lay
        assert lay is not None
        dst = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, max(lay.nbytes, 1))
        if lay.nbytes:
            cl.enqueue_copy(queue, dst, buf, src_offset=lay.offset, byte_count=lay.nbytes).wait()
        return dst

    def stage_into(self, cl: Any, queue: Any, dst: Any) -> None:
        """Copy this (contiguous, staged) view's data into ``dst`` (a pooled buffer of the
        launch's in-order ``queue``: clpy/runtime/transfers.py), enqueued on that queue, so
        the copy runs after every earlier use of ``dst`` there and before the kernel. When the
        array lives on another queue of the context, the copy also waits for a marker of
        everything enqueued there so far (its pending writes to the view), without blocking
        the host."""
        vq, buf = self._buffer()
        lay = self._lay
        assert lay is not None
        if lay.nbytes:
            after = None if vq is queue or vq == queue else [cl.enqueue_marker(vq)]
            cl.enqueue_copy(
                queue, dst, buf, src_offset=lay.offset, byte_count=lay.nbytes, wait_for=after
            )

    def copy_from_buffer(self, cl: Any, queue: Any, src: Any, **kw: Any) -> Any:
        """Copy a launch's ``staged_buffer`` back into this view (after the kernel
        succeeded), on the launch's ``queue``; ``kw``: ``wait_for``, ``is_blocking``."""
        _, buf = self._buffer()
        lay = self._lay
        assert lay is not None
        blocking = kw.pop("is_blocking", True)
        evt = cl.enqueue_copy(queue, buf, src, dst_offset=lay.offset, byte_count=lay.nbytes, **kw)
        if blocking:
            evt.wait()
        return evt

    def memory_region(self) -> tuple[DeviceArray, int, int]:
        """(the array owning the memory, first byte, last byte + 1) this array touches."""
        root = self._root if self._root is not None else self
        if self._host is not None:
            start = self._host.__array_interface__["data"][0]
            rstart = root._host.__array_interface__["data"][0]  # type: ignore[union-attr]
            return root, start - rstart, start - rstart + self.nbytes
        a0, a1 = self._layout().extent()
        return root, a0, a1

    def check_kernel_view(self, where: str) -> None:
        """A view a kernel takes must be one contiguous region."""
        if self._host is not None:
            contiguous = bool(self._host.flags.c_contiguous)
        else:
            contiguous = self._layout().c_contiguous
        if not contiguous:
            raise ValueError(
                f"{where}: this DeviceArray view (shape {self.shape}) is not contiguous in "
                "memory; a kernel takes one contiguous region: pass view.copy(), or index "
                "whole trailing axes"
            )
