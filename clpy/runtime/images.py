"""The host side of an image: ``clpy.Image(array, normalized=..., channel_order=...)``.

A NumPy array is the image (spec §1.13.14; OpenCL API ``clCreateImage``). Its axes are the
image's, slowest first: ``(w,)`` for a 1-D image, ``(h, w)`` for 2-D, ``(d, h, w)`` for 3-D,
``(n, w)`` for a 1-D array of ``n`` images and ``(n, h, w)`` for a 2-D array, plus an optional
trailing channel axis of 1, 2 or 4 (``CL_R``, ``CL_RG``, ``CL_RGBA``). The channel type comes
from the dtype: float32 → ``FLOAT``, float16 → ``HALF_FLOAT``, (u)int8/16/32 →
``(UN)SIGNED_INT*``; ``normalized=True`` makes (u)int8/16 ``UNORM``/``SNORM``. ``channel_order``
takes the spec's other orders (``"BGRA"``, ``"sRGBA"``, ``"INTENSITY"``, ``"LUMINANCE"``,
``"DEPTH"`` ...) and ``channel_type`` the packed ones (``"UNORM_SHORT_565"`` ... on uint16 or
uint32 arrays without a channel axis). A plain NumPy array passed for an image parameter means
``clpy.Image(array)``. Images the kernel writes are copied back into the array after success.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from clpy.builtins.samplers import CHANNEL_ORDERS, CHANNEL_TYPES
from clpy.types.images import ImageKind

# Channels stored per pixel for each order (packed types store one element per pixel).
ORDER_CHANNELS: dict[str, int] = {
    "R": 1,
    "A": 1,
    "INTENSITY": 1,
    "LUMINANCE": 1,
    "DEPTH": 1,
    "Rx": 2,
    "RG": 2,
    "RA": 2,
    "RGx": 3,
    "RGB": 3,
    "sRGB": 3,
    "RGBx": 4,
    "sRGBx": 4,
    "RGBA": 4,
    "BGRA": 4,
    "ARGB": 4,
    "ABGR": 4,
    "sRGBA": 4,
    "sBGRA": 4,
}
_DEFAULT_ORDER = {1: "R", 2: "RG", 4: "RGBA"}

# Storage dtype of each channel type.
TYPE_DTYPES: dict[str, np.dtype[Any]] = {
    "SNORM_INT8": np.dtype(np.int8),
    "SNORM_INT16": np.dtype(np.int16),
    "UNORM_INT8": np.dtype(np.uint8),
    "UNORM_INT16": np.dtype(np.uint16),
    "UNORM_SHORT_565": np.dtype(np.uint16),
    "UNORM_SHORT_555": np.dtype(np.uint16),
    "UNORM_INT_101010": np.dtype(np.uint32),
    "SIGNED_INT8": np.dtype(np.int8),
    "SIGNED_INT16": np.dtype(np.int16),
    "SIGNED_INT32": np.dtype(np.int32),
    "UNSIGNED_INT8": np.dtype(np.uint8),
    "UNSIGNED_INT16": np.dtype(np.uint16),
    "UNSIGNED_INT32": np.dtype(np.uint32),
    "HALF_FLOAT": np.dtype(np.float16),
    "FLOAT": np.dtype(np.float32),
    "UNORM_INT24": np.dtype(np.uint32),
}
PACKED = frozenset({"UNORM_SHORT_565", "UNORM_SHORT_555", "UNORM_INT_101010", "UNORM_INT24"})
_BY_DTYPE = {
    np.dtype(np.float32): "FLOAT",
    np.dtype(np.float16): "HALF_FLOAT",
    np.dtype(np.int8): "SIGNED_INT8",
    np.dtype(np.int16): "SIGNED_INT16",
    np.dtype(np.int32): "SIGNED_INT32",
    np.dtype(np.uint8): "UNSIGNED_INT8",
    np.dtype(np.uint16): "UNSIGNED_INT16",
    np.dtype(np.uint32): "UNSIGNED_INT32",
}
_NORMALIZED = {
    "SIGNED_INT8": "SNORM_INT8",
    "SIGNED_INT16": "SNORM_INT16",
    "UNSIGNED_INT8": "UNORM_INT8",
    "UNSIGNED_INT16": "UNORM_INT16",
}
# Orders whose channel types are restricted (OpenCL API spec, table of image formats).
_ONLY_TYPES: dict[str, frozenset[str]] = {
    "INTENSITY": frozenset({"UNORM_INT8", "UNORM_INT16", "SNORM_INT8", "SNORM_INT16"})
    | frozenset({"HALF_FLOAT", "FLOAT"}),
    "LUMINANCE": frozenset({"UNORM_INT8", "UNORM_INT16", "SNORM_INT8", "SNORM_INT16"})
    | frozenset({"HALF_FLOAT", "FLOAT"}),
    "DEPTH": frozenset({"UNORM_INT16", "FLOAT"}),
    "sRGB": frozenset({"UNORM_INT8"}),
    "sRGBx": frozenset({"UNORM_INT8"}),
    "sRGBA": frozenset({"UNORM_INT8"}),
    "sBGRA": frozenset({"UNORM_INT8"}),
    "BGRA": frozenset({"UNORM_INT8", "SNORM_INT8", "SIGNED_INT8", "UNSIGNED_INT8"}),  # 8-bit only
    "ARGB": frozenset({"UNORM_INT8", "SNORM_INT8", "SIGNED_INT8", "UNSIGNED_INT8"}),
    "ABGR": frozenset({"UNORM_INT8", "SNORM_INT8", "SIGNED_INT8", "UNSIGNED_INT8"}),
    "RGB": frozenset({"UNORM_SHORT_565", "UNORM_SHORT_555", "UNORM_INT_101010"}),
    "RGBx": frozenset({"UNORM_SHORT_565", "UNORM_SHORT_555", "UNORM_INT_101010"})
    | frozenset({"UNORM_INT8", "SNORM_INT8", "SIGNED_INT8", "UNSIGNED_INT8"}),
}


@dataclass(frozen=True)
class ImageFormat:
    """A channel order and channel data type (names without the ``CL_`` prefix)."""

    order: str
    ctype: str

    @property
    def order_code(self) -> int:
        return CHANNEL_ORDERS[self.order]

    @property
    def type_code(self) -> int:
        return CHANNEL_TYPES[self.ctype]

    @property
    def channels(self) -> int:
        """Elements stored per pixel in the host array (1 for packed types)."""
        return 1 if self.ctype in PACKED else ORDER_CHANNELS[self.order]

    def __str__(self) -> str:
        return f"CL_{self.order}/CL_{self.ctype}"


@dataclass(frozen=True)
class Layout:
    """An array seen as an image of ``kind``: ``width``, ``height`` (layers of a 1-D array),
    ``depth`` (layers of a 2-D array) in pixels (1 where the kind has no such axis), and the
    format."""

    width: int
    height: int
    depth: int
    layers: int
    format: ImageFormat

    @property
    def shape(self) -> tuple[int, int, int]:
        """(depth or layers, height or layers, width): the simulator's pixel grid."""
        return (self.depth, self.height, self.width)


