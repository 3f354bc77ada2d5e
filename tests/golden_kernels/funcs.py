"""@clpy.func device functions: once per signature, several specializations, nesting,
names that clash with OpenCL built-ins and C keywords."""

from __future__ import annotations

import clpy
from clpy import Global, float32, int32

from . import case


@clpy.func
def square(x):
    return x * x


@clpy.func
def axpy(a: float32, x: float32, y: float32) -> float32:
    return a * x + y


@clpy.func
def poly(x: float32) -> float32:
    return axpy(x, square(x), 1.0)


@clpy.func
def store(p: Global[float32], i: int32, v: float32):
    p[i] = v


@clpy.kernel
def func_specializations(xf: Global[float32], xi: Global[int32]):
    i = clpy.get_global_id(0)
    xf[i] = square(xf[i]) + square(2.0) + poly(xf[i])
    xi[i] = square(xi[i]) + square(int32(i))
    store(xf, int32(i), 0.0)


@clpy.func
def dot(a: clpy.float4, b: clpy.float4) -> float32:
    return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w


@clpy.func
def sin(x: float32) -> float32:
    return x - x * x * x / 6.0


@clpy.kernel
def func_name_clash(v: Global[clpy.float4], out: Global[float32]):
    i = clpy.get_global_id(0)
    int = 3
    float = 0.5
    kernel = 2
    global_ = 1
    out[i] = dot(v[i], v[i]) + clpy.dot(v[i], v[i]) + sin(out[i]) + clpy.sin(out[i])
    out[i] += int + float + kernel + global_


@case("func_specializations")
def _spec() -> object:
    return func_specializations


@case("func_name_clash")
def _clash() -> object:
    return func_name_clash
