"""Image built-ins of OpenCL C 2.0 (spec §1.13.14): reads with and without a sampler, writes,
and queries, for every image type (``clpy.Image1D ... Image3D``, arrays, depth, 1-D buffers).

Coordinates are scalars or vectors as in the spec: ``int``/``float`` for 1-D images,
``int2``/``float2`` for 2-D images and 1-D arrays, ``int4``/``float4`` for 3-D images and 2-D
arrays (``.w`` ignored). Float coordinates need a sampler; sampler-less reads take integer
coordinates. The access qualifier is checked at compile time: a ``write_image*`` on a read-only
image, a ``read_image*`` on a write-only one, or a sampler with a ``ReadWrite`` image is an
error at the call::

    @clpy.kernel
    def copy(src: clpy.Image2D, dst: clpy.WriteOnly[clpy.Image2D]):
        p = clpy.int2(clpy.get_global_id(0), clpy.get_global_id(1))
        clpy.write_imagef(dst, p, clpy.read_imagef(src, p))
"""

from __future__ import annotations

from collections.abc import Sequence

from clpy.builtins.registry import ArgInfo, Builtin, NoMatch, Overload, declare
from clpy.types import catalog as C
from clpy.types.catalog import sampler_t
from clpy.types.core import ScalarType, Type, VectorType
from clpy.types.images import ImageType

_FEATURE_READ_WRITE = "__opencl_c_read_write_images"


def _vec(elem: ScalarType, n: int) -> Type:
    return elem if n == 1 else VectorType(elem, n)


def _image(b: Builtin, a: ArgInfo, need: str) -> ImageType:
    t = a.type
    if not isinstance(t, ImageType):
        raise NoMatch(f"the first argument of {b.name} must be an image parameter, not {t}")
    if need == "read" and not t.readable:
        raise NoMatch(
            f"{b.name} reads an image, but this image is write_only ({t!r}); declare it "
            "clpy.ReadOnly[...] or clpy.ReadWrite[...]"
        )
    if need == "write" and not t.writable:
        raise NoMatch(
            f"{b.name} writes an image, but this image is read_only ({t!r}); declare it "
            "clpy.WriteOnly[...] or clpy.ReadWrite[...]"
        )
    return t


def _coord(b: Builtin, a: ArgInfo, img: ImageType, allow_float: bool) -> Type:
    """The coordinate parameter type for argument ``a`` (int or float lanes of the kind)."""
    n = img.kind.coord_lanes
    t = a.type
    want_i, want_f = _vec(C.int_, n), _vec(C.float_, n)
    if n == 1 and isinstance(t, ScalarType) and not t.is_bool:
        if t.is_float:
            if allow_float:
                return C.float_
        else:
            return C.int_
    if t is want_i or (allow_float and t is want_f):
        return t
    forms = f"{want_i} or {want_f}" if allow_float else f"{want_i}"
    raise NoMatch(
        f"{b.name}: the coordinate of a {img.kind.cl} is {forms}, not {t}"
        + ("" if allow_float else " (float coordinates need a sampler)")
    )


_READ_RET = {"read_imagef": C.float_, "read_imagei": C.int_, "read_imageui": C.uint}


def _read_ret(b: Builtin, img: ImageType) -> Type:
    elem = C.half if b.name == "read_imageh" else _READ_RET[b.name]
    if img.kind.depth:
        if b.name != "read_imagef":
            raise NoMatch(f"depth images are read with read_imagef only, not {b.name}")
        return C.float_
    return VectorType(elem, 4)


def _read_rule(b: Builtin, args: Sequence[ArgInfo]) -> Overload:
    if len(args) not in (2, 3):
        raise NoMatch(f"{b.name} takes (image, coord) or (image, sampler, coord)")
    img = _image(b, args[0], "read")
    ret = _read_ret(b, img)
    if len(args) == 2:
        return Overload((img, _coord(b, args[1], img, False)), ret)
    if args[1].type is not sampler_t:
        raise NoMatch(f"{b.name}: the second argument must be a sampler, not {args[1].type}")
    if img.access == "read_write":
        raise NoMatch(
            f"{b.name}: a sampler cannot be used with a read_write image (spec §1.13.14: "
            "read_write images have sampler-less reads only); declare the image "
            "clpy.ReadOnly[...] or read it with integer coordinates and no sampler"
        )
    if img.kind.buffer:
        raise NoMatch(f"{b.name}: 1-D buffer images have sampler-less reads only")
    return Overload((img, sampler_t, _coord(b, args[2], img, True)), ret)