class Image:
    """A NumPy array as an image (see the module docstring)::

    img = clpy.Image(rgba_u8, normalized=True)            # CL_RGBA / CL_UNORM_INT8
    blur[(w, h), (8, 8)](img, clpy.Image(out_f32), SIGMA)
    """

    def __init__(
        self,
        array: Any,
        normalized: bool = False,
        channel_order: str | None = None,
        channel_type: str | None = None,
    ) -> None:
        if not isinstance(array, np.ndarray):
            raise TypeError(
                f"clpy.Image(array): expected a NumPy array, got {type(array).__name__}"
            )
        if channel_order is not None and channel_order not in CHANNEL_ORDERS:
            raise ValueError(
                f"clpy.Image: unknown channel_order {channel_order!r}; one of "
                f"{', '.join(CHANNEL_ORDERS)}"
            )
        if channel_type is not None:
            if channel_type not in CHANNEL_TYPES:
                raise ValueError(
                    f"clpy.Image: unknown channel_type {channel_type!r}; one of "
                    f"{', '.join(CHANNEL_TYPES)}"
                )
            if TYPE_DTYPES[channel_type] != array.dtype:
                raise TypeError(
                    f"clpy.Image: channel_type {channel_type} is stored as "
                    f"{TYPE_DTYPES[channel_type]}, the array is {array.dtype}"
                )
            ctype = channel_type
        else:
            base = _BY_DTYPE.get(array.dtype)
            if base is None:
                raise TypeError(
                    f"clpy.Image: no image channel type holds {array.dtype} (float32, float16, "
                    "(u)int8, (u)int16, (u)int32)"
                )
            if normalized:
                if base not in _NORMALIZED:
                    raise TypeError(
                        f"clpy.Image(normalized=True): only (u)int8 and (u)int16 arrays are "
                        f"normalized (UNORM/SNORM), not {array.dtype}"
                    )
                base = _NORMALIZED[base]
            ctype = base
        self.array = array
        self.normalized = bool(normalized)
        self.channel_order = channel_order
        self.ctype = ctype

    def layout(self, kind: ImageKind) -> Layout:
        """The array's layout as an image of ``kind``; ``ValueError`` saying why it cannot be."""
        a = self.array
        axes = kind.axes
        if a.ndim == axes:
            nch = 1
        elif a.ndim == axes + 1 and self.ctype not in PACKED:
            nch = a.shape[-1]
        else:
            raise ValueError(
                f"a {kind.cl} is an array of {axes} axes ({_axes_text(kind)}) plus an optional "
                f"channel axis of 1, 2 or 4; got shape {a.shape}"
            )
        order = self.channel_order
        if order is None:
            if kind.depth:
                order = "DEPTH"
            elif self.ctype in PACKED:
                order = "RGB"
            elif nch in _DEFAULT_ORDER:
                order = _DEFAULT_ORDER[nch]
            else:
                raise ValueError(
                    f"the channel axis has {nch} channels; images have 1, 2 or 4 "
                    "(pass channel_order= for the others)"
                )
        fmt = ImageFormat(order, self.ctype)
        if fmt.channels != nch:
            raise ValueError(
                f"channel order {order} stores {fmt.channels} channel(s) per pixel; the "
                f"array has {nch} (shape {a.shape})"
            )
        allowed = _ONLY_TYPES.get(order)
        if (allowed is not None and self.ctype not in allowed) or (
            self.ctype in PACKED and order not in ("RGB", "RGBx", "DEPTH")
        ):
            raise ValueError(f"the image format {fmt} does not exist in OpenCL")
        if kind.depth and order != "DEPTH":
            raise ValueError(f"a {kind.cl} has channel order DEPTH, not {order}")
        if not kind.depth and order == "DEPTH":
            raise ValueError(f"channel order DEPTH is for depth images, not a {kind.cl}")
        dims = a.shape[:axes]
        if any(n == 0 for n in dims):
            raise ValueError(f"an image has no empty axis; got shape {a.shape}")
        w = dims[-1]
        h = dims[-2] if axes >= 2 else 1
        d = dims[0] if axes == 3 else 1
        layers = dims[0] if kind.arrayed else 0
        return Layout(w, h, d, layers, fmt)

    def __repr__(self) -> str:
        return f"clpy.Image(shape={self.array.shape}, {self.ctype})"


def _axes_text(kind: ImageKind) -> str:
    if kind.dims == 1:
        return "(n, w)" if kind.arrayed else "(w,)"
    if kind.dims == 2:
        return "(n, h, w)" if kind.arrayed else "(h, w)"
    return "(d, h, w)"
