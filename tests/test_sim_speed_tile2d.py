"""2-D local tiles of 2-D work-groups (``tile[ly][lx + k]``, ``tile[lx][ly + k]``, as in
convsep, hotspot, LU, backprop, srad): the fast paths (``where.GRID``: a "take" whose columns
form a 2-D grid is read and written as a strided view; ``lvalues.TILE2D``: the two indices of a
2-D local array evaluated exactly, without lane arrays) give the bytes and checker reports of
the general path (both off), checks off and on, with a seeded out-of-bounds index and a seeded
race inside such a tile, every group present and a subset of groups (a per-group branch)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, float32, int32
from clpy_sim import SimulationError, affine, lvalues, memory, plan, where

NX, NY = 8, 4  # work-group 8 x 4
STEPS = 3  # tile row: STEPS * NX plus a halo of NX on each side
W = (STEPS + 2) * NX
CH = (STEPS + 2) * NY + 1  # the column kernel's padded tile column
GX, GY = 3, 2  # work-groups


@clpy.kernel
def rows(dst: Global[float32], src: Global[float32], taps: Global[float32], k: int32):
    data = clpy.local_array(float32, (NY, W))
    lx = clpy.get_local_id(0)
    ly = clpy.get_local_id(1)
    g = clpy.get_group_id(1) * GX + clpy.get_group_id(0)
    base = g * NY * W + ly * W + lx
    for i in range(STEPS + 2):
        data[ly][lx + i * NX] = src[base + i * NX]
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    for i in range(1, STEPS + 1):
        s = float32(0.0)
        for j in range(-2, 3):
            s += taps[j + 2] * data[ly][lx + i * NX + j + k]  # k: a seeded bound
        dst[base + i * NX] = s
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    if g % 2 == 0:  # a subset of the groups
        data[ly][lx + NX] = data[ly][lx + 2 * NX] * 2.0
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    dst[base] = data[ly][lx + NX] + data[NY - 1 - ly][lx + 3]


@clpy.kernel
def cols(dst: Global[float32], src: Global[float32], k: int32):
    data = clpy.local_array(float32, (NX, CH))
    lx = clpy.get_local_id(0)
    ly = clpy.get_local_id(1)
    g = clpy.get_group_id(1) * GX + clpy.get_group_id(0)
    base = g * NX * CH + lx * CH + ly
    for i in range(STEPS + 2):
        data[lx][ly + i * NY] = src[base + i * NY]
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    s = float32(0.0)
    for j in range(-2, 3):
        s += data[lx][ly + 2 * NY + j] * float32(j + 3)
    dst[base] = s + data[lx + k][ly]  # k: a seeded bound on the first index


@clpy.kernel
def heat(dst: Global[float32], src: Global[float32], k: int32):
    t = clpy.local_array(float32, (NY, NX))
    u = clpy.local_array(float32, (NY, NX))
    tx = clpy.get_local_id(0)
    ty = clpy.get_local_id(1)
    g = clpy.get_group_id(1) * GX + clpy.get_group_id(0)
    idx = g * NX * NY + ty * NX + tx
    t[ty][tx] = src[idx]
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    n = max(ty - 1, 0)
    s = min(ty + 1, NY - 1)
    w = max(tx - 1, 0)
    e = min(tx + 1, NX - 1)
    for i in range(2):
        if 1 <= tx <= NX - 2 and g + i >= 1:
            u[ty][tx] = t[ty][tx] + 0.25 * (t[n][tx] + t[s][tx] + t[ty][e] + t[ty][w])
        else:
            u[ty][tx] = t[ty][tx]
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
        t[ty][tx] = u[ty][tx + k]  # k: a seeded bound (or race: another lane's element)
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    dst[idx] = t[ty][tx]


@clpy.kernel
def racy(dst: Global[float32]):
    t = clpy.local_array(float32, (NY, W))
    lx = clpy.get_local_id(0)
    ly = clpy.get_local_id(1)
    t[ly][lx + NX] = float32(lx)
    t[ly][lx + 2 * NX] = float32(ly)
    dst[clpy.get_global_id(1) * (GX * NX) + clpy.get_global_id(0)] = t[ly][lx + NX + 1]


@pytest.fixture
def fresh_plans() -> Iterator[None]:
    plan._PLANS.clear()
    sizes = where._GRID_READ_MIN, where._GRID_WRITE_MIN
    where._GRID_READ_MIN = where._GRID_WRITE_MIN = 0  # (these tiles are small)
    yield
    where._GRID_READ_MIN, where._GRID_WRITE_MIN = sizes
    where.GRID = True
    lvalues.TILE2D = True
    affine.ENABLED = True
    memory._row_info.cache_clear()
    plan._PLANS.clear()


def _run(kernel: Any, args: list[Any], checks: bool, fast: bool) -> Any:
    where.GRID = fast
    lvalues.TILE2D = fast
    memory._row_info.cache_clear()
    plan._PLANS.clear()
    out = args[0]
    out[...] = 0
    try:
        with clpy.sim.config(checks=checks, threads=1, on_error="raise"):
            kernel[(GX * NX, GY * NY), (NX, NY)](*args, device="sim")
        return ("ok", out.dtype.str, out.tobytes())
    except SimulationError as e:
        return ("error", [(r.kind, r.message, r.loc, r.global_id) for r in e.reports])


def _data(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


def _rows_args() -> list[Any]:
    n = GX * GY * NY * W
    return [np.zeros(n, np.float32), _data(n, 1), _data(5, 2)]


@pytest.mark.parametrize("checks", [False, True])
@pytest.mark.parametrize("k", [0, NX + 1])  # NX + 1: past the tile row's end
def test_rows(fresh_plans: None, checks: bool, k: int) -> None:
    args = [*_rows_args(), k]
    fast = _run(rows, args, checks, True)
    assert fast == _run(rows, args, checks, False)
    assert fast[0] == ("error" if checks and k else "ok")


def test_rows_reference(fresh_plans: None) -> None:
    args = [*_rows_args(), 0]
    got = _run(rows, args, False, True)
    dst, src, taps = np.zeros_like(args[0]), args[1], args[2]
    lx, ly = np.meshgrid(np.arange(NX), np.arange(NY))
    for g in range(GX * GY):
        data = src[g * NY * W : (g + 1) * NY * W].reshape(NY, W).copy()
        base = g * NY * W + ly * W + lx
        for i in range(1, STEPS + 1):
            s = np.zeros((NY, NX), np.float32)
            for j in range(-2, 3):
                s += taps[j + 2] * data[ly, lx + i * NX + j]
            dst[base + i * NX] = s
        if g % 2 == 0:
            data[ly, lx + NX] = data[ly, lx + 2 * NX] * np.float32(2.0)
        dst[base] = data[ly, lx + NX] + data[NY - 1 - ly, lx + 3]
    assert got == ("ok", dst.dtype.str, dst.tobytes())


@pytest.mark.parametrize("checks", [False, True])
@pytest.mark.parametrize("k", [0, 1])  # 1: lane lx = NX - 1 reads row NX
def test_cols(fresh_plans: None, checks: bool, k: int) -> None:
    n = GX * GY * NX * CH
    args = [np.zeros(n, np.float32), _data(n, 4), k]
    fast = _run(cols, args, checks, True)
    assert fast == _run(cols, args, checks, False)
    assert fast[0] == ("error" if checks and k else "ok")


@pytest.mark.parametrize("checks", [False, True])
@pytest.mark.parametrize("k", [0, 1, -NX])  # 1: a race (and an overrun); -NX: out of bounds
def test_heat(fresh_plans: None, checks: bool, k: int) -> None:
    n = GX * GY * NX * NY
    args = [np.zeros(n, np.float32), _data(n, 5), k]
    fast = _run(heat, args, checks, True)
    assert fast == _run(heat, args, checks, False)
    assert fast[0] == ("error" if checks and k else "ok")


def test_race_in_a_tile(fresh_plans: None) -> None:
    args = [np.zeros(GX * NX * GY * NY, np.float32)]
    fast = _run(racy, args, True, True)
    assert fast == _run(racy, args, True, False)
    assert fast[0] == "error" and any(kind == "data-race" for kind, *_ in fast[1])
    assert _run(racy, args, False, True) == _run(racy, args, False, False)


def test_row_grid() -> None:
    lx, ly = np.meshgrid(np.arange(NX), np.arange(NY))
    assert where.row_grid((ly * W + lx + 3).reshape(-1)) == (3, NY, NX, W, 1)
    assert where.row_grid((lx * CH + ly).reshape(-1)) == (0, NY, NX, 1, CH)
    assert where.row_grid(np.arange(8)) is None  # a run: a slice already
    assert where.row_grid((ly * W - lx).reshape(-1)) is None  # a negative step
    bad = (ly * W + lx).reshape(-1)
    bad[-1] += 1
    assert where.row_grid(bad) is None
