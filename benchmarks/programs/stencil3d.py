"""Parboil stencil: a 7-point Jacobi stencil on a 3-D grid, iterated (ping-pong). Each
64×4 work-group owns a 128×4 column of the x-y plane (two points per item, coarsened along x)
and marches up the z axis keeping the current plane in local memory and the planes below and
above in registers; a barrier pair per z step rotates the planes.

Ported from Parboil 2.5 ``benchmarks/stencil/src/opencl_nvidia/kernel.cl``
(``block2D_hybrid_coarsen_x``) and ``main.c`` (work-group 64×4, grid rounded to 2·64 in x,
``c0 = 1/6``, ``c1 = 1/36``, both buffers start as the input).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import clpy
from benchmarks.programs.common import Host, OrigHost, f32, i32
from clpy import Global, float32, int32

NAME = "stencil3d"
ORIGIN = "Parboil 2.5 benchmarks/stencil/src/opencl_nvidia/kernel.cl, main.c"
KIND = "3-D 7-point stencil, local x-y plane, z-marching, x-coarsened"
CL_FILE = "stencil3d.cl"
SIZES = {
    "small": dict(nx=150, ny=10, nz=6, iters=2),
    "bench": dict(nx=256, ny=128, nz=32, iters=2),
    "gpu": dict(nx=512, ny=512, nz=64, iters=20),
}
TOL = dict(rtol=1e-5, atol=1e-6)
TX = 64
TY = 4
C0 = 1.0 / 6.0
C1 = 1.0 / 6.0 / 6.0


@clpy.kernel
def block2d_hybrid_coarsen_x(
    c0: float32,
    c1: float32,
    a0: Global[float32],
    anext: Global[float32],
    nx: int32,
    ny: int32,
    nz: int32,
):
    sh = clpy.local_array(float32, 2 * TX * TY)
    lx = clpy.get_local_id(0)
    ly = clpy.get_local_id(1)
    i = clpy.get_group_id(0) * TX * 2 + lx
    i2 = i + TX
    j = clpy.get_group_id(1) * TY + ly
    sh_id = lx + ly * TX * 2
    sh_id2 = sh_id + TX
    sh[sh_id] = 0.0
    sh[sh_id2] = 0.0
    clpy.barrier()
    w_region = i > 0 and j > 0 and i < nx - 1 and j < ny - 1
    w_region2 = j > 0 and i2 < nx - 1 and j < ny - 1
    x_l_bound = lx == 0
    x_h_bound = lx == TX - 1
    y_l_bound = ly == 0
    y_h_bound = ly == TY - 1
    plane = nx * ny
    bottom = float32(0.0)
    bottom2 = float32(0.0)
    top = float32(0.0)
    top2 = float32(0.0)
    if i < nx and j < ny:
        bottom = a0[j * nx + i]
        sh[sh_id] = a0[plane + j * nx + i]
    if i2 < nx and j < ny:
        bottom2 = a0[j * nx + i2]
        sh[sh_id2] = a0[plane + j * nx + i2]
    clpy.barrier()
    for k in range(1, nz - 1):
        here = k * plane + j * nx
        if i < nx and j < ny:
            top = a0[here + plane + i]
        if w_region:
            a_up = a0[here + nx + i] if y_h_bound else sh[sh_id + 2 * TX]
            a_down = a0[here - nx + i] if y_l_bound else sh[sh_id - 2 * TX]
            a_lr = a0[here + i - 1] if x_l_bound else sh[sh_id - 1]
            anext[here + i] = (top + bottom + a_up + a_down + sh[sh_id + 1] + a_lr) * c1 - sh[
                sh_id
            ] * c0
        if i2 < nx and j < ny:
            top2 = a0[here + plane + i2]
        if w_region2:
            a_up = a0[here + nx + i2] if y_h_bound else sh[sh_id2 + 2 * TX]
            a_down = a0[here - nx + i2] if y_l_bound else sh[sh_id2 - 2 * TX]
            a_lr = a0[here + i2 + 1] if x_h_bound else sh[sh_id2 + 1]
            anext[here + i2] = (top2 + bottom2 + a_up + a_down + a_lr + sh[sh_id2 - 1]) * c1 - sh[
                sh_id2
            ] * c0
        clpy.barrier()
        bottom = sh[sh_id]
        sh[sh_id] = top
        bottom2 = sh[sh_id2]
        sh[sh_id2] = top2
        clpy.barrier()


def make_inputs(size: str, seed: int = 0) -> dict[str, Any]:
    p = SIZES[size]
    rng = np.random.default_rng(seed)
    a = rng.random((p["nz"], p["ny"], p["nx"])).astype(np.float32)
    return dict(a=a, iters=p["iters"])


def numpy_reference(inp: dict[str, Any]) -> np.ndarray:
    c0, c1 = np.float32(C0), np.float32(C1)
    a = inp["a"].copy()
    for _ in range(inp["iters"]):
        b = a.copy()
        s = a[2:, 1:-1, 1:-1] + a[:-2, 1:-1, 1:-1]
        s = s + a[1:-1, 2:, 1:-1]
        s = s + a[1:-1, :-2, 1:-1]
        s = s + a[1:-1, 1:-1, 2:]
        s = s + a[1:-1, 1:-1, :-2]
        b[1:-1, 1:-1, 1:-1] = s * c1 - a[1:-1, 1:-1, 1:-1] * c0
        a = b
    return a


def _geometry(nx: int, ny: int) -> tuple[tuple[int, int], tuple[int, int]]:
    return ((nx + TX * 2 - 1) // (TX * 2) * TX, (ny + TY - 1) // TY * TY), (TX, TY)


def run_clpy(inp: dict[str, Any], device: Any, *, resident: bool, events: Any = None) -> np.ndarray:
    h = Host(device, resident, events)
    nz, ny, nx = inp["a"].shape
    g, loc = _geometry(nx, ny)
    a0, an = h.put(inp["a"]), h.put(inp["a"])
    for _ in range(inp["iters"]):
        h(block2d_hybrid_coarsen_x, g, loc, C0, C1, a0, an, nx, ny, nz)
        a0, an = an, a0
    return h.get(a0)


def run_original(inp: dict[str, Any], ctx: Any, queue: Any, events: Any = None) -> np.ndarray:
    o = OrigHost(ctx, queue, CL_FILE, "", events)
    nz, ny, nx = inp["a"].shape
    g, loc = _geometry(nx, ny)
    a0, an = o.buf(inp["a"]), o.buf(inp["a"])
    sh = o.local(4 * TX * 2 * TY)
    for _ in range(inp["iters"]):
        o(
            "block2D_hybrid_coarsen_x",
            g,
            loc,
            f32(C0),
            f32(C1),
            a0,
            an,
            i32(nx),
            i32(ny),
            i32(nz),
            sh,
        )
        a0, an = an, a0
    return o.read(a0, inp["a"].shape, np.float32)
