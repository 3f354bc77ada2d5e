"""``min``/``max`` of 32- and 64-bit integers as conditional expressions on NVIDIA (quirk
``min:int`` ...; clpy/emit/lower_minmax.py): the text, what keeps the built-in, and the values
(spec §6.13.3: ``min(x, y)`` is ``y < x ? y : x``) on the test device with the quirk forced,
against the simulator, at every type's extremes."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import clpy
import clpy.vectors as V
from clpy import Global, int16, int32, int64, uint32, uint64
from clpy.runtime.quirks import device_target
from tests.sim_vs_device import both
from tests.test_fuzz_triage_s5 import _forced as _forced_target
from tests.test_fuzz_triage_s5 import _nvidia_info


def _nvidia_lowered() -> Any:
    return device_target(_nvidia_info()).info["lower_builtins"]


@clpy.kernel
def stencil_min(prev: Global[int32], out: Global[int32], n: int32):
    tx = clpy.get_global_id(0)
    w = max(tx - 1, 0)
    e = min(tx + 1, n - 1)
    out[tx] = min(min(prev[w], prev[tx]), prev[e])


@clpy.kernel
def mixed_min(a: Global[int32], b: Global[int64], c: Global[V.int4], d: Global[int16]):
    i = clpy.get_global_id(0)
    a[i] = min(clpy.atomic_add(a, 0), 5)  # evaluated once: the built-in
    b[i] = max(b[i] * 3, int64(7))  # a product: the built-in
    c[i] = min(c[i], V.int4(2))  # a vector: the built-in
    d[i] = min(d[i], int16(3))  # 16 bits: computed in int (lower_narrow.py)


def _source(k: Any) -> str:
    from dataclasses import replace

    tgt = device_target(_nvidia_info())
    return str(k.source_for(replace(tgt, name="nv-minmax-text"), line_directives=False))


def test_quirk_lists_wide_minmax() -> None:
    assert {"min:int", "max:uint", "min:long", "max:ulong"} <= _nvidia_lowered()


def test_conditional_text() -> None:
    src = _source(stencil_min)
    assert "int w = ((tx - 1) < 0 ? 0 : (tx - 1));" in src, src
    assert "(prev[tx] < prev[w] ? prev[tx] : prev[w])" in src, src
    assert "min(" not in src.split("{", 1)[1] and "max(" not in src.split("{", 1)[1], src


def test_other_calls_keep_builtin() -> None:
    body = _source(mixed_min).split("{", 1)[1]
    assert "min(atomic_add(" in body, body
    assert "max(b[i] * 3L, 7L)" in body or "max(b[i] * 3" in body, body
    assert "min(c[i]," in body, body
    assert "(short)min((int)d[i]" in body, body


_EXTREMES = {
    np.int32: [-(2**31), -(2**31) + 1, -1, 0, 1, 2**31 - 2, 2**31 - 1],
    np.uint32: [0, 1, 2**31 - 1, 2**31, 2**32 - 2, 2**32 - 1],
    np.int64: [-(2**63), -(2**63) + 1, -(2**31), -1, 0, 1, 2**63 - 1],
    np.uint64: [0, 1, 2**32, 2**63, 2**64 - 2, 2**64 - 1],
}
_TYPES = {np.int32: int32, np.uint32: uint32, np.int64: int64, np.uint64: uint64}


def _minmax_kernel(t: Any) -> Any:
    @clpy.kernel
    def minmax_pairs(x: Global[t], y: Global[t], lo: Global[t], hi: Global[t]):
        i = clpy.get_global_id(0)
        lo[i] = min(x[i], y[i])
        hi[i] = max(min(x[i], y[i] + y[i] - y[i]), x[i])

    return minmax_pairs


@pytest.mark.parametrize("dt", list(_EXTREMES), ids=lambda d: np.dtype(d).name)
def test_values_forced(cl_device: Any, dt: Any) -> None:
    vals = np.array(_EXTREMES[dt], dtype=dt)
    x = np.repeat(vals, vals.size)
    y = np.tile(vals, vals.size)
    n = x.size
    k = _minmax_kernel(_TYPES[dt])
    want_lo = np.minimum(x, y)
    want_hi = np.maximum(np.minimum(x, y), x)
    zeros = np.zeros(n, dt)
    sim, dev = both(k, (n,), None, x, y, zeros, zeros, cl_device=cl_device)
    for got in (sim, dev):
        np.testing.assert_array_equal(got[2], want_lo)
        np.testing.assert_array_equal(got[3], want_hi)
    d, tgt = _forced_target(cl_device, f"forced-nv-minmax-{np.dtype(dt).name}")
    tgt = type(tgt)(**{**tgt.__dict__, "info": {**tgt.info, "lower_builtins": _nvidia_lowered()}})
    assert "min(" not in k.source_for(tgt, line_directives=False).split("{", 1)[1]
    lo, hi = zeros.copy(), zeros.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k[(n,), None](x, y, lo, hi, device=d.variant(target=tgt))
    np.testing.assert_array_equal(lo, want_lo)
    np.testing.assert_array_equal(hi, want_hi)
