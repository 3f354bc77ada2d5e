"""Kernels the command-line tests emit and check (tests/test_cli.py, tests/test_header.py)."""

import clpy
from clpy import Global, Local, float32, int32

GRAVITY = -9.81


@clpy.struct
class Particle:
    pos: clpy.float3
    vel: clpy.float3
    mass: clpy.float32
    id: clpy.int32
    tag: clpy.uchar
    energy: clpy.double


@clpy.struct
class Cell:
    first: Particle
    count: clpy.ushort
    weights: clpy.float2


@clpy.func
def kick(v: clpy.float3, dt: float32) -> clpy.float3:
    return v + clpy.float3(0.0, GRAVITY * dt, 0.0)


@clpy.kernel
def advance(p: Global[Particle], dt: float32, n: int32):
    i = clpy.get_global_id(0)
    if i < n:
        p[i].vel = kick(p[i].vel, dt)
        p[i].pos = p[i].pos + p[i].vel * dt


@clpy.kernel
def block_sum(x: Global[float32], out: Global[float32], scratch: Local[float32], n: int32):
    gid = clpy.get_global_id(0)
    lid = clpy.get_local_id(0)
    scratch[lid] = x[gid] if gid < n else 0.0
    clpy.barrier()
    if lid == 0:
        s = 0.0
        for j in range(clpy.get_local_size(0)):
            s += scratch[j]
        out[clpy.get_group_id(0)] = s


@clpy.kernel
def cell_mass(cells: Global[Cell], out: Global[float32]):
    i = clpy.get_global_id(0)
    out[i] = cells[i].first.mass * float32(cells[i].count)


@clpy.kernel
def scale(x, a):
    i = clpy.get_global_id(0)
    x[i] = x[i] * a
