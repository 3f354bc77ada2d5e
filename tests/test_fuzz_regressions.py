"""Kernels reduced by the differential fuzzer (``python -m clpy.fuzz``), kept as a corpus:
each ran differently (or failed) on the simulator and on PoCL before its fix. Each is run on
both and compared bit for bit."""

from __future__ import annotations

import warnings

import numpy as np

import clpy
from clpy import Global, int16, uint8


@clpy.kernel
def narrow_select(o: Global[int16], u: Global[uint8]):
    # seed 102: C promotes the char/short operands of ?: to int, so min(short, c ? s : s)
    # did not build on PoCL ("call to min is ambiguous") and clz(c ? uc : uc) counted the
    # zeros of an int. The emitter now casts a narrow ?: to its type.
    i = clpy.get_global_id(0)
    v = o[i]
    w = u[i]
    o[i] = min(int16(0), (v if (int16(255) == v) else v)) + min(v, v if v > 0 else v)
    u[i] = clpy.clz(w if w > 1 else w) + clpy.popcount(w if w > 3 else uint8(0))


def _both(k, gsize, lsize, *arrays, cl_device=None):
    import pyopencl as cl

    sim = [a.copy() for a in arrays]
    dev = [a.copy() for a in arrays]
    k[gsize, lsize](*sim, device="sim")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k[gsize, lsize](*dev, device=cl.Context([cl_device]))
    return sim, dev


def test_narrow_select_is_cast_to_its_type(cl_device):
    src = narrow_select.source_for("opencl-c-1.2", line_directives=False)
    assert "(short)(v > 0 ? v : v)" in src and "clz((uchar)(w > 1 ? w : w))" in src
    rng = np.random.default_rng(102)
    o = rng.integers(-(2**15), 2**15, 64).astype(np.int16)
    u = rng.integers(0, 256, 64).astype(np.uint8)
    sim, dev = _both(narrow_select, (64,), (16,), o, u, cl_device=cl_device)
    for a, b in zip(sim, dev):
        np.testing.assert_array_equal(a, b)
    want_u = np.array([8 - int(x).bit_length() for x in u]) + np.array(
        [bin(int(x)).count("1") if x > 3 else 0 for x in u]
    )
    np.testing.assert_array_equal(sim[1], want_u.astype(np.uint8))
