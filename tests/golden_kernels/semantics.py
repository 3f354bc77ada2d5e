"""Python semantics in kernels: floor // and %, true division, **, weak literals, usual
arithmetic conversions, shifts."""

from __future__ import annotations

import clpy
from clpy import Global, float32, int32, uint

from . import case


@clpy.kernel
def sem_floor_div(a: Global[int32], b: Global[int32], q: Global[int32], r: Global[int32],
                  u: Global[uint]):
    i = clpy.get_global_id(0)
    q[i] = a[i] // b[i]
    r[i] = a[i] % b[i]
    u[i] = u[i] // 3 + u[i] % 5
    q[i] += int32(i // 2 + i % 4)
    r[i] += a[i] % 4 + 7 // 2 - 7 % -3


@clpy.kernel
def sem_float_floor(x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    y[i] = x[i] // 2.0 + x[i] % 3.0


@clpy.kernel
def sem_true_div(a: Global[int32], out: Global[float32]):
    i = clpy.get_global_id(0)
    out[i] = a[i] / 2
    out[i] += a[i] / a[i + 1]
    out[i] += 7 / 2


@clpy.kernel
def sem_pow(x: Global[float32], n: Global[int32]):
    i = clpy.get_global_id(0)
    v = x[i]
    k = n[i]
    x[i] = v ** 2 + v ** 0.5 + v ** k + v ** v
    n[i] = k ** 3 + k ** 0 + 2 ** 10


@clpy.kernel
def sem_weak_literals(f: Global[float32], d: Global[clpy.double], c: Global[clpy.char],
                      u: Global[clpy.ulong]):
    i = clpy.get_global_id(0)
    f[i] = f[i] * 2.0 + 1
    d[i] = d[i] * 2.0 + 0.1
    c[i] = c[i] + 1
    u[i] = u[i] * 3 + 1
    acc = 0
    acc += f[i]
    f[i] = acc


@clpy.kernel
def sem_conversions(a: Global[int32], b: Global[uint], c: Global[clpy.long],
                    s: Global[clpy.short], out: Global[clpy.double]):
    i = clpy.get_global_id(0)
    x = clpy.long(a[i]) + b[i]  # int + uint is an error (clpy/frontend/signs.py)
    y = a[i] + c[i]
    z = s[i] * s[i]
    w = b[i] * 1.5
    out[i] = x + y + z + w


@clpy.kernel
def sem_shifts(a: Global[int32], b: Global[uint], c: Global[clpy.uchar], n: int32):
    i = clpy.get_global_id(0)
    a[i] = (a[i] << n) | (a[i] >> 3)
    b[i] = (b[i] >> n) ^ (1 << 31)
    c[i] = c[i] << 1
    a[i] <<= 2


@case("sem_floor_div")
def _fd() -> object:
    return sem_floor_div


@case("sem_float_floor")
def _ff() -> object:
    return sem_float_floor


@case("sem_true_div")
def _td() -> object:
    return sem_true_div


@case("sem_pow")
def _pow() -> object:
    return sem_pow


@case("sem_weak_literals")
def _weak() -> object:
    return sem_weak_literals


@case("sem_conversions")
def _conv() -> object:
    return sem_conversions


@case("sem_shifts")
def _shifts() -> object:
    return sem_shifts
