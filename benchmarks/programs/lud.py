"""Rodinia LUD: in-place blocked LU decomposition (no pivoting) of an n×n matrix with 16×16
blocks. Per block step three kernels: ``lud_diagonal`` factors the diagonal block (one group of
16), ``lud_perimeter`` solves the block row and column (groups of 32: half row, half column),
``lud_internal`` updates the trailing matrix (16×16 groups, a 16-term dot product per item);
a last ``lud_diagonal`` ends it.

Ported from Rodinia 3.1 ``opencl/lud/lud_kernel.cl`` and ``ocl/lud.cpp`` (same block size,
work-group sizes and launch sequence).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import clpy
from benchmarks.programs.common import Host, OrigHost, i32
from clpy import Global, float32, int32

NAME = "lud"
ORIGIN = "Rodinia 3.1 opencl/lud/lud_kernel.cl, ocl/lud.cpp"
KIND = "blocked LU, 3 kernels per 16-column step"
CL_FILE = "lud.cl"
SIZES = {"small": dict(n=48), "bench": dict(n=256), "gpu": dict(n=2048)}
TOL = dict(rtol=2e-3, atol=2e-4)

BS = 16
HALF = BS // 2


@clpy.kernel
def lud_diagonal(m: Global[float32], dim: int32, offset: int32):
    shadow = clpy.local_array(float32, BS * BS)
    tx = clpy.get_local_id(0)
    base = offset * dim + offset
    for i in range(BS):
        shadow[i * BS + tx] = m[base + i * dim + tx]
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    for i in range(BS - 1):
        if tx > i:
            for j in range(i):
                shadow[tx * BS + i] -= shadow[tx * BS + j] * shadow[j * BS + i]
            shadow[tx * BS + i] /= shadow[i * BS + i]
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
        if tx > i:
            for j in range(i + 1):
                shadow[(i + 1) * BS + tx] -= shadow[(i + 1) * BS + j] * shadow[j * BS + tx]
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    for i in range(1, BS):
        m[base + i * dim + tx] = shadow[i * BS + tx]


@clpy.kernel
def lud_perimeter(m: Global[float32], dim: int32, offset: int32):
    dia = clpy.local_array(float32, BS * BS)
    peri_row = clpy.local_array(float32, BS * BS)
    peri_col = clpy.local_array(float32, BS * BS)
    bx = clpy.get_group_id(0)
    tx = clpy.get_local_id(0)
    if tx < BS:
        idx = tx
        for i in range(HALF):
            dia[i * BS + idx] = m[(offset + i) * dim + offset + idx]
        for i in range(BS):
            peri_row[i * BS + idx] = m[(offset + i) * dim + offset + (bx + 1) * BS + idx]
    else:
        idx = tx - BS
        for i in range(HALF, BS):
            dia[i * BS + idx] = m[(offset + i) * dim + offset + idx]
        for i in range(BS):
            peri_col[i * BS + idx] = m[(offset + (bx + 1) * BS + i) * dim + offset + idx]
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    if tx < BS:
        idx = tx
        for i in range(1, BS):
            for j in range(i):
                peri_row[i * BS + idx] -= dia[i * BS + j] * peri_row[j * BS + idx]
    else:
        idx = tx - BS
        for i in range(BS):
            for j in range(i):
                peri_col[idx * BS + i] -= peri_col[idx * BS + j] * dia[j * BS + i]
            peri_col[idx * BS + i] /= dia[i * BS + i]
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    if tx < BS:
        idx = tx
        for i in range(1, BS):
            m[(offset + i) * dim + offset + (bx + 1) * BS + idx] = peri_row[i * BS + idx]
    else:
        idx = tx - BS
        for i in range(BS):
            m[(offset + (bx + 1) * BS + i) * dim + offset + idx] = peri_col[i * BS + idx]


@clpy.kernel
def lud_internal(m: Global[float32], dim: int32, offset: int32):
    peri_row = clpy.local_array(float32, BS * BS)
    peri_col = clpy.local_array(float32, BS * BS)
    bx = clpy.get_group_id(0)
    by = clpy.get_group_id(1)
    tx = clpy.get_local_id(0)
    ty = clpy.get_local_id(1)
    row = offset + (by + 1) * BS
    col = offset + (bx + 1) * BS
    peri_row[ty * BS + tx] = m[(offset + ty) * dim + col + tx]
    peri_col[ty * BS + tx] = m[(row + ty) * dim + offset + tx]
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    s = float32(0.0)
    for i in range(BS):
        s += peri_col[ty * BS + i] * peri_row[i * BS + tx]
    m[(row + ty) * dim + col + tx] -= s


def make_inputs(size: str, seed: int = 0) -> dict[str, Any]:
    n = SIZES[size]["n"]
    rng = np.random.default_rng(seed)
    a = rng.random((n, n)) + n * np.eye(n) * 0.25
    return dict(a=a.astype(np.float32))


def _lu_small(a: np.ndarray) -> None:
    for k in range(a.shape[0] - 1):
        a[k + 1 :, k] /= a[k, k]
        a[k + 1 :, k + 1 :] -= np.outer(a[k + 1 :, k], a[k, k + 1 :])


def numpy_reference(inp: dict[str, Any]) -> np.ndarray:
    """The same factorisation in float64, blocked by 128 (L unit lower, U upper, in place)."""
    a = inp["a"].astype(np.float64)
    n = a.shape[0]
    nb = 128
    for k in range(0, n, nb):
        e = min(k + nb, n)
        _lu_small(a[k:e, k:e])
        if e < n:
            low = np.tril(a[k:e, k:e], -1) + np.eye(e - k)
            up = np.triu(a[k:e, k:e])
            a[k:e, e:] = np.linalg.solve(low, a[k:e, e:])
            a[e:, k:e] = np.linalg.solve(up.T, a[e:, k:e].T).T
            a[e:, e:] -= a[e:, k:e] @ a[k:e, e:]
    return a.astype(np.float32)


def run_clpy(inp: dict[str, Any], device: Any, *, resident: bool, events: Any = None) -> np.ndarray:
    h = Host(device, resident, events)
    n = inp["a"].shape[0]
    m = h.put(inp["a"])
    i = 0
    while i < n - BS:
        h(lud_diagonal, (BS,), (BS,), m, n, i)
        nb = (n - i) // BS - 1
        h(lud_perimeter, (2 * BS * nb,), (2 * BS,), m, n, i)
        h(lud_internal, (BS * nb, BS * nb), (BS, BS), m, n, i)
        i += BS
    h(lud_diagonal, (BS,), (BS,), m, n, i)
    return h.get(m)


def run_original(inp: dict[str, Any], ctx: Any, queue: Any, events: Any = None) -> np.ndarray:
    o = OrigHost(ctx, queue, CL_FILE, f"-DBLOCK_SIZE={BS}", events)
    n = inp["a"].shape[0]
    m = o.buf(inp["a"])
    tile = o.local(4 * BS * BS)
    i = 0
    while i < n - BS:
        o("lud_diagonal", (BS,), (BS,), m, tile, i32(n), i32(i))
        nb = (n - i) // BS - 1
        o(
            "lud_perimeter",
            (2 * BS * nb,),
            (2 * BS,),
            m,
            tile,
            o.local(4 * BS * BS),
            o.local(4 * BS * BS),
            i32(n),
            i32(i),
        )
        o(
            "lud_internal",
            (BS * nb, BS * nb),
            (BS, BS),
            m,
            tile,
            o.local(4 * BS * BS),
            i32(n),
            i32(i),
        )
        i += BS
    o("lud_diagonal", (BS,), (BS,), m, tile, i32(n), i32(i))
    return o.read(m, (n, n), np.float32)
