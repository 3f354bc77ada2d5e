"""Parboil SpMV: sparse matrix × dense vector with the matrix in JDS (jagged diagonal)
format: rows sorted by length, stored diagonal by diagonal (each padded to a multiple of 32
rows), one work-item per sorted row, with the loads of the next element software-pipelined
(prefetched) ahead of the multiply-add; the per-warp diagonal counts and the diagonal starts
are ``__constant``. The same product is run ``iters`` times, as Parboil's timing loop does.

Ported from Parboil 2.5 ``benchmarks/spmv/src/opencl_nvidia/kernel.cl`` (``spmv_jds``) and
``main.c`` (50 launches; the block size from ``compute_active_thread`` is fixed at 128 here).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import clpy
from benchmarks.programs.common import Host, OrigHost, i32
from clpy import Constant, Global, float32, int32

NAME = "spmv"
ORIGIN = "Parboil 2.5 benchmarks/spmv/src/opencl_nvidia/kernel.cl, main.c"
KIND = "JDS sparse matrix-vector, prefetching loop, __constant tables"
CL_FILE = "spmv.cl"
SIZES = {
    "small": dict(dim=1000, iters=2),
    "bench": dict(dim=40000, iters=10),
    "gpu": dict(dim=400000, iters=50),
}
TOL = dict(rtol=1e-4, atol=1e-5)
BLOCK = 128
WARP_BITS = 5
PAD = 32


@clpy.kernel
def spmv_jds(
    dst: Global[float32],
    d_data: Global[float32],
    d_index: Global[int32],
    d_perm: Global[int32],
    x_vec: Global[float32],
    dim: int32,
    jds_ptr: Constant[int32],
    sh_zcnt: Constant[int32],
):
    ix = clpy.get_global_id(0)
    warp_id = ix >> WARP_BITS
    if ix < dim:
        s = float32(0.0)
        bound = sh_zcnt[warp_id]
        j = jds_ptr[0] + ix
        d = d_data[j]
        i = d_index[j]
        t = x_vec[i]
        if bound > 1:
            j = jds_ptr[1] + ix
            i = d_index[j]
            for k in range(2, bound):
                dn = d_data[j]
                j = jds_ptr[k] + ix
                i_next = d_index[j]
                tn = x_vec[i]
                s += d * t
                i = i_next
                d = dn
                t = tn
            dn = d_data[j]
            tn = x_vec[i]
            s += d * t
            d = dn
            t = tn
        s += d * t
        dst[d_perm[ix]] = s


def _to_jds(row_len: np.ndarray, cols: np.ndarray, vals: np.ndarray) -> dict[str, np.ndarray]:
    """JDS arrays from CSR-like rows (``row_len``, concatenated ``cols``/``vals``)."""
    dim = row_len.size
    perm = np.argsort(-row_len, kind="stable").astype(np.int32)
    starts = np.concatenate(([0], np.cumsum(row_len)[:-1]))
    sorted_len = row_len[perm]
    ndiag = int(sorted_len[0])
    lens = [dim] + [int((sorted_len > k).sum()) for k in range(1, ndiag)]
    padded = [(n + PAD - 1) // PAD * PAD for n in lens]
    jds_ptr = np.concatenate(([0], np.cumsum(padded)[:-1])).astype(np.int32)
    data = np.zeros(sum(padded), np.float32)
    index = np.zeros(sum(padded), np.int32)
    for k in range(ndiag):
        rows = perm[: lens[k]]
        has = row_len[rows] > k
        pos = jds_ptr[k] + np.nonzero(has)[0]
        data[pos] = vals[starts[rows[has]] + k]
        index[pos] = cols[starts[rows[has]] + k]
    warps = (dim + PAD - 1) // PAD
    zcnt = np.array([sorted_len[w * PAD] for w in range(warps)], np.int32)
    return dict(data=data, index=index, perm=perm, jds_ptr=jds_ptr, sh_zcnt=zcnt)


def make_inputs(size: str, seed: int = 0) -> dict[str, Any]:
    p = SIZES[size]
    rng = np.random.default_rng(seed)
    dim = p["dim"]
    row_len = np.minimum(1 + rng.poisson(9, dim), 60)
    row_len[rng.integers(0, dim, max(1, dim // 500))] = 120  # a few long rows
    nnz = int(row_len.sum())
    cols = rng.integers(0, dim, nnz).astype(np.int32)
    vals = rng.uniform(-1, 1, nnz).astype(np.float32)
    x = rng.uniform(-1, 1, dim).astype(np.float32)
    jds = _to_jds(row_len, cols, vals)
    return dict(row_len=row_len, cols=cols, vals=vals, x=x, iters=p["iters"], **jds)


def numpy_reference(inp: dict[str, Any]) -> np.ndarray:
    rows = np.repeat(np.arange(inp["row_len"].size), inp["row_len"])
    prod = inp["vals"].astype(np.float64) * inp["x"][inp["cols"]].astype(np.float64)
    return np.bincount(rows, prod, minlength=inp["row_len"].size).astype(np.float32)


def run_clpy(inp: dict[str, Any], device: Any, *, resident: bool, events: Any = None) -> np.ndarray:
    h = Host(device, resident, events)
    dim = inp["x"].size
    gsize = (dim + BLOCK - 1) // BLOCK * BLOCK
    args = [h.put(inp[k]) for k in ("data", "index", "perm", "x")]
    ptr, zcnt = h.put(inp["jds_ptr"]), h.put(inp["sh_zcnt"])
    dst = h.empty(dim, np.float32)
    for _ in range(inp["iters"]):
        h(spmv_jds, (gsize,), (BLOCK,), dst, *args, dim, ptr, zcnt)
    return h.get(dst)


def run_original(inp: dict[str, Any], ctx: Any, queue: Any, events: Any = None) -> np.ndarray:
    o = OrigHost(ctx, queue, CL_FILE, "", events)
    dim = inp["x"].size
    gsize = (dim + BLOCK - 1) // BLOCK * BLOCK
    args = [o.buf(inp[k]) for k in ("data", "index", "perm", "x")]
    ptr, zcnt = o.buf(inp["jds_ptr"]), o.buf(inp["sh_zcnt"])
    dst = o.empty(4 * dim)
    for _ in range(inp["iters"]):
        o("spmv_jds", (gsize,), (BLOCK,), dst, *args, i32(dim), ptr, zcnt)
    return o.read(dst, (dim,), np.float32)
