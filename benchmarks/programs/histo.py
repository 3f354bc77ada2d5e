"""Parboil image histogram, "R-per-block": every work-group keeps R replicated sub-histograms
in local memory (work-item t votes into copy t mod R, padded to BINS+1 against bank
conflicts) with local atomic increments, reading the image interleaved per warp; then it
merges its copies and adds them to the global histogram with global atomics. The host clears
the histogram and launches again, ``repeat`` times.

Ported from Parboil 2.5 ``benchmarks/imghisto/src/opencl/kernel.cl``
(``histo_R_per_block_kernel``, by J. Gómez-Luna) and ``main.cc`` (work-groups of the device's
maximum size, 10 groups per compute unit, R from the local memory size: fixed per size here).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import clpy
from benchmarks.programs.common import Host, OrigHost, i32
from clpy import Global, Local, int32, uint32

NAME = "histo"
ORIGIN = "Parboil 2.5 benchmarks/imghisto/src/opencl/kernel.cl, main.cc"
KIND = "replicated local-atomic sub-histograms, global atomic merge"
CL_FILE = "histo.cl"
SIZES = {
    "small": dict(w=256, h=64, threads=128, blocks=4, rep=4, repeat=2),
    "bench": dict(w=1024, h=512, threads=256, blocks=16, rep=8, repeat=3),
    "gpu": dict(w=4096, h=4096, threads=1024, blocks=1320, rep=40, repeat=10),
}
TOL: dict[str, float] = {}
BINS = 256
WARP_SIZE = 32


@clpy.kernel
def histo_r_per_block(
    histo: Global[uint32],
    data: Global[uint32],
    hs: Local[uint32],
    size: int32,
    bins: int32,
    binsp: int32,
    r: int32,
):
    bx = clpy.get_group_id(0)
    tx = clpy.get_local_id(0)
    warpid = tx >> 5
    lane = tx & 31
    off_rep = binsp * (tx % r)
    warps_block = clpy.get_local_size(0) // WARP_SIZE
    begin = (size // warps_block) * warpid + WARP_SIZE * bx + lane
    end = (size // warps_block) * (warpid + 1)
    step = WARP_SIZE * clpy.get_num_groups(0)
    for pos in range(tx, binsp * r, clpy.get_local_size(0)):
        hs[pos] = 0
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    for i in range(begin, end, step):
        d = data[i]
        clpy.atomic_inc(hs + off_rep + int32((d * uint32(bins)) >> 12))
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    for pos in range(tx, bins, clpy.get_local_size(0)):
        s = uint32(0)
        for base in range(0, binsp * r, binsp):
            s += hs[base + pos]
        clpy.atomic_add(histo + pos, s)


def make_inputs(size: str, seed: int = 0) -> dict[str, Any]:
    p = SIZES[size]
    rng = np.random.default_rng(seed)
    # a 12-bit image with a skewed distribution (some bins much fuller than others)
    img = np.clip(rng.normal(1800, 500, (p["h"], p["w"])), 0, 4095).astype(np.uint32)
    return dict(img=img, **{k: p[k] for k in ("threads", "blocks", "rep", "repeat")})


def numpy_reference(inp: dict[str, Any]) -> np.ndarray:
    bins = (inp["img"].ravel().astype(np.uint64) * BINS) >> 12
    return np.bincount(bins.astype(np.int64), minlength=BINS).astype(np.uint32)


def run_clpy(inp: dict[str, Any], device: Any, *, resident: bool, events: Any = None) -> np.ndarray:
    h = Host(device, resident, events)
    size = inp["img"].size
    th, nb, rep = inp["threads"], inp["blocks"], inp["rep"]
    data = h.put(inp["img"].ravel())
    zeros = np.zeros(BINS, np.uint32)
    histo = h.put(zeros)
    for _ in range(inp["repeat"]):
        h.set(histo, zeros)  # the host clears the histogram before each run
        h(
            histo_r_per_block,
            (nb * th,),
            (th,),
            histo,
            data,
            clpy.LocalMemory((BINS + 1) * rep),
            size,
            BINS,
            BINS + 1,
            rep,
        )
    return h.get(histo)


def run_original(inp: dict[str, Any], ctx: Any, queue: Any, events: Any = None) -> np.ndarray:
    o = OrigHost(ctx, queue, CL_FILE, "", events)
    size = inp["img"].size
    th, nb, rep = inp["threads"], inp["blocks"], inp["rep"]
    data = o.buf(inp["img"].ravel())
    zeros = np.zeros(BINS, np.uint32)
    histo = o.buf(zeros)
    for _ in range(inp["repeat"]):
        o.write(histo, zeros)
        o(
            "histo_R_per_block_kernel",
            (nb * th,),
            (th,),
            histo,
            data,
            o.local(4 * (BINS + 1) * rep),
            i32(size),
            i32(BINS),
            i32(BINS + 1),
            i32(rep),
        )
    return o.read(histo, (BINS,), np.uint32)
