"""Parboil SGEMM: ``C = alpha·A·Bᵀ + beta·C`` (column-major, A m×k, B n×k) with Volkov's
register tiling: a 32×16 work-group computes a 512×32 tile of C, each work-item one row of it
in 32 private accumulators ``c[32]``; a 16×32 slab of B is staged in local memory per step
of 16 along k.

Ported from Parboil 2.5 ``benchmarks/sgemm/src/opencl_nvidia/kernel.cl`` (``mysgemmNT``,
TILE_N 32, TILE_TB_HEIGHT 16, TILE_M 512) and ``main.cc`` (grid m·TILE_N/TILE_M ×
n·TILE_TB_HEIGHT/TILE_N, one launch).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import clpy
from benchmarks.programs.common import Host, OrigHost, f32, i32
from clpy import Global, float32, int32

NAME = "sgemm"
ORIGIN = "Parboil 2.5 benchmarks/sgemm/src/opencl_nvidia/kernel.cl, main.cc"
KIND = "register-tiled SGEMM, 32x16 groups, private c[32], local B slab"
CL_FILE = "sgemm.cl"
SIZES = {
    "small": dict(m=512, n=32, k=32),
    "bench": dict(m=1024, n=256, k=64),
    "gpu": dict(m=4096, n=4096, k=4096),
}
TOL = dict(rtol=5e-4, atol=1e-2)
TILE_N = 32
TILE_TB_HEIGHT = 16
TILE_M = TILE_N * TILE_TB_HEIGHT
ALPHA = 1.5
BETA = 0.5


@clpy.kernel
def mysgemm_nt(
    a: Global[float32],
    lda: int32,
    b: Global[float32],
    ldb: int32,
    c_out: Global[float32],
    ldc: int32,
    k: int32,
    alpha: float32,
    beta: float32,
):
    c = clpy.private_array(float32, TILE_N)
    for i in range(TILE_N):
        c[i] = 0.0
    lx = clpy.get_local_id(0)
    ly = clpy.get_local_id(1)
    mid = ly * clpy.get_local_size(0) + lx
    m = clpy.get_group_id(0) * TILE_M + mid
    n = clpy.get_group_id(1) * TILE_N + lx
    b_s = clpy.local_array(float32, TILE_TB_HEIGHT * TILE_N)
    for i in range(0, k, TILE_TB_HEIGHT):
        b_s[lx + ly * TILE_N] = b[n + (i + ly) * ldb]
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
        for j in range(TILE_TB_HEIGHT):
            av = a[m + (i + j) * lda]
            for kk in range(TILE_N):
                c[kk] += av * b_s[j * TILE_N + kk]
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    t = ldc * clpy.get_group_id(1) * TILE_N + m
    for i in range(TILE_N):
        c_out[t + i * ldc] = c_out[t + i * ldc] * beta + alpha * c[i]


def make_inputs(size: str, seed: int = 0) -> dict[str, Any]:
    p = SIZES[size]
    rng = np.random.default_rng(seed)
    m, n, k = p["m"], p["n"], p["k"]
    # column-major storage: A[m + i*lda] is row m, column i
    a = rng.random((k, m), dtype=np.float32)  # a[i, m]
    b = rng.random((k, n), dtype=np.float32)
    c = rng.random((n, m), dtype=np.float32)
    return dict(a=a, b=b, c=c)


def numpy_reference(inp: dict[str, Any]) -> np.ndarray:
    a = inp["a"].astype(np.float64)
    b = inp["b"].astype(np.float64)
    c = inp["c"].astype(np.float64)
    return (BETA * c + ALPHA * (b.T @ a)).astype(np.float32)


def _geometry(inp: dict[str, Any]) -> tuple[tuple[int, int], tuple[int, int]]:
    k, m = inp["a"].shape
    n = inp["b"].shape[1]
    if m % TILE_M or n % TILE_N or k % TILE_TB_HEIGHT:
        raise ValueError(f"sgemm: m must be a multiple of {TILE_M}, n of {TILE_N}")
    return (m * TILE_N // TILE_M, n * TILE_TB_HEIGHT // TILE_N), (TILE_N, TILE_TB_HEIGHT)


def run_clpy(inp: dict[str, Any], device: Any, *, resident: bool, events: Any = None) -> np.ndarray:
    h = Host(device, resident, events)
    k, m = inp["a"].shape
    n = inp["b"].shape[1]
    g, loc = _geometry(inp)
    a, b, c = h.put(inp["a"]), h.put(inp["b"]), h.put(inp["c"])
    h(mysgemm_nt, g, loc, a, m, b, n, c, m, k, ALPHA, BETA)
    return h.get(c)


def run_original(inp: dict[str, Any], ctx: Any, queue: Any, events: Any = None) -> np.ndarray:
    opts = f"-D TILE_N={TILE_N} -D TILE_TB_HEIGHT={TILE_TB_HEIGHT} -D TILE_M={TILE_M}"
    o = OrigHost(ctx, queue, CL_FILE, opts, events)
    k, m = inp["a"].shape
    n = inp["b"].shape[1]
    g, loc = _geometry(inp)
    a, b, c = o.buf(inp["a"]), o.buf(inp["b"]), o.buf(inp["c"])
    o("mysgemmNT", g, loc, a, i32(m), b, i32(n), c, i32(m), i32(k), f32(ALPHA), f32(BETA))
    return o.read(c, inp["c"].shape, np.float32)
