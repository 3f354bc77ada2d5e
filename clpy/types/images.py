"""Image and sampler types of OpenCL C (spec §1.1.3 other data types, §1.6 access qualifiers,
§1.13.14 image functions).

``clpy.Image2D`` is a ``read_only image2d_t`` parameter (a bare image type is read-only, as
in OpenCL C); ``clpy.WriteOnly[clpy.Image2D]`` and ``clpy.ReadWrite[clpy.Image2D]`` give the
other access qualifiers, ``clpy.ReadOnly[...]`` spells the default. ``clpy.Sampler`` is a
``sampler_t`` parameter. Images are parameters only: they cannot be stored in variables or
structs (spec §1.9), and they have no operators.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from clpy.types.catalog import sampler_t
from clpy.types.core import Type

ACCESSES = ("read_only", "write_only", "read_write")


@dataclass(frozen=True)
class ImageKind:
    """One of the spec's image types: its OpenCL name, the clpy name, the number of pixel
    axes (``dims``: 1, 2 or 3), whether the last axis is an array layer, depth images
    (one float per pixel), and 1-D buffer images (sampler-less reads only)."""

    cl: str
    py: str
    dims: int
    arrayed: bool = False
    depth: bool = False
    buffer: bool = False

    @property
    def coord_lanes(self) -> int:
        """Lanes of the coordinate the built-ins take: 1, 2 or 4 (3 axes use a 4-vector)."""
        n = self.dims + (1 if self.arrayed else 0)
        return 4 if n == 3 else n

    @property
    def axes(self) -> int:
        """Axes of the pixel grid including the layer axis (1 to 3)."""
        return self.dims + (1 if self.arrayed else 0)


KINDS: dict[str, ImageKind] = {
    k.py: k
    for k in (
        ImageKind("image1d_t", "Image1D", 1),
        ImageKind("image1d_buffer_t", "Image1DBuffer", 1, buffer=True),
        ImageKind("image1d_array_t", "Image1DArray", 1, arrayed=True),
        ImageKind("image2d_t", "Image2D", 2),
        ImageKind("image2d_array_t", "Image2DArray", 2, arrayed=True),
        ImageKind("image2d_depth_t", "Image2DDepth", 2, depth=True),
        ImageKind("image2d_array_depth_t", "Image2DArrayDepth", 2, arrayed=True, depth=True),
        ImageKind("image3d_t", "Image3D", 3),
    )
}


@dataclass(frozen=True, eq=False, repr=False)
class ImageType(Type):
    """``<access> <image type>``: ``kind`` names an entry of ``KINDS``."""

    kind_name: str
    access: str = "read_only"

    @property
    def kind(self) -> ImageKind:
        return KINDS[self.kind_name]

    @property
    def cl_name(self) -> str:
        return f"{self.access} {self.kind.cl}"

    @property
    def size(self) -> int:
        return 8

    @property
    def readable(self) -> bool:
        return self.access != "write_only"

    @property
    def writable(self) -> bool:
        return self.access != "read_only"

    def __repr__(self) -> str:
        base = f"clpy.{self.kind_name}"
        if self.access == "read_only":
            return base
        wrap = "WriteOnly" if self.access == "write_only" else "ReadWrite"
        return f"clpy.{wrap}[{base}]"


class _Access:
    """``clpy.ReadOnly[T]`` / ``WriteOnly[T]`` / ``ReadWrite[T]`` for an image type ``T``."""

    def __init__(self, access: str, py: str) -> None:
        self.access = access
        self.py = py

    def __getitem__(self, t: Any) -> ImageType:
        if not isinstance(t, ImageType):
            raise TypeError(
                f"clpy.{self.py}[...] takes an image type (clpy.Image2D ...), not {t!r}"
            )
        if t.access != "read_only":
            raise TypeError(f"clpy.{self.py}[{t!r}]: the image type already has an access")
        return ImageType(t.kind_name, self.access)

    def __repr__(self) -> str:
        return f"clpy.{self.py}"


ReadOnly = _Access("read_only", "ReadOnly")
WriteOnly = _Access("write_only", "WriteOnly")
ReadWrite = _Access("read_write", "ReadWrite")

Image1D = ImageType("Image1D")
Image1DBuffer = ImageType("Image1DBuffer")
Image1DArray = ImageType("Image1DArray")
Image2D = ImageType("Image2D")
Image2DArray = ImageType("Image2DArray")
Image2DDepth = ImageType("Image2DDepth")
Image2DArrayDepth = ImageType("Image2DArrayDepth")
Image3D = ImageType("Image3D")

IMAGE_TYPES: dict[str, ImageType] = {name: ImageType(name) for name in KINDS}

Sampler = sampler_t
"""``clpy.Sampler``: a ``sampler_t`` kernel parameter (pass ``clpy.sampler(...)``)."""


def contains_image(t: Type) -> bool:
    """Whether ``t`` is an image or a sampler (types that live only in parameters)."""
    return isinstance(t, ImageType)
