"""Rodinia PathFinder: the cheapest top-to-bottom path through a grid of weights, a row-wise
dynamic program (each cell adds the minimum of its three upper neighbours). Each launch
advances ``pyramid`` rows in local memory with 256-item work-groups whose valid range shrinks
by one cell per row (halo recomputed), ping-ponging two result rows.

Ported from Rodinia 3.1 ``opencl/pathfinder/kernels.cl`` (``dynproc_kernel``) and ``main.cpp``
(host loop over ``t += pyramid_height``). Launch geometry as in Rodinia's CUDA host
(``blockCols`` groups of 256); the OpenCL host's debug output buffer is left out.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import clpy
from benchmarks.programs.common import Host, OrigHost, i32
from clpy import Global, int32

NAME = "pathfinder"
ORIGIN = "Rodinia 3.1 opencl/pathfinder/kernels.cl, main.cpp"
KIND = "row-wise DP, pyramid of rows per launch in local memory"
CL_FILE = "pathfinder.cl"
SIZES = {
    "small": dict(rows=41, cols=1000, pyramid=10),
    "bench": dict(rows=400, cols=20000, pyramid=20),
    "gpu": dict(rows=501, cols=200000, pyramid=20),
}
TOL: dict[str, float] = {}
BLOCK = 256
HALO = 1


@clpy.kernel
def dynproc_kernel(
    iteration: int32,
    wall: Global[int32],
    src: Global[int32],
    results: Global[int32],
    cols: int32,
    start_step: int32,
    border: int32,
):
    prev = clpy.local_array(int32, BLOCK)
    result = clpy.local_array(int32, BLOCK)
    bs = clpy.get_local_size(0)
    bx = clpy.get_group_id(0)
    tx = clpy.get_local_id(0)
    small = bs - iteration * HALO * 2
    blk_x = small * bx - border
    blk_xmax = blk_x + bs - 1
    xidx = blk_x + tx
    valid_xmin = -blk_x if blk_x < 0 else 0
    valid_xmax = bs - 1 - (blk_xmax - cols + 1) if blk_xmax > cols - 1 else bs - 1
    w = max(tx - 1, valid_xmin)
    e = min(tx + 1, valid_xmax)
    is_valid = valid_xmin <= tx <= valid_xmax
    if 0 <= xidx <= cols - 1:
        prev[tx] = src[xidx]
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    computed = False
    for i in range(iteration):
        computed = False
        if i + 1 <= tx <= bs - i - 2 and is_valid:
            computed = True
            shortest = min(min(prev[w], prev[tx]), prev[e])
            result[tx] = shortest + wall[cols * (start_step + i) + xidx]
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
        if i == iteration - 1:
            break
        if computed:
            prev[tx] = result[tx]
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    if computed:
        results[xidx] = result[tx]


def make_inputs(size: str, seed: int = 0) -> dict[str, Any]:
    p = SIZES[size]
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 10, (p["rows"], p["cols"]), dtype=np.int32)
    return dict(data=data, pyramid=p["pyramid"])


def numpy_reference(inp: dict[str, Any]) -> np.ndarray:
    data = inp["data"]
    cur = data[0].copy()
    for t in range(1, data.shape[0]):
        left = np.concatenate((cur[:1], cur[:-1]))
        right = np.concatenate((cur[1:], cur[-1:]))
        cur = np.minimum(np.minimum(left, cur), right) + data[t]
    return cur


def _geometry(cols: int, pyramid: int) -> tuple[int, int]:
    small = BLOCK - pyramid * HALO * 2
    blocks = cols // small + (1 if cols % small else 0)
    return BLOCK * blocks, pyramid * HALO


def run_clpy(inp: dict[str, Any], device: Any, *, resident: bool, events: Any = None) -> np.ndarray:
    h = Host(device, resident, events)
    data = inp["data"]
    rows, cols = data.shape
    pyr = inp["pyramid"]
    gsize, border = _geometry(cols, pyr)
    wall = h.put(data[1:])
    res = [h.put(data[0]), h.empty(cols, np.int32)]
    src, dst = 0, 1
    for t in range(0, rows - 1, pyr):
        h(
            dynproc_kernel,
            (gsize,),
            (BLOCK,),
            min(pyr, rows - t - 1),
            wall,
            res[src],
            res[dst],
            cols,
            t,
            border,
        )
        src, dst = dst, src
    return h.get(res[src])


def run_original(inp: dict[str, Any], ctx: Any, queue: Any, events: Any = None) -> np.ndarray:
    o = OrigHost(ctx, queue, CL_FILE, "", events)
    data = inp["data"]
    rows, cols = data.shape
    pyr = inp["pyramid"]
    gsize, border = _geometry(cols, pyr)
    wall = o.buf(data[1:])
    res = [o.buf(data[0]), o.empty(4 * cols)]
    src, dst = 0, 1
    for t in range(0, rows - 1, pyr):
        o(
            "dynproc_kernel",
            (gsize,),
            (BLOCK,),
            i32(min(pyr, rows - t - 1)),
            wall,
            res[src],
            res[dst],
            i32(cols),
            i32(rows),
            i32(t),
            i32(border),
            i32(HALO),
            o.local(4 * BLOCK),
            o.local(4 * BLOCK),
        )
        src, dst = dst, src
    return o.read(res[src], (cols,), np.int32)
