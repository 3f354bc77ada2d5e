"""Shared by the image tests against a device (tests/test_images_device.py, whose docstring
says what the spec pins and how each result is checked; tests/test_images_device_kinds.py):
the channel types and samplers under test, the formats a device supports, test data and
coordinates, the spec's candidate texels for a sampled read, and the checks of the
simulator's and the device's results against them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, float4, int2

TYPES = [
    "FLOAT",
    "HALF_FLOAT",
    "UNORM_INT8",
    "UNORM_INT16",
    "SNORM_INT8",
    "SNORM_INT16",
    "SIGNED_INT8",
    "SIGNED_INT16",
    "SIGNED_INT32",
    "UNSIGNED_INT8",
    "UNSIGNED_INT16",
    "UNSIGNED_INT32",
]
DTYPES = {
    "FLOAT": np.float32,
    "HALF_FLOAT": np.float16,
    "UNORM_INT8": np.uint8,
    "UNORM_INT16": np.uint16,
    "SNORM_INT8": np.int8,
    "SNORM_INT16": np.int16,
    "SIGNED_INT8": np.int8,
    "SIGNED_INT16": np.int16,
    "SIGNED_INT32": np.int32,
    "UNSIGNED_INT8": np.uint8,
    "UNSIGNED_INT16": np.uint16,
    "UNSIGNED_INT32": np.uint32,
}
ORDERS = {"R": 1, "RG": 2, "RGBA": 4}
SAMPLERS = [
    clpy.sampler(norm, addr, filt)
    for norm in (False, True)
    for addr in ("NONE", "CLAMP_TO_EDGE", "CLAMP", "REPEAT", "MIRRORED_REPEAT")
    for filt in ("NEAREST", "LINEAR")
    if norm or addr not in ("REPEAT", "MIRRORED_REPEAT")
]
# Sub-texel precision the undefined-precision checks grant a device (spec line 8090 sets none):
# 8 fractional bits, the coarsest in common texture hardware (NVIDIA documents its linear
# filter weights as 9-bit fixed point with 8 fractional bits, CUDA C Programming Guide,
# "Texture Fetching"; D3D10+ requires 8 bits of sub-texel precision).
SUBTEXEL = 2.0**-8
LINEAR_WEIGHT_ERROR = 2.0**-4  # the coarsest filter weights accepted from any device
W, H = 7, 5


def pinned(smp: Any) -> bool:
    """The sampler combinations whose texel location the spec pins (line 8088)."""
    return (
        not smp.normalized
        and smp.filter == "NEAREST"
        and smp.address in ("NONE", "CLAMP_TO_EDGE", "CLAMP")
    )


def texel_values(a: np.ndarray, ctype: str, nch: int) -> np.ndarray:
    """The image's texels as read_image{f,i,ui} returns them (§3.3), float64, 4 channels."""
    x = a.astype(np.float64).reshape(a.shape[: a.ndim - (nch > 1)] + (nch,))
    if ctype.startswith("UNORM"):
        x = x / np.iinfo(DTYPES[ctype]).max
    elif ctype.startswith("SNORM"):
        x = np.maximum(-1.0, x / np.iinfo(DTYPES[ctype]).max)
    out = np.zeros(x.shape[:-1] + (4,))
    out[..., 3] = 1.0  # a missing alpha reads as 1 (§1.13.14)
    out[..., :nch] = x
    return out


def axis_candidates(s: np.ndarray, size: int, smp: Any) -> np.ndarray:
    """Texel indices along one axis that a device may use (-1: the border colour).

    The spec's addressing (§3.2) evaluated exactly, widened by ``SUBTEXEL`` either side of
    the unnormalized coordinate: where that crosses a texel border the index is not pinned
    (line 8090), so both neighbours are candidates. LINEAR adds the second footprint texel.
    """
    s = s.astype(np.float64)
    if smp.address == "REPEAT":
        u = (s - np.floor(s)) * size
    elif smp.address == "MIRRORED_REPEAT":
        u = np.abs(s - 2.0 * np.rint(0.5 * s)) * size
    else:
        u = s * size if smp.normalized else s
    t = u - 0.5 if smp.filter == "LINEAR" else u
    lo, hi = np.floor(t - SUBTEXEL), np.floor(t + SUBTEXEL)
    extra = 1 if smp.filter == "LINEAR" else 0
    k = lo[:, None] + np.arange(2 + extra)[None, :]
    k = np.minimum(k, (hi + extra)[:, None]).astype(np.int64)
    if smp.address == "REPEAT":
        return k % size
    if smp.address == "CLAMP":
        return np.where((k < 0) | (k >= size), -1, k)
    return np.clip(k, 0, size - 1)


