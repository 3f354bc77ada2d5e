"""Images and samplers in the simulator, bit-exact with the spec (OpenCL C 2.0 §3 "Image
addressing and filtering", §1.13.14 image functions).

An image is a ``SimImage`` over the launch's working copy of the host array, viewed as a
``(depth or layers, height or layers, width, channels)`` grid: coordinate ``x`` indexes the
width, ``y`` the height (the layer of a 1-D array), ``z`` the depth (the layer of a 2-D
array). Every read and write is vectorized over the frame's lanes.

Reads: float coordinates are float32 and follow §3.2 operation by operation (``u = s * w_t``,
``floor(u - 0.5f)``, ``frac``; repeat and mirrored-repeat formulas; array layers
``clamp(rint(w), 0, d_t - 1)``); texels are converted to float by §3.3 (``c / 255.0f``,
``max(-1.0f, c / 127.0f)``, half and packed 565/555/101010 formats, sRGB to linear before
filtering) and linear filtering weighs them with the spec's formula in float32. Out-of-range
texels take the border colour of the channel order. ``ADDRESS_NONE`` reads outside the image,
writes outside it, and reads the spec leaves undefined (``read_imagei`` on a float image,
integer coordinates with a normalized or linear sampler) are checker reports (``bounds``);
linear footprints that cross the edge under ``ADDRESS_NONE`` are clamped to it. Writes convert
by §3.3 (``convert_uchar_sat_rte(f * 255.0f)`` ..., integer saturation, float → half to
nearest even, linear → sRGB). Images the kernel writes take part in race checks like buffers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.abi.images import SimImageArg
from clpy.builtins.samplers import SamplerSpec
from clpy.types.core import ScalarType, VectorType
from clpy.types.images import ImageType
from clpy_sim.memory import Where
from clpy_sim.races_global import GlobalShadow
from clpy_sim.texels import (
    F32,
    INT_LIMITS,
    ORDER_WRITE,
    PIXEL_TYPES,
    float_to_raw,
    texels,
)

if TYPE_CHECKING:
    from clpy_sim.call import Call
    from clpy_sim.frame import Frame
    from clpy_sim.state import Launch

_HALF = F32(0.5)
_ONE = F32(1.0)


class SimImage:
    """One image argument of a launch (see the module docstring)."""

    def __init__(self, launch: Launch, name: str, arg: SimImageArg) -> None:
        lay = arg.layout
        self.name = name
        self.launch = launch
        self.data = arg.data
        self.flat = arg.data.reshape(-1, arg.data.shape[-1])
        self.width, self.height, self.depth = lay.width, lay.height, lay.depth
        self.layers = lay.layers
        self.order = lay.format.order
        self.ctype = lay.format.ctype
        self.format = lay.format
        self.count = self.flat.shape[0]
        self.sizes = (lay.width, lay.height, lay.depth)
        # one element per pixel where a NumPy type has the pixel's size: gathering pixels
        # is then a 1-D take (much faster than fancy indexing rows of a 2-D array)
        size = self.flat.shape[1] * self.flat.dtype.itemsize
        pix_t = PIXEL_TYPES.get(size)
        self.rows: np.ndarray | None = (
            self.flat.view(pix_t).reshape(-1) if pix_t is not None else None
        )
        self.shadow: Any = None
        if arg.written and "races" in launch.checks:
            self.shadow = GlobalShadow(launch, self.count, self)

    def describe(self) -> str:
        return f"image `{self.name}`"

    @property
    def is_int(self) -> bool:
        return self.ctype.startswith(("SIGNED", "UNSIGNED"))


def make_image(launch: Launch, name: str, arg: SimImageArg) -> SimImage:
    return SimImage(launch, name, arg)


# ----------------------------------------------------------------------------- coordinates


def _lanes(v: Any, t: Any, shape: tuple[int, int], n: int) -> list[np.ndarray]:
    """The first ``n`` components of a coordinate of type ``t``, each as a flat array of the
    frame's lanes."""
    a = np.asarray(v)
    if isinstance(t, VectorType):
        return [np.broadcast_to(a[i], shape).ravel() for i in range(n)]
    return [np.broadcast_to(a, shape).ravel()]


