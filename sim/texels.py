"""Image formats in the simulator: channel orders, channel data types and the spec's
conversions between stored texels and colours (OpenCL C 2.0 §3.3: ``c / 255.0f``,
``max(-1.0f, c / 127.0f)``, half and packed 565/555/101010 formats, sRGB), used by the image
built-ins in sim/images.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from clpy_sim.images import SimImage

F32 = np.float32
ZERO, ONE_CH = -1, -2  # order table entries: constant 0, constant 1

# Stored channel feeding each of (r, g, b, a) per channel order.
ORDER_READ: dict[str, tuple[int, ...]] = {
    "R": (0, ZERO, ZERO, ONE_CH),
    "Rx": (0, ZERO, ZERO, ONE_CH),
    "A": (ZERO, ZERO, ZERO, 0),
    "RG": (0, 1, ZERO, ONE_CH),
    "RGx": (0, 1, ZERO, ONE_CH),
    "RA": (0, ZERO, ZERO, 1),
    "RGB": (0, 1, 2, ONE_CH),
    "RGBx": (0, 1, 2, ONE_CH),
    "sRGB": (0, 1, 2, ONE_CH),
    "sRGBx": (0, 1, 2, ONE_CH),
    "RGBA": (0, 1, 2, 3),
    "sRGBA": (0, 1, 2, 3),
    "BGRA": (2, 1, 0, 3),
    "sBGRA": (2, 1, 0, 3),
    "ARGB": (1, 2, 3, 0),
    "ABGR": (3, 2, 1, 0),
    "INTENSITY": (0, 0, 0, 0),
    "LUMINANCE": (0, 0, 0, ONE_CH),
    "DEPTH": (0,),
}
# Colour component stored in each channel (-1: padding, written as 0).
ORDER_WRITE: dict[str, tuple[int, ...]] = {
    "R": (0,),
    "Rx": (0, -1),
    "A": (3,),
    "RG": (0, 1),
    "RGx": (0, 1, -1),
    "RA": (0, 3),
    "RGB": (0, 1, 2),
    "RGBx": (0, 1, 2, -1),
    "sRGB": (0, 1, 2),
    "sRGBx": (0, 1, 2, -1),
    "RGBA": (0, 1, 2, 3),
    "sRGBA": (0, 1, 2, 3),
    "BGRA": (2, 1, 0, 3),
    "sBGRA": (2, 1, 0, 3),
    "ARGB": (3, 0, 1, 2),
    "ABGR": (3, 2, 1, 0),
    "INTENSITY": (0,),
    "LUMINANCE": (0,),
    "DEPTH": (0,),
}
BORDER_ALPHA_ONE = frozenset({"R", "RG", "RGB", "LUMINANCE"})
NORM = {"UNORM_INT8": 255.0, "UNORM_INT16": 65535.0, "SNORM_INT8": 127.0, "SNORM_INT16": 32767.0}
PACKED_FIELDS = {  # (shift, bits) of r, g, b
    "UNORM_SHORT_565": ((11, 5), (5, 6), (0, 5)),
    "UNORM_SHORT_555": ((10, 5), (5, 5), (0, 5)),
    "UNORM_INT_101010": ((20, 10), (10, 10), (0, 10)),
}
INT_LIMITS = {
    "SIGNED_INT8": (-128, 127),
    "SIGNED_INT16": (-32768, 32767),
    "SIGNED_INT32": (-(2**31), 2**31 - 1),
    "UNSIGNED_INT8": (0, 255),
    "UNSIGNED_INT16": (0, 65535),
    "UNSIGNED_INT32": (0, 2**32 - 1),
}


PIXEL_TYPES = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.complex128}


# ----------------------------------------------------------------------------- conversions


def srgb_to_linear(c: np.ndarray) -> np.ndarray:
    d = c.astype(np.float64)
    return np.where(d <= 0.04045, d / 12.92, ((d + 0.055) / 1.055) ** 2.4).astype(F32)


def linear_to_srgb(c: np.ndarray) -> np.ndarray:
    d = np.nan_to_num(c.astype(np.float64), nan=0.0)
    d = np.clip(d, 0.0, 1.0)
    d = np.where(d < 0.0031308, 12.92 * d, 1.055 * d ** (1.0 / 2.4) - 0.055)
    return np.floor(d * 255 + 0.5).astype(np.uint8)


def channels_float(img: SimImage, raw: np.ndarray) -> np.ndarray:
    """Stored channels ``(N, C)`` → float32 channel values ``(N, C')`` (§3.3)."""
    ct = img.ctype
    if ct == "FLOAT":
        return raw
    if ct == "HALF_FLOAT":
        return raw.astype(F32)
    if ct in NORM:
        scale = F32(NORM[ct])
        f = raw.astype(F32) / scale
        return np.maximum(f, F32(-1.0)) if ct.startswith("SNORM") else f
    if ct in PACKED_FIELDS:
        r = raw[:, 0].astype(np.uint32)
        cols = [
            ((r >> sh) & ((1 << b) - 1)).astype(F32) / F32((1 << b) - 1)
            for sh, b in PACKED_FIELDS[ct]
        ]
        return np.stack(cols, axis=1)
    if ct == "UNORM_INT24":
        return ((raw.astype(np.uint32) & 0xFFFFFF).astype(F32) / F32(16777215.0)).astype(F32)
    return raw.astype(F32)  # integer formats read as float: undefined (reported)


def texels(img: SimImage, pix: np.ndarray, inside: np.ndarray, want: str) -> np.ndarray:
    """Colours ``(4, N)`` (or ``(1, N)`` for depth) of the texels at flat pixel indices
    ``pix``, with the border colour where not ``inside``. ``want``: f, i or u."""
    idx = pix if inside.all() else np.where(inside, pix, 0)
    if img.rows is not None:
        raw = np.take(img.rows, idx).view(img.flat.dtype).reshape(idx.shape[0], -1)
    else:
        raw = img.flat[idx]
    order = img.order
    if want == "f":
        ch = channels_float(img, raw)
        if order.startswith("s"):  # sRGB: to linear before filtering; alpha stays linear
            ch = ch.copy()
            ch[:, :3] = srgb_to_linear(ch[:, :3])
        dt: Any = F32
    else:
        dt = np.int32 if want == "i" else np.uint32
        ch = raw.astype(np.int64).astype(dt)
    N = pix.shape[0]
    table = ORDER_READ[order]
    if table == (0, 1, 2, 3) and ch.dtype == dt:  # RGBA: the channels as they are
        out = ch.T if inside.all() else ch.T.copy()
    else:
        out = np.empty((len(table), N), dt)
        for k, src in enumerate(table):
            if src == ZERO:
                out[k] = 0
            elif src == ONE_CH:
                out[k] = 1
            else:
                out[k] = ch[:, src]
    if not inside.all():
        border = [0] * len(table)
        if order in BORDER_ALPHA_ONE:
            border[3] = 1
        out[:, ~inside] = np.asarray(border, dt)[:, None]
    return out


def float_to_raw(img: SimImage, color: np.ndarray) -> np.ndarray:
    """Channel values ``(C, N)`` float32 → stored raw values (§3.3 write rules)."""
    ct = img.ctype
    dt = img.flat.dtype
    if ct == "FLOAT":
        return color.astype(F32)
    if ct == "HALF_FLOAT":
        return color.astype(np.float16)
    if img.order.startswith("s") and ct == "UNORM_INT8":
        out = linear_to_srgb(color)
        if out.shape[0] == 4:  # sRGBA, sBGRA: alpha (stored last) stays linear
            out[3] = unorm(color[3], 255.0, 0, 255)
        return out
    if ct in NORM:
        scale = NORM[ct]
        lo, hi = (-128, 127) if ct == "SNORM_INT8" else (-32768, 32767)
        if ct.startswith("UNORM"):
            lo, hi = 0, int(scale)
        return unorm(color, scale, lo, hi).astype(dt)
    if ct in PACKED_FIELDS:
        word = np.zeros(color.shape[1], np.uint32)
        for k, (sh, b) in enumerate(PACKED_FIELDS[ct]):
            m = (1 << b) - 1
            word |= unorm(color[k], float(m), 0, m).astype(np.uint32) << np.uint32(sh)
        return word.astype(dt)[None, :]
    if ct == "UNORM_INT24":
        return unorm(color, 16777215.0, 0, 16777215).astype(dt)
    return color.astype(dt)  # float written to an integer image: undefined (reported)


def unorm(f: np.ndarray, scale: float, lo: int, hi: int) -> np.ndarray:
    """``convert_<T>_sat_rte(f * scale)``: float32 product, to nearest even, saturated,
    NaN → 0."""
    x = np.asarray(f, F32) * F32(scale)
    x = np.where(np.isnan(x), F32(0), x)
    return np.clip(np.rint(x.astype(np.float64)), lo, hi).astype(np.int64)
