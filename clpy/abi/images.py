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

    @property
    def region(self) -> tuple[int, ...]:
        lay, k = self.layout, self.kind
        if k.dims == 1:
            return (lay.width, lay.layers) if k.arrayed else (lay.width,)
        if k.dims == 2:
            return (lay.width, lay.height, lay.layers) if k.arrayed else (lay.width, lay.height)
        return (lay.width, lay.height, lay.depth)

    def upload(self, ctx: Any, cl: Any) -> Any:
        f = self.layout.format
        fmt = cl.ImageFormat(f.order_code, f.type_code)
        if self.kind.buffer:
            buf = cl.Buffer(
                ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=self.array
            )
            return cl.Image(
                ctx, self.flags & ~cl.mem_flags.COPY_HOST_PTR, fmt, shape=self.region, buffer=buf
            )
        return cl.Image(
            ctx, self.flags, fmt, shape=self.region, hostbuf=self.array, is_array=self.kind.arrayed
        )


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
        shape: tuple[int, ...] = tuple(a.shape)  # type: ignore[attr-defined]
        from_cl = _pyopencl_array(shape, ImageFormat(order, ctype))
        queue = cl.CommandQueue(a.context)
        cl.enqueue_copy(queue, from_cl, a, origin=(0,) * len(shape), region=shape)
        normalized = "NORM" in ctype
        img = Image(
            from_cl,
            normalized=normalized,
            channel_order=order,
            channel_type=ctype if ctype in PACKED else None,
        )
        if self.copies_back:
            deferred.append(
                SimDeferred(
                    commit=lambda: cl.enqueue_copy(
                        queue, a, from_cl, origin=(0,) * len(shape), region=shape
                    )
                )
            )
        return img

    def bind_sim(self, binder: SimBinder, value: Any) -> Any:
        if not isinstance(value, SimImageArg):
            raise TypeError(f"sim.launch: argument {self.name!r} must be an image")
        return binder.image(self, value)


def _pyopencl_array(cl_shape: tuple[int, ...], f: ImageFormat) -> np.ndarray:
    shape = tuple(reversed(cl_shape))
    return np.empty((*shape, f.channels) if f.channels > 1 else shape, TYPE_DTYPES[f.ctype])


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
