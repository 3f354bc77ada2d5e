"""Rodinia HotSpot: transient thermal simulation of a chip, a 2-D 5-point stencil computed in
16×16 work-group tiles that advance ``pyramid`` time steps per launch in local memory
(a shrinking "pyramid" of valid cells, halo recomputed), ping-ponging two temperature grids.

Ported from Rodinia 3.1 ``opencl/hotspot/hotspot_kernel.cl`` and ``hotspot.c``
(``compute_tran_temp``): same tiling, work-group 16×16, same launch sequence.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import clpy
from benchmarks.programs.common import Host, OrigHost, f32, i32
from clpy import Global, float32, int32

NAME = "hotspot"
ORIGIN = "Rodinia 3.1 opencl/hotspot/hotspot_kernel.cl, hotspot.c"
KIND = "2-D stencil, 16x16 local tiles, pyramid of steps per launch"
CL_FILE = "hotspot.cl"
SIZES = {
    "small": dict(n=64, steps=6, pyramid=2),
    "bench": dict(n=512, steps=20, pyramid=2),
    "gpu": dict(n=2048, steps=60, pyramid=2),
}
TOL = dict(rtol=1e-6, atol=2e-3)

BLOCK = 16
# Rodinia's chip constants (hotspot.h)
MAX_PD = 3.0e6
PRECISION = 0.001
SPEC_HEAT_SI = 1.75e6
K_SI = 100.0
FACTOR_CHIP = 0.5
T_CHIP = 0.0005
CHIP_HEIGHT = 0.016
CHIP_WIDTH = 0.016
AMB_TEMP = 80.0


@clpy.kernel
def hotspot(
    iteration: int32,
    power: Global[float32],
    temp_src: Global[float32],
    temp_dst: Global[float32],
    grid_cols: int32,
    grid_rows: int32,
    border_cols: int32,
    border_rows: int32,
    cap: float32,
    rx: float32,
    ry: float32,
    rz: float32,
    step: float32,
):
    temp_on = clpy.local_array(float32, (BLOCK, BLOCK))
    power_on = clpy.local_array(float32, (BLOCK, BLOCK))
    temp_t = clpy.local_array(float32, (BLOCK, BLOCK))
    amb_temp = float32(80.0)
    bx = clpy.get_group_id(0)
    by = clpy.get_group_id(1)
    tx = clpy.get_local_id(0)
    ty = clpy.get_local_id(1)
    step_div_cap = step / cap
    rx_1 = 1.0 / rx
    ry_1 = 1.0 / ry
    rz_1 = 1.0 / rz
    # each group computes a small block after `iteration` steps; small blocks tile the grid
    small = BLOCK - iteration * 2
    blk_y = small * by - border_rows
    blk_x = small * bx - border_cols
    blk_ymax = blk_y + BLOCK - 1
    blk_xmax = blk_x + BLOCK - 1
    yidx = blk_y + ty
    xidx = blk_x + tx
    index = grid_cols * yidx + xidx
    if 0 <= yidx <= grid_rows - 1 and 0 <= xidx <= grid_cols - 1:
        temp_on[ty][tx] = temp_src[index]
        power_on[ty][tx] = power[index]
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    # the part of the tile inside the grid; neighbours are clamped to it
    valid_ymin = -blk_y if blk_y < 0 else 0
    valid_ymax = BLOCK - 1 - (blk_ymax - grid_rows + 1) if blk_ymax > grid_rows - 1 else BLOCK - 1
    valid_xmin = -blk_x if blk_x < 0 else 0
    valid_xmax = BLOCK - 1 - (blk_xmax - grid_cols + 1) if blk_xmax > grid_cols - 1 else BLOCK - 1
    n = max(ty - 1, valid_ymin)
    s = min(ty + 1, valid_ymax)
    w = max(tx - 1, valid_xmin)
    e = min(tx + 1, valid_xmax)
    computed = False
    for i in range(iteration):
        computed = False
        if (
            i + 1 <= tx <= BLOCK - i - 2
            and i + 1 <= ty <= BLOCK - i - 2
            and valid_xmin <= tx <= valid_xmax
            and valid_ymin <= ty <= valid_ymax
        ):
            computed = True
            t = temp_on[ty][tx]
            temp_t[ty][tx] = t + step_div_cap * (
                power_on[ty][tx]
                + (temp_on[s][tx] + temp_on[n][tx] - 2.0 * t) * ry_1
                + (temp_on[ty][e] + temp_on[ty][w] - 2.0 * t) * rx_1
                + (amb_temp - t) * rz_1
            )
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
        if i == iteration - 1:
            break
        if computed:
            temp_on[ty][tx] = temp_t[ty][tx]
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    if computed:
        temp_dst[index] = temp_t[ty][tx]


def _coefficients(n: int) -> tuple[float, float, float, float, float]:
    # Rodinia's 16 mm chip for grids up to 512 cells; larger grids keep its cell size (a
    # bigger chip): finer cells make the explicit step unstable (step/Cap grows as n^2)
    grid_height = CHIP_HEIGHT / min(n, 512)
    grid_width = CHIP_WIDTH / min(n, 512)
    cap = FACTOR_CHIP * SPEC_HEAT_SI * T_CHIP * grid_width * grid_height
    rx = grid_width / (2.0 * K_SI * T_CHIP * grid_height)
    ry = grid_height / (2.0 * K_SI * T_CHIP * grid_width)
    rz = T_CHIP / (K_SI * grid_height * grid_width)
    max_slope = MAX_PD / (FACTOR_CHIP * T_CHIP * SPEC_HEAT_SI)
    step = PRECISION / max_slope
    return cap, rx, ry, rz, step


def make_inputs(size: str, seed: int = 0) -> dict[str, Any]:
    p = SIZES[size]
    rng = np.random.default_rng(seed)
    n = p["n"]
    temp = (323.0 + 20.0 * rng.random((n, n))).astype(np.float32)
    power = (rng.random((n, n)) * 2e-3).astype(np.float32)
    return dict(temp=temp, power=power, steps=p["steps"], pyramid=p["pyramid"])


def numpy_reference(inp: dict[str, Any]) -> np.ndarray:
    n = inp["temp"].shape[0]
    cap, rx, ry, rz, step = (np.float32(v) for v in _coefficients(n))
    sdc = step / cap
    rx_1, ry_1, rz_1 = np.float32(1) / rx, np.float32(1) / ry, np.float32(1) / rz
    t = inp["temp"].copy()
    p = inp["power"]
    amb, two = np.float32(AMB_TEMP), np.float32(2.0)
    for _ in range(inp["steps"]):
        q = np.pad(t, 1, mode="edge")
        north, south = q[:-2, 1:-1], q[2:, 1:-1]
        west, east = q[1:-1, :-2], q[1:-1, 2:]
        t = t + sdc * (
            p + (south + north - two * t) * ry_1 + (east + west - two * t) * rx_1 + (amb - t) * rz_1
        )
    return t


def _geometry(n: int, pyramid: int) -> tuple[tuple[int, int], int]:
    border = pyramid  # EXPAND_RATE 2 / 2
    small = BLOCK - 2 * pyramid
    blocks = n // small + (1 if n % small else 0)
    return (BLOCK * blocks, BLOCK * blocks), border


def run_clpy(inp: dict[str, Any], device: Any, *, resident: bool, events: Any = None) -> np.ndarray:
    h = Host(device, resident, events)
    n = inp["temp"].shape[0]
    cap, rx, ry, rz, step = _coefficients(n)
    gsize, border = _geometry(n, inp["pyramid"])
    power = h.put(inp["power"])
    bufs = [h.put(inp["temp"]), h.put(inp["temp"])]
    src, dst = 0, 1
    t = 0
    total = inp["steps"]
    while t < total:
        it = min(inp["pyramid"], total - t)
        h(
            hotspot,
            gsize,
            (BLOCK, BLOCK),
            it,
            power,
            bufs[src],
            bufs[dst],
            n,
            n,
            border,
            border,
            cap,
            rx,
            ry,
            rz,
            step,
        )
        src, dst = dst, src
        t += inp["pyramid"]
    return h.get(bufs[src])


def run_original(inp: dict[str, Any], ctx: Any, queue: Any, events: Any = None) -> np.ndarray:
    o = OrigHost(ctx, queue, CL_FILE, f"-DBLOCK_SIZE={BLOCK}", events)
    n = inp["temp"].shape[0]
    cap, rx, ry, rz, step = _coefficients(n)
    gsize, border = _geometry(n, inp["pyramid"])
    power = o.buf(inp["power"])
    bufs = [o.buf(inp["temp"]), o.buf(inp["temp"])]
    src, dst = 0, 1
    t = 0
    total = inp["steps"]
    while t < total:
        it = min(inp["pyramid"], total - t)
        o(
            "hotspot",
            gsize,
            (BLOCK, BLOCK),
            i32(it),
            power,
            bufs[src],
            bufs[dst],
            i32(n),
            i32(n),
            i32(border),
            i32(border),
            f32(cap),
            f32(rx),
            f32(ry),
            f32(rz),
            f32(step),
        )
        src, dst = dst, src
        t += inp["pyramid"]
    return o.read(bufs[src], (n, n), np.float32)
