"""@clpy.struct: typedef, field access, struct values, struct pointers, nested structs."""

from __future__ import annotations

import clpy
from clpy import Global, float32, int32

from . import case


@clpy.struct
class Particle:
    pos: clpy.float4
    vel: clpy.float3
    mass: float32
    id: int32
    flags: clpy.uchar


@clpy.struct
class ValIdx:
    val: float32
    idx: int32


@clpy.struct
class Pair:
    best: ValIdx
    count: clpy.ushort
    total: clpy.double


@clpy.kernel
def struct_step(ps: Global[Particle], dt: float32):
    i = clpy.get_global_id(0)
    p = ps[i]
    p.pos.xyz += p.vel * dt
    p.flags = 1
    ps[i] = p
    ps[i].mass *= 0.5


@clpy.kernel
def struct_values(x: Global[float32], out: Global[ValIdx], pairs: Global[Pair]):
    i = clpy.get_global_id(0)
    v = ValIdx(x[i], int32(i))
    w = ValIdx(0.0, -1)
    best = v if v.val > w.val else w
    out[i] = best
    pr = pairs[i]
    pr.best = best
    pr.count += 1
    pairs[i] = pr


@clpy.func
def better(a: ValIdx, b: ValIdx) -> ValIdx:
    return a if a.val > b.val or (a.val == b.val and a.idx < b.idx) else b


@clpy.kernel
def struct_func(x: Global[ValIdx], n: int32):
    i = clpy.get_global_id(0)
    if i + 1 < n:
        x[i] = better(x[i], x[i + 1])


@case("struct_step")
def _step() -> object:
    return struct_step


@case("struct_values")
def _values() -> object:
    return struct_values


@case("struct_func")
def _func() -> object:
    return struct_func