def candidates(
    tex: np.ndarray, c: np.ndarray, smp: Any, border: np.ndarray, layer: np.ndarray | None
) -> np.ndarray:
    """Candidate texel values per coordinate, shape (n, m, 4).

    ``tex`` is ([layer,] [z,] [y,] x, 4); ``c`` holds the spatial coordinates (x, y, z).
    """
    sizes = tex.shape[1 if layer is not None else 0 : -1][::-1]  # x, y, z
    axes = [axis_candidates(c[:, i], sizes[i], smp) for i in range(len(sizes))]
    grids = np.meshgrid(*[np.arange(ax.shape[1]) for ax in axes], indexing="ij")
    idx = [ax[:, g.ravel()] for ax, g in zip(axes, grids)]  # each (n, m)
    outside = np.zeros(idx[0].shape, bool)
    for i in idx:
        outside |= i < 0
    picks = tuple(np.maximum(i, 0) for i in idx[::-1])
    if layer is not None:  # arrays: the layer is rint + clamp, no filtering across (§3.4)
        picks = (layer[:, None],) + picks
    vals = tex[picks]
    return np.where(outside[..., None], border, vals)


def supported(dev: Any, mem: str, access: str = "read_only") -> set[tuple[str, str]]:
    import pyopencl as cl

    from clpy.builtins.samplers import CHANNEL_ORDERS, CHANNEL_TYPES

    mf = cl.mem_flags
    flags = {"read_only": mf.READ_ONLY, "write_only": mf.WRITE_ONLY}[access]
    got = cl.get_supported_image_formats(dev.context, flags, getattr(cl.mem_object_type, mem))
    o = {v: k for k, v in CHANNEL_ORDERS.items()}
    t = {v: k for k, v in CHANNEL_TYPES.items()}
    return {(o.get(f.channel_order, "?"), t.get(f.channel_data_type, "?")) for f in got}


def need(dev: Any, order: str, ctype: str, mem: str = "IMAGE2D", access: str = "read_only") -> None:
    if (order, ctype) not in supported(dev, mem, access):
        pytest.skip(f"{dev} has no {mem} {order}/{ctype} image for {access} use")
    if ctype == "HALF_FLOAT":
        bad = _half_probe(dev)
        if bad:
            pytest.skip(f"{dev} lists CL_HALF_FLOAT images but reads them wrongly ({bad})")


_PROBES: dict[str, str] = {}


def _half_probe(dev: Any) -> str:
    """Read a known half image with integer coordinates (exact on any conforming device)."""
    if str(dev) not in _PROBES:
        a = np.arange(1, 5, dtype=np.float16).reshape(2, 2)
        c = np.array([[0, 0], [1, 0], [0, 1], [1, 1]], np.int32)
        out = np.zeros((4, 4), np.float32)
        read_int_coords[(4,), (1,)](a, clpy.sampler(), c, out, device=dev)
        ok = np.array_equal(out[:, 0], a.ravel().astype(np.float32))
        _PROBES[str(dev)] = "" if ok else f"1 2 3 4 read back as {out[:, 0].tolist()}"
    return _PROBES[str(dev)]


