"""Every scalar type: parameters, locals, literals and conversions."""

from __future__ import annotations

import clpy
from clpy import Global, double, half, int32, long, short, uchar, uint, ulong

from . import case


@clpy.kernel
def scalar_params(c: clpy.char, uc: uchar, s: short, us: clpy.ushort, i: int32, ui: uint,
                  lo: long, ulo: ulong, f: clpy.float32, out_i: Global[long],
                  out_f: Global[clpy.float32]):
    out_i[0] = c + uc
    out_i[1] = s + us
    out_i[2] = long(i) + ui  # int + uint is an error (clpy/frontend/signs.py)
    out_i[3] = lo + long(ulo)
    out_f[0] = f + i


@clpy.kernel
def scalar_locals(out: Global[int32]):
    a: uchar = 250
    b: short = -3
    flag = a > 200
    n: ulong = 1
    big = 3000000000
    sz = clpy.get_global_id(0)
    if flag:
        out[sz] = a + b + int32(n) + int32(big % 7)


@clpy.kernel
def scalar_double(x: Global[double], y: Global[double], a: double):
    i = clpy.get_global_id(0)
    y[i] = a * x[i] + 0.5


@clpy.kernel
def scalar_half(x: Global[half], a: half):
    i = clpy.get_global_id(0)
    x[i] = x[i] * a + 1.0


@clpy.kernel
def scalar_conversions(xf: Global[clpy.float32], xi: Global[int32], xu: Global[uchar]):
    i = clpy.get_global_id(0)
    xi[i] = int(xf[i])
    xf[i] = float(xi[i]) + clpy.float32(xu[i])
    xu[i] = uchar(xi[i])
    b = bool(xi[i])
    if b:
        xi[i] = 1


@case("scalar_params")
def _params() -> object:
    return scalar_params


@case("scalar_locals")
def _locals() -> object:
    return scalar_locals


@case("scalar_double")
def _double() -> object:
    return scalar_double


@case("scalar_half", needs=("cl_khr_fp16",))
def _half() -> object:
    return scalar_half


@case("scalar_conversions")
def _conv() -> object:
    return scalar_conversions
