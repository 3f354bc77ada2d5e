"""print() → printf with the right conversion for every type (spec §1.13.13), and assert."""

from __future__ import annotations

import clpy
from clpy import Global, float32, int32

from . import case


@clpy.kernel
def print_scalars(x: Global[float32], n: int32, u: clpy.uint, lo: clpy.long, ul: clpy.ulong,
                  c: clpy.char, uc: clpy.uchar, s: clpy.short):
    i = clpy.get_global_id(0)
    print("item", i, "of", n, "x =", x[i])
    print(u, lo, ul, c, uc, s, i > 0, sep=", ", end=";\n")
    print("100% done")
    print()


@clpy.kernel
def print_vectors(f4: Global[clpy.float4], i2: Global[clpy.int2], c8: Global[clpy.char8],
                  u16: Global[clpy.ushort16], l3: Global[clpy.long3]):
    i = clpy.get_global_id(0)
    print(f4[i], i2[i], c8[i], u16[i], l3[i])
    print(x_ptr(f4))


@clpy.func
def x_ptr(p: Global[clpy.float4]) -> Global[clpy.float4]:
    return p + 1


@clpy.kernel
def print_assert(x: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    assert i < n
    assert x[i] >= 0.0, "negative input"
    x[i] = clpy.sqrt(x[i])


@case("print_scalars")
def _scalars() -> object:
    return print_scalars


@case("print_vectors")
def _vectors() -> object:
    return print_vectors


@case("print_assert")
def _assert() -> object:
    return print_assert