def _floor_int(u: np.ndarray) -> np.ndarray:
    """``(int)floor(u)``, saturated to the int range (NaN → 0: undefined in the spec)."""
    f = np.floor(u)
    f = np.where(np.isnan(f), 0, np.clip(f, -(2.0**31), 2.0**31 - 1))
    return f.astype(np.int64)


def _address(i: np.ndarray, size: int, mode: str) -> np.ndarray:
    if mode == "CLAMP_TO_EDGE":
        return np.clip(i, 0, size - 1)
    if mode == "CLAMP":
        return np.clip(i, -1, size)
    return i


def _nearest(s: np.ndarray, size: int, spec: SamplerSpec, is_int: bool) -> np.ndarray:
    """Texel index along one axis for a nearest read (§3.2); may be outside ``[0, size)``."""
    mode = spec.address
    if is_int:
        return _address(s.astype(np.int64), size, mode)
    n = F32(size)
    if mode == "REPEAT":
        u = (s - np.floor(s)) * n
        i = _floor_int(u)
        return np.where(i > size - 1, i - size, i)
    if mode == "MIRRORED_REPEAT":
        sp = np.abs(s - F32(2.0) * np.rint(_HALF * s))
        return np.minimum(_floor_int(sp * n), size - 1)
    u = s * n if spec.normalized else s
    return _address(_floor_int(u), size, mode)


