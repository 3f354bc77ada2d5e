"""Pointers in every address space: p[i], p + k, p - q, comparison, const inference."""

from __future__ import annotations

import clpy
from clpy import Constant, Global, Local, float32, int32

from . import case


@clpy.kernel
def ptr_spaces(g: Global[float32], c: Constant[float32], scratch: Local[float32],
               out: Global[float32]):
    i = clpy.get_global_id(0)
    li = clpy.get_local_id(0)
    scratch[li] = g[i] * c[0]
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    out[i] = scratch[li]


@clpy.kernel
def ptr_arith(x: Global[int32], y: Global[int32], n: int32):
    i = clpy.get_global_id(0)
    p = x + i
    q = p + 1
    end = x + n
    if q < end:
        y[i] = p[0] + q[0]
    d = end - p
    y[i] += int32(d)
    r = 2 + y
    r[i] = 0


@clpy.kernel
def ptr_const_alias(src: Global[float32], dst: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    s = src
    d = dst + 0
    if i < n:
        d[i] = s[i]


@clpy.kernel
def ptr_private(out: Global[float32]):
    tmp = clpy.private_array(float32, 4)
    p = clpy.private_array(float32, 2)
    for k in range(4):
        tmp[k] = float32(k)
    p[0] = tmp[1]
    p[1] = tmp[2]
    out[clpy.get_global_id(0)] = p[0] + p[1]


@case("ptr_spaces")
def _spaces() -> object:
    return ptr_spaces


@case("ptr_arith")
def _arith() -> object:
    return ptr_arith


@case("ptr_const_alias")
def _alias() -> object:
    return ptr_const_alias


@case("ptr_private")
def _private() -> object:
    return ptr_private
