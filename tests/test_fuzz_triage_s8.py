"""The mismatch of the session-8 three-way fuzz run (sim vs PoCL vs NVIDIA H100, driver 580;
5,949 kernels from seed 380000), reduced and kept as a differential case.

- 380415 (NVIDIA): ``v1 = convert_ushort_sat(in_short[1])``, then a guarded division
  ``safe_div(as_ushort((short)-1), v1)`` (``if (b == 0) return a; return a / b;``) gave 65535
  for ``in_short[1] == 7`` instead of 65535 // 7 = 9362: the zero branch taken. The saturation
  was clpy's NVIDIA helper ``convert_ushort(x < (short)0 ? 0 : x)``; of 7 spellings of the
  conversion x 4 of the division, straight-line and in a loop, under CL1.2 and CL2.0, only that
  helper was wrong (scripts/gpu_udiv_diag.py, benchmarks/results/nvidia_diag/
  udiv_h100_s8.json). A narrow source is now compared in ``int`` first (lower_convert.py
  ``_int_helper``), the diagnosis's ``int_ternary`` spelling.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

import clpy
from clpy import Global, int16, int32, uint16
from clpy.runtime.quirks import device_target
from tests.sim_vs_device import both
from tests.test_fuzz_triage_s5 import _forced as _forced_target
from tests.test_fuzz_triage_s5 import _nvidia_info


@clpy.func
def safe_div_ushort(a: uint16, b: uint16) -> uint16:
    if b == 0:
        return a
    return uint16(a // b)


@clpy.kernel
def seed_380415(in_short: Global[int16], out_ushort: Global[uint16]):
    lin = clpy.get_global_linear_id()
    v1: uint16 = uint16(0)
    for _ in range(int32(1)):
        v1 = clpy.convert_ushort_sat(in_short[int32(1)])
        v1 = safe_div_ushort(clpy.as_ushort(int16(-1)), v1)
    out_ushort[lin] = v1


def test_saturated_ushort_divisor(cl_device: Any) -> None:
    tgt = device_target(_nvidia_info())
    src = seed_380415.source_for(tgt, line_directives=False)
    assert "    int w = (int)x;\n    return convert_ushort(w < 0 ? 0 : w);" in src, src
    d, forced = _forced_target(cl_device, "forced-nvidia-sat-int", **tgt.info)
    for x in (7, 0, 1, -5, 2, 255, 32767, -32768):
        inp = np.array([0, x] * 64, np.int16)
        v = max(x, 0)
        want = np.full(128, 65535 if v == 0 else 65535 // v, np.uint16)
        sim, dev = both(
            seed_380415, (128,), (64,), inp, np.zeros(128, np.uint16), cl_device=cl_device
        )
        np.testing.assert_array_equal(sim[1], want)
        np.testing.assert_array_equal(dev[1], want)
        o = np.zeros(128, np.uint16)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            seed_380415[(128,), (64,)](inp, o, device=d.variant(target=forced))
        np.testing.assert_array_equal(o, want)