_WRITE_COLOR = {"write_imagef": C.float_, "write_imagei": C.int_, "write_imageui": C.uint}


def _write_rule(b: Builtin, args: Sequence[ArgInfo]) -> Overload:
    if len(args) != 3:
        raise NoMatch(f"{b.name} takes (image, coord, color)")
    img = _image(b, args[0], "write")
    elem = C.half if b.name == "write_imageh" else _WRITE_COLOR[b.name]
    if img.kind.depth:
        if b.name != "write_imagef":
            raise NoMatch(f"depth images are written with write_imagef only, not {b.name}")
        color: Type = C.float_
        if args[2].type is not C.float_ and not args[2].weak:
            raise NoMatch(f"{b.name}: the depth written is a float, not {args[2].type}")
    else:
        color = VectorType(elem, 4)
        if args[2].type is not color:
            raise NoMatch(f"{b.name}: the color is a {color}, not {args[2].type}")
    return Overload((img, _coord(b, args[1], img, False), color), C.void)


def _query_rule(ret: Type, which: str) -> object:
    def rule(b: Builtin, args: Sequence[ArgInfo]) -> Overload:
        if len(args) != 1:
            raise NoMatch(f"{b.name} takes one image")
        img = _image(b, args[0], "any")
        k = img.kind
        ok = {
            "any": True,
            "height": k.dims >= 2,
            "depth": k.dims == 3,
            "array": k.arrayed,
            "dim": k.dims >= 2,
        }[which]
        if not ok:
            raise NoMatch(f"{b.name} does not apply to a {k.cl}")
        r = ret
        if which == "dim":
            r = VectorType(C.int_, 4 if k.dims == 3 else 2)
        return Overload((img,), r)

    return rule


def _decl(name: str, doc: str, signature: str, rule: object, **kw: object) -> None:
    declare(name, family="images", doc=doc, signature=signature, rule=rule, **kw)  # type: ignore[arg-type]


for _n, _r in (("f", "float4"), ("i", "int4"), ("ui", "uint4"), ("h", "half4")):
    _extra = " (half needs cl_khr_fp16)" if _n == "h" else ""
    _decl(
        f"read_image{_n}",
        f"Read one pixel as a {_r}{_extra}: ``read_image{_n}(img, sampler, coord)`` (int or "
        "float coordinates, addressing and filtering as the sampler says, spec §3) or "
        f"``read_image{_n}(img, coord)`` (integer coordinates, no sampler; also on "
        "read_write images). Depth images return one float (spec §1.13.14).",
        f"read_image{_n}(img, [sampler,] coord) -> {_r}",
        _read_rule,
    )
    _decl(
        f"write_image{_n}",
        f"Write the {_r} ``color`` at integer ``coord``, converted to the image's channel "
        f"type (spec §3.3){_extra}; the image is clpy.WriteOnly[...] or ReadWrite[...] "
        "(spec §1.13.14).",
        f"write_image{_n}(img, coord, color: {_r}) -> void",
        _write_rule,
    )

for _name, _ret, _which, _doc in (
    ("get_image_width", C.int_, "any", "The image width in pixels."),
    ("get_image_height", C.int_, "height", "The image height in pixels (2-D and 3-D images)."),
    ("get_image_depth", C.int_, "depth", "The depth of a 3-D image in pixels."),
    (
        "get_image_array_size",
        C.size_t,
        "array",
        "The number of images in a 1-D or 2-D image array.",
    ),
    (
        "get_image_dim",
        C.int_,
        "dim",
        "(width, height) as an int2 for 2-D images and arrays; (width, height, depth, 0) as "
        "an int4 for 3-D images.",
    ),
    (
        "get_image_channel_data_type",
        C.int_,
        "any",
        "The channel data type (clpy.CLK_UNORM_INT8 ... clpy.CLK_FLOAT).",
    ),
    (
        "get_image_channel_order",
        C.int_,
        "any",
        "The channel order (clpy.CLK_R ... clpy.CLK_sBGRA).",
    ),
):
    _decl(
        _name,
        f"{_doc} (spec §1.13.14, image query functions)",
        f"{_name}(img) -> {'int2 | int4' if _which == 'dim' else _ret}",
        _query_rule(_ret, _which),
    )