def _linear(
    s: np.ndarray, size: int, spec: SamplerSpec
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(i0, i1, a) along one axis for a linear read (§3.2)."""
    mode = spec.address
    n = F32(size)
    if mode == "REPEAT":
        u = (s - np.floor(s)) * n
        t = u - _HALF
        i0 = _floor_int(t)
        i1 = i0 + 1
        i0 = np.where(i0 < 0, size + i0, i0)
        i1 = np.where(i1 > size - 1, i1 - size, i1)
    elif mode == "MIRRORED_REPEAT":
        sp = np.abs(s - F32(2.0) * np.rint(_HALF * s))
        u = sp * n
        t = u - _HALF
        i0 = _floor_int(t)
        i1 = np.minimum(i0 + 1, size - 1)
        i0 = np.maximum(i0, 0)
    else:
        u = s * n if spec.normalized else s
        t = u - _HALF
        f = _floor_int(t)
        i0, i1 = _address(f, size, mode), _address(f + 1, size, mode)
        if mode == "NONE":  # the footprint of an inside coordinate is clamped to the edge
            i0, i1 = np.clip(i0, 0, size - 1), np.clip(i1, 0, size - 1)
    a = (t - np.floor(t)).astype(F32)
    return i0, i1, a


def _layer(c: np.ndarray, count: int, is_int: bool, sampled: bool) -> np.ndarray:
    """The array layer: ``clamp(rint(c), 0, count - 1)`` with a sampler (§3.4), else ``c``."""
    if is_int:
        li = c.astype(np.int64)
    else:
        li = _floor_int(np.rint(c))
    return np.clip(li, 0, count - 1) if sampled else li


# ----------------------------------------------------------------------------- built-ins


def _fail(fr: Frame, bad: np.ndarray, message: str, call: Call, img: SimImage, idx: Any) -> None:
    if "bounds" in fr.batch.launch.checks:
        fr.batch.launch.fail_lanes(
            fr,
            bad.reshape(fr.shape),
            "out-of-bounds",
            message,
            call.loc,
            img.name,
            np.asarray(idx).reshape(fr.shape),
        )


def _sampler_of(call: Call, fr: Frame, v: Any) -> SamplerSpec:
    a = np.asarray(v)
    first = int(a.flat[0])
    if a.ndim and (a != first).any():
        fr.batch.launch.fail(
            "unsupported",
            "the simulator needs one sampler for all work-items of a call",
            call.loc,
        )
    key = f"sampler{first}"
    spec: SamplerSpec = call.state.get(key) or SamplerSpec.from_bits(first)
    call.state[key] = spec
    return spec


def _read(call: Call, fr: Frame, args: list[Any]) -> Any:
    img: SimImage = args[0]
    t = call.params[0]
    assert isinstance(t, ImageType)
    kind = t.kind
    sampled = len(args) == 3
    spec = _sampler_of(call, fr, args[1]) if sampled else SamplerSpec(False, "NONE", "NEAREST")
    ctype = call.params[-1]
    is_int = not (isinstance(ctype, (ScalarType, VectorType)) and _elem(ctype).is_float)
    shape = fr.shape
    comps = _lanes(args[-1], call.params[-1], shape, kind.axes)
    name = call.name
    want = (
        "f" if name in ("read_imagef", "read_imageh") else ("i" if name == "read_imagei" else "u")
    )
    if (want == "f") == img.is_int:
        _fail(
            fr,
            np.ones(shape, bool),
            f"{name} on {img.describe()} of channel type {img.ctype} is undefined "
            f"(spec §1.13.14: use {'read_imagef' if want != 'f' else 'read_imagei/ui'})",
            call,
            img,
            0,
        )
    if is_int and (
        spec.normalized or spec.filter == "LINEAR" or spec.address in ("REPEAT", "MIRRORED_REPEAT")
    ):
        _fail(
            fr,
            np.ones(shape, bool),
            f"{name} with integer coordinates needs an unnormalized, nearest sampler with "
            "NONE, CLAMP or CLAMP_TO_EDGE addressing (spec §1.13.14); got "
            f"{spec!r}",
            call,
            img,
            0,
        )
    if want != "f" and spec.filter == "LINEAR":
        _fail(
            fr,
            np.ones(shape, bool),
            f"{name} supports nearest filtering only (spec §1.13.14)",
            call,
            img,
            0,
        )
    W, H, D = img.sizes
    sizes = (W, H, D)
    naxes = kind.dims  # filtered axes; an array's layer comes after them
    layer = None
    if kind.arrayed:
        count = img.layers
        layer = _layer(comps[naxes], count, is_int, sampled)
        if not sampled:
            out = (layer < 0) | (layer >= count)
            if out.any():
                _fail(
                    fr,
                    out,
                    f"read of {img.describe()} outside its {count} layers",
                    call,
                    img,
                    layer,
                )
            layer = np.clip(layer, 0, count - 1)
    N = comps[0].shape[0]
    if spec.filter == "NEAREST" or want != "f":
        idx = [_nearest(comps[a], sizes[a], spec, is_int) for a in range(naxes)]
        inside = np.ones(N, bool)
        for a in range(naxes):
            inside &= (idx[a] >= 0) & (idx[a] < sizes[a])
        if spec.address == "NONE" and not inside.all():
            _fail(
                fr,
                ~inside,
                f"read of {img.describe()} outside the image ({_dims(img)}) with "
                "ADDRESS_NONE: the result is undefined (spec §3.2)",
                call,
                img,
                _pixel(idx, layer, sizes, naxes),
            )
        pix = _pixel(idx, layer, sizes, naxes)
        _track_read(fr, img, pix, inside, call)
        res = texels(img, pix, inside, want)
    else:
        parts = [_linear(comps[a], sizes[a], spec) for a in range(naxes)]
        res = None
        for corner in range(1 << naxes):
            idx = []
            wgt = _ONE
            for a in range(naxes):
                i0, i1, frac = parts[a]
                hi = (corner >> a) & 1
                idx.append(i1 if hi else i0)
                wgt = wgt * (frac if hi else _ONE - frac)
            inside = np.ones(N, bool)
            for a in range(naxes):
                inside &= (idx[a] >= 0) & (idx[a] < sizes[a])
            pix = _pixel(idx, layer, sizes, naxes)
            term = wgt * texels(img, pix, inside, "f")
            res = term if res is None else res + term
    assert res is not None
    if kind.depth:
        return res[0].reshape(shape)
    out4 = res.reshape(4, *shape)
    if name == "read_imageh":
        return out4.astype(np.float16)
    return out4


def _elem(t: Any) -> ScalarType:
    return t.elem if isinstance(t, VectorType) else t


def _dims(img: SimImage) -> str:
    W, H, D = img.sizes
    return f"{W}" if H == D == 1 else (f"{W}x{H}" if D == 1 else f"{W}x{H}x{D}")


def _pixel(
    idx: list[np.ndarray], layer: Any, sizes: tuple[int, int, int], naxes: int
) -> np.ndarray:
    W, H, _ = sizes
    i = np.clip(idx[0], 0, W - 1)
    p = i.copy()
    if naxes >= 2:
        p += np.clip(idx[1], 0, H - 1) * W
    if naxes == 3:
        p += np.clip(idx[2], 0, sizes[2] - 1) * (W * H)
    if layer is not None:
        p += layer * (W if naxes == 1 else W * H)
    return p


def _track_read(fr: Frame, img: SimImage, pix: np.ndarray, inside: np.ndarray, call: Call) -> None:
    if img.shadow is not None and fr.batch.watch:
        img.shadow.read(fr, Where("flat", fr.shape, idx=pix.reshape(fr.shape)), call.loc)


def _write(call: Call, fr: Frame, args: list[Any]) -> None:
    img: SimImage = args[0]
    t = call.params[0]
    assert isinstance(t, ImageType)
    kind = t.kind
    shape = fr.shape
    comps = _lanes(args[1], call.params[1], shape, kind.axes)
    W, H, D = img.sizes
    sizes = (W, H, D)
    naxes = kind.dims
    idx = [c.astype(np.int64) for c in comps[:naxes]]
    inside = np.ones(comps[0].shape[0], bool)
    for a in range(naxes):
        inside &= (idx[a] >= 0) & (idx[a] < sizes[a])
    layer = None
    if kind.arrayed:
        layer = comps[naxes].astype(np.int64)
        inside &= (layer >= 0) & (layer < img.layers)
        layer = np.clip(layer, 0, img.layers - 1)
    pix = _pixel(idx, layer, sizes, naxes)
    if not inside.all():
        _fail(
            fr,
            ~inside,
            f"write to {img.describe()} outside the image ({_dims(img)}"
            + (f", {img.layers} layers" if kind.arrayed else "")
            + ")",
            call,
            img,
            pix,
        )
    name = call.name
    if (name in ("write_imagef", "write_imageh")) == img.is_int:
        _fail(
            fr,
            np.ones(shape, bool),
            f"{name} on {img.describe()} of channel type {img.ctype} is undefined (spec §1.13.14)",
            call,
            img,
            0,
        )
    color = np.asarray(args[2])
    if kind.depth:
        col = np.broadcast_to(color, shape).reshape(1, -1)
    else:
        col = np.stack([np.broadcast_to(color[k], shape).ravel() for k in range(4)])
    table = ORDER_WRITE[img.order]
    ch = np.stack([col[k] if k >= 0 else np.zeros_like(col[0]) for k in table])
    if name in ("write_imagef", "write_imageh"):
        raw = float_to_raw(img, ch.astype(F32))
    else:
        lo, hi = INT_LIMITS.get(img.ctype, (-(2**63), 2**63 - 1))
        raw = np.clip(ch.astype(np.int64), lo, hi).astype(img.flat.dtype)
    if img.shadow is not None and fr.batch.watch:
        img.shadow.write(fr, Where("flat", shape, idx=pix.reshape(shape)), call.loc)
    keep = inside
    img.flat[pix[keep]] = raw.T[keep]
    fr.batch.stores += 1


def _query(which: str) -> Any:
    def impl(call: Call, fr: Frame, args: list[Any]) -> Any:
        img: SimImage = args[0]
        W, H, D = img.sizes
        if which == "width":
            return np.int32(W)
        if which == "height":
            return np.int32(H)
        if which == "depth":
            return np.int32(D)
        if which == "array":
            return np.uint64(img.layers)
        if which == "order":
            return np.int32(img.format.order_code)
        if which == "type":
            return np.int32(img.format.type_code)
        t = call.ret
        assert isinstance(t, VectorType)
        vals = [W, H] if t.n == 2 else [W, H, D, 0]
        return np.asarray(vals, np.int32).reshape(t.n, 1, 1)

    return impl


IMPLS: dict[str, Any] = {
    **{f"read_image{s}": _read for s in ("f", "i", "ui", "h")},
    **{f"write_image{s}": _write for s in ("f", "i", "ui", "h")},
    "get_image_width": _query("width"),
    "get_image_height": _query("height"),
    "get_image_depth": _query("depth"),
    "get_image_array_size": _query("array"),
    "get_image_dim": _query("dim"),
    "get_image_channel_order": _query("order"),
    "get_image_channel_data_type": _query("type"),
}
