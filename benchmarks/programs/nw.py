"""Rodinia Needleman-Wunsch: global sequence alignment by dynamic programming over an
(n+1)×(n+1) score matrix, in 16×16 blocks. Each launch processes one anti-diagonal of blocks
(one work-group of 16 items per block); inside a block the items sweep the block's own
anti-diagonals with a barrier per step. ``nw_kernel1`` covers the upper-left triangle of blocks
(n/16 launches), ``nw_kernel2`` the lower-right (n/16 - 1 launches).

Ported from Rodinia 3.1 ``opencl/nw/nw.cl`` and ``nw.c`` (same block size, same launches).
The substitution matrix is a random symmetric 24×24 table standing in for BLOSUM62.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import clpy
from benchmarks.programs.common import Host, OrigHost, i32
from clpy import Global, Local, int32

NAME = "nw"
ORIGIN = "Rodinia 3.1 opencl/nw/nw.cl, nw.c"
KIND = "dynamic programming on anti-diagonals of 16x16 blocks, 2 kernels"
CL_FILE = "nw.cl"
SIZES = {"small": dict(n=64), "bench": dict(n=512), "gpu": dict(n=2048)}
TOL: dict[str, float] = {}
PENALTY = 10

BS = 16
BS1 = BS + 1


@clpy.func
def maximum(a: int32, b: int32, c: int32) -> int32:
    k = b if a <= b else a
    return c if k <= c else k


@clpy.func
def nw_block(
    reference: Global[int32],
    items: Global[int32],
    score: Local[int32],
    ref: Local[int32],
    cols: int32,
    penalty: int32,
    b_x: int32,
    b_y: int32,
) -> None:
    tx = clpy.get_local_id(0)
    corner = cols * BS * b_y + BS * b_x
    index = corner + tx + cols + 1
    if tx == 0:
        score[0] = items[corner]
    for ty in range(BS):
        ref[ty * BS + tx] = reference[index + cols * ty]
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    score[(tx + 1) * BS1] = items[corner + cols + cols * tx]
    score[tx + 1] = items[corner + tx + 1]
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    # upper-left triangle of the block's anti-diagonals
    for m in range(BS):
        if tx <= m:
            x = tx + 1
            y = m - tx + 1
            score[y * BS1 + x] = maximum(
                score[(y - 1) * BS1 + x - 1] + ref[(y - 1) * BS + x - 1],
                score[y * BS1 + x - 1] - penalty,
                score[(y - 1) * BS1 + x] - penalty,
            )
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    # lower-right triangle
    for m in range(BS - 2, -1, -1):
        if tx <= m:
            x = tx + BS - m
            y = BS - tx
            score[y * BS1 + x] = maximum(
                score[(y - 1) * BS1 + x - 1] + ref[(y - 1) * BS + x - 1],
                score[y * BS1 + x - 1] - penalty,
                score[(y - 1) * BS1 + x] - penalty,
            )
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    for ty in range(BS):
        items[index + cols * ty] = score[(ty + 1) * BS1 + tx + 1]


@clpy.kernel
def nw_kernel1(
    reference: Global[int32], items: Global[int32], cols: int32, penalty: int32, blk: int32
):
    score = clpy.local_array(int32, BS1 * BS1)
    ref = clpy.local_array(int32, BS * BS)
    bx = clpy.get_group_id(0)
    nw_block(reference, items, score, ref, cols, penalty, bx, blk - 1 - bx)


@clpy.kernel
def nw_kernel2(
    reference: Global[int32],
    items: Global[int32],
    cols: int32,
    penalty: int32,
    blk: int32,
    block_width: int32,
):
    score = clpy.local_array(int32, BS1 * BS1)
    ref = clpy.local_array(int32, BS * BS)
    bx = clpy.get_group_id(0)
    nw_block(
        reference, items, score, ref, cols, penalty, bx + block_width - blk, block_width - bx - 1
    )


def make_inputs(size: str, seed: int = 0) -> dict[str, Any]:
    n = SIZES[size]["n"]
    rng = np.random.default_rng(seed)
    sub = rng.integers(-4, 12, (24, 24))
    sub = np.triu(sub) + np.triu(sub, 1).T
    seq_a = rng.integers(1, 11, n + 1)
    seq_b = rng.integers(1, 11, n + 1)
    reference = sub[seq_a[:, None], seq_b[None, :]].astype(np.int32)
    reference[0, :] = 0
    reference[:, 0] = 0
    items = np.zeros((n + 1, n + 1), np.int32)
    items[:, 0] = -np.arange(n + 1) * PENALTY
    items[0, :] = -np.arange(n + 1) * PENALTY
    return dict(reference=reference, items=items, penalty=PENALTY)


def numpy_reference(inp: dict[str, Any]) -> np.ndarray:
    s = inp["items"].astype(np.int64)
    ref = inp["reference"]
    p = inp["penalty"]
    cols = s.shape[1]
    ramp = p * np.arange(cols, dtype=np.int64)
    for i in range(1, s.shape[0]):
        # s[i][j] = max(a_j, s[i][j-1] - p) with a_j = max(diag, up): a max-plus scan
        a = np.maximum(s[i - 1, :-1] + ref[i, 1:], s[i - 1, 1:] - p)
        a = np.concatenate(([s[i, 0]], a))
        s[i] = np.maximum.accumulate(a + ramp) - ramp
    return s.astype(np.int32)


def run_clpy(inp: dict[str, Any], device: Any, *, resident: bool, events: Any = None) -> np.ndarray:
    h = Host(device, resident, events)
    cols = inp["items"].shape[1]
    bw = (cols - 1) // BS
    p = inp["penalty"]
    reference = h.put(inp["reference"])
    items = h.put(inp["items"])
    for blk in range(1, bw + 1):
        h(nw_kernel1, (BS * blk,), (BS,), reference, items, cols, p, blk)
    for blk in range(bw - 1, 0, -1):
        h(nw_kernel2, (BS * blk,), (BS,), reference, items, cols, p, blk, bw)
    return h.get(items)


def run_original(inp: dict[str, Any], ctx: Any, queue: Any, events: Any = None) -> np.ndarray:
    o = OrigHost(ctx, queue, CL_FILE, f"-DBLOCK_SIZE={BS}", events)
    cols = inp["items"].shape[1]
    bw = (cols - 1) // BS
    p = inp["penalty"]
    reference = o.buf(inp["reference"])
    items = o.buf(inp["items"])
    loc_score, loc_ref = o.local(4 * BS1 * BS1), o.local(4 * BS * BS)
    for blk in range(1, bw + 1):
        o(
            "nw_kernel1",
            (BS * blk,),
            (BS,),
            reference,
            items,
            items,
            loc_score,
            loc_ref,
            i32(cols),
            i32(p),
            i32(blk),
            i32(bw),
            i32(cols - 1),
            i32(0),
            i32(0),
        )
    for blk in range(bw - 1, 0, -1):
        o(
            "nw_kernel2",
            (BS * blk,),
            (BS,),
            reference,
            items,
            items,
            loc_score,
            loc_ref,
            i32(cols),
            i32(p),
            i32(blk),
            i32(bw),
            i32(cols - 1),
            i32(0),
            i32(0),
        )
    return o.read(items, inp["items"].shape, np.int32)
