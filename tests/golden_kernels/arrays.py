"""Local and private arrays (1-D and 2-D), constexpr sizes, Python constants."""

from __future__ import annotations

import numpy as np

import clpy
from clpy import Global, float32, int32

from . import case

TILE = 16
SCALE = 0.5
USE_BIAS = True
NP_OFFSET = np.int16(3)


def _make_closure_kernel() -> clpy.Kernel:
    factor = 3
    eps = 1e-6

    @clpy.kernel
    def closure_consts(x: Global[float32]):
        i = clpy.get_global_id(0)
        x[i] = x[i] * factor + eps

    return closure_consts


closure_consts = _make_closure_kernel()


@clpy.kernel
def local_tile(a: Global[float32], out: Global[float32], n: int32):
    tile = clpy.local_array(float32, (TILE, TILE + 1))
    row = clpy.local_array(int32, TILE)
    lx = clpy.get_local_id(0)
    ly = clpy.get_local_id(1)
    gx = clpy.get_global_id(0)
    gy = clpy.get_global_id(1)
    tile[ly][lx] = a[gy * n + gx]
    row[lx] = int32(lx)
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    out[gx * n + gy] = tile[lx, ly] * SCALE + row[ly]
    if USE_BIAS:
        out[gx * n + gy] += NP_OFFSET


@clpy.kernel
def private_2d(out: Global[int32]):
    m = clpy.private_array(int32, (2, 3))
    for r in range(2):
        for c in range(3):
            m[r][c] = r * 3 + c
    out[clpy.get_global_id(0)] = m[1][2] + m[0, 1]


@clpy.kernel
def constexpr_block(x: Global[float32], block: clpy.constexpr, unroll: clpy.constexpr):
    buf = clpy.local_array(float32, block)
    lid = clpy.get_local_id(0)
    buf[lid] = x[clpy.get_global_id(0)]
    clpy.barrier()
    acc = 0.0
    for k in range(unroll):
        acc += buf[(lid + k) % block]
    if block > 64:
        acc *= 2.0
    x[clpy.get_global_id(0)] = acc


@case("array_local_tile")
def _tile() -> object:
    return local_tile


@case("array_private_2d")
def _priv() -> object:
    return private_2d


@case("constexpr_block_64")
def _ce64() -> object:
    return constexpr_block.specialize(block=64, unroll=2)


@case("constexpr_block_128")
def _ce128() -> object:
    return constexpr_block.specialize(block=128, unroll=4)


@case("python_closure_consts")
def _closure() -> object:
    return closure_consts


@clpy.kernel
def constexpr_dtype(x: Global[float32], acc_t: clpy.constexpr, scale: clpy.constexpr):
    buf = clpy.private_array(acc_t, 2)
    buf[0] = acc_t(x[0])
    buf[1] = buf[0] * scale
    x[0] = float32(buf[1])


@case("constexpr_dtype_double")
def _ce_double() -> object:
    return constexpr_dtype.specialize(acc_t=clpy.double, scale=0.25)


@case("constexpr_dtype_int")
def _ce_int() -> object:
    return constexpr_dtype.specialize(acc_t=int32, scale=3)
