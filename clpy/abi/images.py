"""Image and sampler parameters (``clpy.Image2D`` ..., ``clpy.Sampler``; spec §1.13.14).

An image parameter takes a NumPy array (the image: see ``clpy.runtime.images``), a
``clpy.Image`` (the array plus a format) or a ``pyopencl.Image`` (used in place on its
context). The array is copied to the device; images the kernel may write (``WriteOnly``,
``ReadWrite``) are copied back into it after the kernel succeeded. A format the device cannot
hold is a ``TypeError`` naming the parameter, the format and the device, before anything runs.
A sampler parameter takes ``clpy.sampler(...)`` or a ``pyopencl.Sampler``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from clpy.abi.base import CLSite, Converter, HeaderArg, Param, SimBinder, tname
from clpy.abi.buffers import ForeignContext, HostUpload, SimDeferred
from clpy.builtins.samplers import CHANNEL_ORDERS, CHANNEL_TYPES, SamplerSpec
from clpy.runtime.images import PACKED, TYPE_DTYPES, Image, ImageFormat, Layout
from clpy.types.images import ImageKind, ImageType

_MEM_TYPES = {
    "image1d_t": "IMAGE1D",
    "image1d_buffer_t": "IMAGE1D_BUFFER",
    "image1d_array_t": "IMAGE1D_ARRAY",
    "image2d_t": "IMAGE2D",
    "image2d_array_t": "IMAGE2D_ARRAY",
    "image2d_depth_t": "IMAGE2D",
    "image2d_array_depth_t": "IMAGE2D_ARRAY",
    "image3d_t": "IMAGE3D",
}
_ORDER_NAMES = {v: k for k, v in CHANNEL_ORDERS.items()}
_TYPE_NAMES = {v: k for k, v in CHANNEL_TYPES.items()}


@dataclass
class SimImageArg:
    """A checked image for the simulator: ``data`` is the working copy as a
    ``(depth or layers, height or layers, width, channels)`` array, ``layout`` its geometry
    and format, ``written`` whether the kernel may write it."""

    data: np.ndarray
    layout: Layout
    written: bool


class ImageUpload(HostUpload):
    """A checked image argument, made on the device once every argument passed its checks."""

    __slots__ = ("layout", "kind")

    def __init__(
        self, array: np.ndarray, flags: Any, written: bool, layout: Layout, kind: ImageKind
    ) -> None:
        super().__init__(array, flags, written)
        self.layout = layout
        self.kind = kind

    def upload(self, ctx: Any, cl: Any) -> Any:
        lay, k = self.layout, self.kind
        f = lay.format
        fmt = cl.ImageFormat(f.order_code, f.type_code)
        desc = cl.ImageDescriptor()
        desc.image_type = getattr(cl.mem_object_type, _MEM_TYPES[k.cl])
        h = lay.height if k.dims >= 2 else 1
        desc.shape = (lay.width, h, lay.depth if k.dims == 3 else 1)
        desc.array_size = lay.layers if k.arrayed else 0
        desc.pitches = (0, 0)
        if k.buffer:
            desc.buffer = cl.Buffer(
                ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=self.array
            )
            return cl.Image(ctx, self.flags & ~cl.mem_flags.COPY_HOST_PTR, fmt, desc=desc)
        return cl.Image(ctx, self.flags, fmt, desc=desc, hostbuf=self.array)


def image_extent(cl: Any, img: Any) -> tuple[int, int, int]:
    """The region of a whole ``pyopencl.Image`` for a read: (width, height or layers, depth or
    layers)."""
    info = cl.image_info
    w, h, d = (max(1, int(img.get_image_info(i))) for i in (info.WIDTH, info.HEIGHT, info.DEPTH))
    t = img.type
    if t in (cl.mem_object_type.IMAGE1D_ARRAY, cl.mem_object_type.IMAGE2D_ARRAY):
        n = int(img.get_image_info(info.ARRAY_SIZE))
        return (w, n, 1) if t == cl.mem_object_type.IMAGE1D_ARRAY else (w, h, n)
    return (w, h, d)


def read_image(cl: Any, queue: Any, host: np.ndarray, img: Any, **kw: Any) -> Any:
    """Copy a whole image into ``host`` (pyopencl's ``enqueue_copy`` takes no image arrays)."""
    return cl._cl._enqueue_read_image(queue, img, (0, 0, 0), image_extent(cl, img), host, **kw)


def write_image(cl: Any, queue: Any, img: Any, host: np.ndarray) -> Any:
    """Copy ``host`` into a whole image."""
    return cl._cl._enqueue_write_image(queue, img, (0, 0, 0), image_extent(cl, img), host)


@dataclass(frozen=True)
class ImageParam(Param):
    """A ``read_only``/``write_only``/``read_write`` image parameter."""

    kind: ClassVar[str] = "image"

    @property
    def image(self) -> ImageType:
        assert isinstance(self.type, ImageType)
        return self.type

    @property
    def copies_back(self) -> bool:
        return self.image.writable

    def header_arg(self) -> HeaderArg:
        return HeaderArg(
            "cl_mem", "sizeof(cl_mem)", f"{self.image.cl_name}: an image made with clCreateImage"
        )

    def layout(self, a: Any) -> tuple[Image, Layout]:
        """The host image of argument ``a`` and its layout; errors name the parameter."""
        if isinstance(a, np.ndarray):
            try:
                a = Image(a)
            except (TypeError, ValueError) as e:
                raise type(e)(f"{self.where()}: {str(e).removeprefix('clpy.Image: ')}") from None
        if not isinstance(a, Image):
            raise TypeError(
                f"{self.where()}: an image parameter takes a NumPy array, a clpy.Image or a "
                f"pyopencl.Image, got {tname(a)}"
            )
        try:
            lay = a.layout(self.image.kind)
        except ValueError as e:
            raise ValueError(f"{self.where()}: {e}") from None
        arr = a.array
        if not arr.flags.c_contiguous:
            raise ValueError(
                f"{self.where()}: the array is not C-contiguous; pass np.ascontiguousarray(...)"
            )
        if self.copies_back and not arr.flags.writeable:
            raise ValueError(
                f"{self.where()}: the kernel may write this image but the array is read-only"
            )
        return a, lay

    # ------------------------------------------------------------------ OpenCL

    def cl_converter(self, site: CLSite) -> Converter:
        import pyopencl as cl

        ctx = site.context
        mf = cl.mem_flags
        access = self.image.access
        flags = {"read_only": mf.READ_ONLY, "write_only": mf.WRITE_ONLY}.get(access, mf.READ_WRITE)
        query: Any = flags | (mf.KERNEL_READ_AND_WRITE if access == "read_write" else 0)
        mem_type = getattr(cl.mem_object_type, _MEM_TYPES[self.image.kind.cl])
        supported: list[frozenset[tuple[int, int]]] = []

        def formats() -> frozenset[tuple[int, int]]:
            if not supported:
                got = cl.get_supported_image_formats(ctx, query, mem_type)
                supported.append(frozenset((f.channel_order, f.channel_data_type) for f in got))
            return supported[0]

        def conv(a: Any, pending: list[Any]) -> Any:
            if isinstance(a, cl.Image):
                if a.context != ctx:
                    raise ForeignContext(a.context, None, self.name)
                return a
            img, lay = self.layout(a)
            f = lay.format
            if (f.order_code, f.type_code) not in formats():
                dev = ", ".join(d.name for d in ctx.devices)
                raise TypeError(
                    f"{self.where()}: the device ({dev}) has no {self.image.kind.cl} of format "
                    f"{f} for {access} use; its formats: {_format_list(formats())}"
                )
            pending.append(img)
            return ImageUpload(
                img.array, flags | mf.COPY_HOST_PTR, self.copies_back, lay, self.image.kind
            )

        return conv

    # ------------------------------------------------------------------ simulator

    def sim_converter(self) -> Converter:
        def conv(a: Any, deferred: list[SimDeferred]) -> SimImageArg:
            if not isinstance(a, (np.ndarray, Image)):
                a = self._from_pyopencl(a, deferred)
                if isinstance(a, SimImageArg):
                    return a
            img, lay = self.layout(a)
            host = img.array
            work = np.array(host, copy=True, order="C")
            if self.copies_back:
                deferred.append(SimDeferred(commit=lambda: np.copyto(host, work)))
            data = work.reshape(*lay.shape, -1)
            return SimImageArg(data, lay, self.copies_back)

        return conv

    def _from_pyopencl(self, a: Any, deferred: list[SimDeferred]) -> Any:
        try:
            import pyopencl as cl
        except ImportError:  # pragma: no cover - pyopencl is a dependency
            return a
        if not isinstance(a, cl.Image):
            return a
        fmt = a.format
        order = _ORDER_NAMES.get(fmt.channel_order)
        ctype = _TYPE_NAMES.get(fmt.channel_data_type)
        if order is None or ctype is None:
            raise TypeError(f"{self.where()}: unknown pyopencl image format {fmt}")
        w, h, d = image_extent(cl, a)
        full = (w, h, d)
        axes = self.image.kind.axes
        shape = tuple(reversed(full[:axes]))
        f = ImageFormat(order, ctype)
        from_cl = np.empty((*shape, f.channels) if f.channels > 1 else shape, TYPE_DTYPES[ctype])
        queue = cl.CommandQueue(a.context)
        read_image(cl, queue, from_cl, a)
        img = Image(
            from_cl,
            normalized="NORM" in ctype,
            channel_order=order,
            channel_type=ctype if ctype in PACKED else None,
        )
        if self.copies_back:
            deferred.append(SimDeferred(commit=lambda: write_image(cl, queue, a, from_cl)))
        return img

    def bind_sim(self, binder: SimBinder, value: Any) -> Any:
        if not isinstance(value, SimImageArg):
            raise TypeError(f"sim.launch: argument {self.name!r} must be an image")
        return binder.image(self, value)


def _format_list(fmts: frozenset[tuple[int, int]]) -> str:
    names = sorted(
        f"CL_{_ORDER_NAMES.get(o, hex(o))}/CL_{_TYPE_NAMES.get(t, hex(t))}" for o, t in fmts
    )
    return ", ".join(names) if names else "none"


@dataclass(frozen=True)
class SamplerParam(Param):
    """A ``sampler_t`` parameter."""

    kind: ClassVar[str] = "sampler"

    def header_arg(self) -> HeaderArg:
        return HeaderArg(
            "cl_sampler", "sizeof(cl_sampler)", "sampler_t: a sampler made with clCreateSampler"
        )

    def check(self, a: Any) -> Any:
        if isinstance(a, SamplerSpec):
            return a
        try:
            import pyopencl as cl
        except ImportError:  # pragma: no cover - pyopencl is a dependency
            pass
        else:
            if isinstance(a, cl.Sampler):
                return a
        raise TypeError(
            f"{self.where()}: a sampler parameter takes clpy.sampler(...) or a "
            f"pyopencl.Sampler, got {tname(a)}"
        )

    def cl_converter(self, site: CLSite) -> Converter:
        import pyopencl as cl

        ctx = site.context
        made: dict[SamplerSpec, Any] = {}

        def conv(a: Any, pending: list[Any]) -> Any:
            s = self.check(a)
            if not isinstance(s, SamplerSpec):
                return s
            cs = made.get(s)
            if cs is None:
                cs = cl.Sampler(
                    ctx,
                    s.normalized,
                    getattr(cl.addressing_mode, s.address),
                    getattr(cl.filter_mode, s.filter),
                )
                made[s] = cs
            return cs

        return conv

    def sim_converter(self) -> Converter:
        def conv(a: Any, deferred: list[SimDeferred]) -> SamplerSpec:
            s = self.check(a)
            if isinstance(s, SamplerSpec):
                return s
            import pyopencl as cl

            inv_a = {
                getattr(cl.addressing_mode, n): n
                for n in ("NONE", "CLAMP_TO_EDGE", "CLAMP", "REPEAT", "MIRRORED_REPEAT")
            }
            inv_f = {cl.filter_mode.NEAREST: "NEAREST", cl.filter_mode.LINEAR: "LINEAR"}
            info = cl.sampler_info
            return SamplerSpec(
                bool(s.get_info(info.NORMALIZED_COORDS)),
                inv_a[s.get_info(info.ADDRESSING_MODE)],
                inv_f[s.get_info(info.FILTER_MODE)],
            )

        return conv

    def bind_sim(self, binder: SimBinder, value: Any) -> Any:
        return binder.sampler(self, value)
