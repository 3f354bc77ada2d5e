"""Vector types (n = 2, 3, 4, 8, 16): constructors, broadcast, components, swizzles."""

from __future__ import annotations

import clpy
from clpy import Global, float2, float4, int4, uchar16
from clpy.types import catalog as C
from clpy.types.core import VectorType

from . import case

# clpy.uint8 / clpy.int16 / clpy.float16 ... are the NumPy-style scalar aliases (DESIGN.md), so
# the OpenCL vectors of those names are spelled through VectorType here.
uint_8 = VectorType(C.uint, 8)


@clpy.kernel
def vec_constructors(out4: Global[float4], out8: Global[clpy.float8], a: float2, b: float2):
    i = clpy.get_global_id(0)
    v = float4(1, 2, 3, 4)
    w = float4(a, b)
    u = float4(a.x, b, 0.5)
    z = float4(0.0)
    s = float4(a.y)
    out4[i] = v + w + u + z + s
    out8[i] = clpy.float8(v, w)


@clpy.kernel
def vec_components(v4: Global[float4], v16: Global[uchar16], out: Global[clpy.float3]):
    i = clpy.get_global_id(0)
    v = v4[i]
    t = v.wzyx
    t.xy = v.zw
    t.w = v.x + v.s1
    lo = v.lo
    hi = v.hi
    ev = v.even
    od = v.odd
    out[i] = clpy.float3(lo + hi + ev + od, t.z)
    c = v16[i]
    c.s0F = c.sF0
    c.lo = c.hi
    c.s8 = c.sA
    v16[i] = c
    out[i].y = c.even.odd.s3


@clpy.kernel
def vec_ops(a: Global[float4], b: Global[int4], m: Global[int4]):
    i = clpy.get_global_id(0)
    x = a[i] * 2.0 + a[i] / a[i] - 1.0
    y = b[i] * 3 + (b[i] >> 1) ^ 5
    a[i] = -x
    b[i] = ~y & b[i]
    m[i] = (a[i] < x) | (b[i] == y)


@clpy.kernel
def vec_sizes(c2: Global[clpy.char2], s3: Global[clpy.short3], u8: Global[uint_8],
              d16: Global[clpy.long16]):
    i = clpy.get_global_id(0)
    c2[i] = c2[i].yx
    s3[i] = s3[i].zyx + s3[i].xxx
    u8[i] = u8[i].s76543210
    d16[i] = d16[i] + d16[i].sFEDCBA9876543210


@case("vec_constructors")
def _cons() -> object:
    return vec_constructors


@case("vec_components")
def _comp() -> object:
    return vec_components


@case("vec_ops")
def _ops() -> object:
    return vec_ops


@case("vec_sizes")
def _sizes() -> object:
    return vec_sizes
