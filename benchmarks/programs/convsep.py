"""NVIDIA OpenCL SDK ConvolutionSeparable: a 17-tap separable image filter (zero outside the
image), a row pass then a column pass. The row kernel's 16×4 work-groups each filter
4 rows × 128 pixels, staging them with 16-pixel halos in local memory; the column kernel's
16×8 groups filter 64 rows × 16 columns the same way. The pair runs ``iters`` times on the same
input, as the sample's timing loop does.

Ported from the NVIDIA GPU Computing SDK sample ``oclConvolutionSeparable``
(``ConvolutionSeparable.cl``: ``convolutionRows``/``convolutionColumns``, KERNEL_RADIUS 8,
ROWS 16×4×8 steps, COLUMNS 16×8×8 steps, halo 1 step; ``__constant`` filter taps).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import clpy
from benchmarks.programs.common import Host, OrigHost, i32
from clpy import Constant, Global, float32, int32

NAME = "convsep"
ORIGIN = "NVIDIA GPU Computing SDK oclConvolutionSeparable/ConvolutionSeparable.cl"
KIND = "separable 17-tap image filter, row and column kernels, local tiles with halos"
CL_FILE = "convsep.cl"
SIZES = {
    "small": dict(w=256, h=128, iters=1),
    "bench": dict(w=1024, h=1024, iters=2),
    "gpu": dict(w=4096, h=4096, iters=16),
}
TOL = dict(rtol=1e-5, atol=1e-5)
KR = 8
R_BX, R_BY, R_STEPS, R_HALO = 16, 4, 8, 1
C_BX, C_BY, C_STEPS, C_HALO = 16, 8, 8, 1
R_W = (R_STEPS + 2 * R_HALO) * R_BX
C_H = (C_STEPS + 2 * C_HALO) * C_BY + 1


@clpy.kernel
def convolution_rows(
    dst: Global[float32],
    src: Global[float32],
    taps: Constant[float32],
    image_w: int32,
    image_h: int32,
    pitch: int32,
):
    data = clpy.local_array(float32, (R_BY, R_W))
    lx = clpy.get_local_id(0)
    ly = clpy.get_local_id(1)
    base_x = (clpy.get_group_id(0) * R_STEPS - R_HALO) * R_BX + lx
    base_y = clpy.get_group_id(1) * R_BY + ly
    base = base_y * pitch + base_x
    for i in range(R_HALO, R_HALO + R_STEPS):
        data[ly][lx + i * R_BX] = src[base + i * R_BX]
    for i in range(R_HALO):
        data[ly][lx + i * R_BX] = src[base + i * R_BX] if base_x + i * R_BX >= 0 else 0.0
    for i in range(R_HALO + R_STEPS, R_HALO + R_STEPS + R_HALO):
        data[ly][lx + i * R_BX] = src[base + i * R_BX] if image_w - base_x > i * R_BX else 0.0
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    for i in range(R_HALO, R_HALO + R_STEPS):
        s = float32(0.0)
        for j in range(-KR, KR + 1):
            s += taps[KR - j] * data[ly][lx + i * R_BX + j]
        dst[base + i * R_BX] = s


@clpy.kernel
def convolution_columns(
    dst: Global[float32],
    src: Global[float32],
    taps: Constant[float32],
    image_w: int32,
    image_h: int32,
    pitch: int32,
):
    data = clpy.local_array(float32, (C_BX, C_H))
    lx = clpy.get_local_id(0)
    ly = clpy.get_local_id(1)
    base_x = clpy.get_group_id(0) * C_BX + lx
    base_y = (clpy.get_group_id(1) * C_STEPS - C_HALO) * C_BY + ly
    base = base_y * pitch + base_x
    for i in range(C_HALO, C_HALO + C_STEPS):
        data[lx][ly + i * C_BY] = src[base + i * C_BY * pitch]
    for i in range(C_HALO):
        data[lx][ly + i * C_BY] = src[base + i * C_BY * pitch] if base_y + i * C_BY >= 0 else 0.0
    for i in range(C_HALO + C_STEPS, C_HALO + C_STEPS + C_HALO):
        data[lx][ly + i * C_BY] = (
            src[base + i * C_BY * pitch] if image_h - base_y > i * C_BY else 0.0
        )
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    for i in range(C_HALO, C_HALO + C_STEPS):
        s = float32(0.0)
        for j in range(-KR, KR + 1):
            s += taps[KR - j] * data[lx][ly + i * C_BY + j]
        dst[base + i * C_BY * pitch] = s


def make_inputs(size: str, seed: int = 0) -> dict[str, Any]:
    p = SIZES[size]
    rng = np.random.default_rng(seed)
    img = rng.random((p["h"], p["w"]), dtype=np.float32)
    taps = rng.random(2 * KR + 1, dtype=np.float32)
    taps /= taps.sum()
    return dict(img=img, taps=taps.astype(np.float32), iters=p["iters"])


def numpy_reference(inp: dict[str, Any]) -> np.ndarray:
    """Both passes in float32, summing the taps in the kernels' order (j = -8 … 8)."""
    taps = inp["taps"]
    img = inp["img"]
    h, w = img.shape
    pr = np.zeros((h, w + 2 * KR), np.float32)
    pr[:, KR:-KR] = img
    rows = np.zeros_like(img)
    for j in range(-KR, KR + 1):
        rows += taps[KR - j] * pr[:, KR + j : KR + j + w]
    pc = np.zeros((h + 2 * KR, w), np.float32)
    pc[KR:-KR] = rows
    out = np.zeros_like(img)
    for j in range(-KR, KR + 1):
        out += taps[KR - j] * pc[KR + j : KR + j + h]
    return out


def _geometry(w: int, h: int) -> tuple[Any, Any]:
    if w % (R_STEPS * R_BX) or h % (C_STEPS * C_BY):
        raise ValueError("convsep: width must be a multiple of 128 and height of 64")
    rows = ((w // R_STEPS, h), (R_BX, R_BY))
    cols = ((w, h // C_STEPS), (C_BX, C_BY))
    return rows, cols


def run_clpy(inp: dict[str, Any], device: Any, *, resident: bool, events: Any = None) -> np.ndarray:
    hst = Host(device, resident, events)
    h, w = inp["img"].shape
    rows, cols = _geometry(w, h)
    src, taps = hst.put(inp["img"]), hst.put(inp["taps"])
    tmp, dst = hst.empty((h, w), np.float32), hst.empty((h, w), np.float32)
    for _ in range(inp["iters"]):
        hst(convolution_rows, *rows, tmp, src, taps, w, h, w)
        hst(convolution_columns, *cols, dst, tmp, taps, w, h, w)
    return hst.get(dst)


def run_original(inp: dict[str, Any], ctx: Any, queue: Any, events: Any = None) -> np.ndarray:
    o = OrigHost(ctx, queue, CL_FILE, "", events)
    h, w = inp["img"].shape
    rows, cols = _geometry(w, h)
    src, taps = o.buf(inp["img"]), o.buf(inp["taps"])
    tmp, dst = o.empty(4 * h * w), o.empty(4 * h * w)
    for _ in range(inp["iters"]):
        o("convolutionRows", *rows, tmp, src, taps, i32(w), i32(h), i32(w))
        o("convolutionColumns", *cols, dst, tmp, taps, i32(w), i32(h), i32(w))
    return o.read(dst, (h, w), np.float32)