def data(ctype: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    dt = np.dtype(DTYPES[ctype])
    if dt.kind == "f":
        return (rng.standard_normal(shape) * 4).astype(dt)
    info = np.iinfo(dt)
    a = rng.integers(info.min, info.max, shape, dtype=np.int64, endpoint=True).astype(dt)
    a.flat[:4] = [info.min, info.max, 0, info.min + 1][: a.size]  # the spec's edge values
    return a


def image(a: np.ndarray, ctype: str) -> clpy.Image:
    return clpy.Image(a, normalized="NORM" in ctype)


def coords(norm: bool, n: int, rng: np.random.Generator, inside: bool, linear: bool) -> np.ndarray:
    """Random coordinates and the edge cases: texel centres, texel borders, the image edges."""
    size = np.array([W, H], np.float32)
    if inside:  # ADDRESS_NONE: the coordinates (and a linear footprint) stay in the image
        lo = 0.5 if linear else 0.0
        u = rng.uniform(lo, size - lo - 1e-3, (n, 2)).astype(np.float32)
        edges = np.array([[lo, lo], [W - lo - 0.25, H - lo - 0.25], [1.0, 2.0], [2.5, 1.5]])
    else:
        u = rng.uniform(-1.5 * size, 2.5 * size, (n, 2)).astype(np.float32)
        edges = np.array(
            [
                [0, 0],
                [W, H],
                [-1, -1],
                [W - 0.5, H - 0.5],
                [0.5, 0.5],
                [3.0, 2.0],
                [-0.5, H],
                [2 * W, -H],
                [W + 0.25, 1.75],
            ]
        )
    c = np.concatenate([edges.astype(np.float32), u])
    return (c / size).astype(np.float32) if norm else c


@clpy.kernel
def read_int_coords(img: clpy.Image2D, smp: clpy.Sampler, c: Global[int2], out: Global[float4]):
    i = clpy.get_global_id(0)
    out[i] = clpy.read_imagef(img, smp, c[i])


def run(k: Any, dev: Any, n: int, *args: Any) -> tuple[np.ndarray, np.ndarray]:
    outs = []
    for d in ("sim", dev):
        a = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
        k[(n,), (1,)](*a, device=d)
        outs.append(a[-1])
    return outs[0], outs[1]


def assert_ulp(s: np.ndarray, d: np.ndarray, ulps: float, what: str) -> None:
    gap = np.abs(s.astype(np.float64) - d.astype(np.float64))
    ulp = np.spacing(np.maximum(np.abs(s), np.abs(d)).astype(np.float32)).astype(np.float64)
    bad = gap > ulps * ulp
    assert not bad.any(), f"{what}: sim {s[bad][:4]} device {d[bad][:4]}"


def is_int(ctype: str) -> bool:
    return ctype.startswith(("SIGNED", "UNSIGNED"))


def close(x: np.ndarray, y: np.ndarray, norm: bool) -> np.ndarray:
    """Elementwise equal; normalized formats: within the 1.5 ulp of §3.3.1 (line ~8138)."""
    x, y = x.astype(np.float64), y.astype(np.float64)
    if not norm:
        return x == y
    ulp = np.spacing(np.maximum(np.abs(x), np.abs(y)).astype(np.float32)).astype(np.float64)
    return np.abs(x - y) <= 1.5 * ulp


def check_nearest(s: np.ndarray, d: np.ndarray, cand: np.ndarray, norm: bool, what: str) -> None:
    """NEAREST where the spec leaves the addressing precision open (line 8090): the texel the
    exact coordinate selects, or, within ``SUBTEXEL`` of a texel border, either neighbour."""
    cand = cand[..., : s.shape[1]]
    for name, x in (("sim", s), ("device", d)):
        ok = close(x[:, None, :], cand, norm).all(-1).any(-1)
        assert ok.all(), f"{what}: {name} {x[~ok][:3]} is none of the texels {cand[~ok][:1]}"


def quantum(ctype: str) -> float:
    """One step of a normalized format (a filtered result may be rounded to it), else 0."""
    if "NORM" not in ctype:
        return 0.0
    return 1.0 / float(np.iinfo(DTYPES[ctype]).max)


def check_linear(
    s: np.ndarray, d: np.ndarray, cand: np.ndarray, dims: int, what: str, quantum: float = 0.0
) -> None:
    """LINEAR, whose precision the spec leaves undefined (line 8090). A device must return
    the spec's formula (§3.2) with each weight a, b, c off by at most
    ``LINEAR_WEIGHT_ERROR``: a convex combination of the footprint texels (channel-wise hull)
    within ``dims × LINEAR_WEIGHT_ERROR × (hull width)`` (+ a half ulp) of the simulator's
    exact-weight result (each weight moves the result by at most the hull width times its
    error), plus float rounding. ``cand`` holds the
    footprint texels of both neighbouring footprints where the coordinate is within
    ``SUBTEXEL`` of a footprint change (there the weight is ~0 or ~1 on either side)."""
    cand = cand[..., : s.shape[1]]
    lo, hi = cand.min(1), cand.max(1)
    mag = np.maximum(np.abs(lo), np.abs(hi)).astype(np.float32)
    slack = 8 * np.spacing(np.maximum(mag, np.float32(2.0**-10))).astype(np.float64)
    s64, d64 = s.astype(np.float64), d.astype(np.float64)
    for name, x in (("sim", s64), ("device", d64)):
        ok = (x >= lo - slack) & (x <= hi + slack)
        assert ok.all(), (
            f"{what}: {name} {x[~ok][:4]} outside the footprint [{lo[~ok][:4]}, {hi[~ok][:4]}]"
        )
    # Measured on an H100 (driver 580): weights off by up to ~2^-4.7 of the hull width on
    # UNORM_INT16, and HALF_FLOAT images filtered in half precision (results rounded to
    # half). The spec sets no bound (line 8090): beyond the hull check above, the result must
    # stay within LINEAR_WEIGHT_ERROR of the exact-weight formula, plus a half ulp.
    # The H100 also rounds a filtered UNORM_INT16 result to the format's step (1/65535).
    tol = dims * LINEAR_WEIGHT_ERROR * (hi - lo) + 2.0**-10 * mag + quantum + slack
    bad = np.abs(s64 - d64) > tol
    assert not bad.any(), f"{what}: sim {s[bad][:4]} device {d[bad][:4]} tolerance {tol[bad][:4]}"
