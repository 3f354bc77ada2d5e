"""Fuzzer-found device bugs with NaN, kept as a corpus (see tests/test_fuzz_regressions.py):
saturating conversions of NaN (PoCL and NVIDIA) and rounding functions of a NaN PoCL's
compiler can see. clpy spells both out for the devices that need it (quirks); the tests check
clpy's result on the simulator and the device, and the driver's own raw result.

Found by the fuzzer on PoCL 3.0 (pthread, LLVM): the simulator follows the spec, PoCL does
not. Where clpy cannot avoid the bug, clpy.fuzz.campaign.KNOWN_POCL_BUGS keeps the fuzzer
from generating it for PoCL, and the test checks the simulator and reports PoCL's deviation
as an expected failure (it passes once PoCL is fixed). Where clpy avoids it (a lowering for
the device, in the quirk table), the test checks that clpy's result is the spec's."""

from __future__ import annotations

import numpy as np
import pytest

import clpy
import clpy.vectors as V
from clpy import Global, float32, float64, int32, int64, uint32, uint64
from tests.sim_vs_device import both as _both
from tests.sim_vs_device import run_raw


@clpy.kernel
def nan_to_int_sat(x: Global[float32], o: Global[int64], u: Global[uint64], w: Global[int32]):
    # seeds 3012, 9011: a saturating conversion of NaN gives 0 (spec §6.2.3.3); PoCL gives
    # INT_MIN / LONG_MIN for convert_int_sat* and convert_long_sat* (scalars and vectors, from
    # float and double) and 2**63 for convert_ulong_sat* (uint, uchar and char are right), and
    # NVIDIA's driver (580, H100) is wrong too. clpy spells these conversions out for both
    # (quirks: lower_sat_conversions, clpy/emit/lower_convert.py); the raw drivers' results
    # are documented by tests/test_fuzz_conversions.py.
    i = clpy.get_global_id(0)
    o[i] = clpy.convert_long_sat_rte(x[i])
    u[i] = clpy.convert_ulong_sat_rte(x[i])
    w[i] = clpy.convert_int_sat(x[i])


def test_nan_to_saturated_int_through_clpy(cl_device):
    x = np.array([np.nan, 1.5, -np.inf, np.inf], np.float32)
    sim, dev = _both(
        nan_to_int_sat,
        (4,),
        (1,),
        x,
        np.zeros(4, np.int64),
        np.zeros(4, np.uint64),
        np.zeros(4, np.int32),
        cl_device=cl_device,
    )
    np.testing.assert_array_equal(sim[1], [0, 2, -(2**63), 2**63 - 1])
    np.testing.assert_array_equal(sim[2], [0, 2, 0, 2**64 - 1])
    np.testing.assert_array_equal(sim[3], [0, 1, -(2**31), 2**31 - 1])
    for a, b in zip(sim[1:], dev[1:]):
        np.testing.assert_array_equal(a, b)


@clpy.kernel
def round_of_a_constant_nan(o: Global[float32]):
    # seed 800109 (a local sim-vs-PoCL run): ceil/floor/trunc/round of a NaN PoCL's compiler
    # can see (here as_float(0xFFFFFFFF); in the fuzzed kernel convert_uint_sat_rtp(1e30)
    # reinterpreted) give garbage that changes from build to build (rint, fabs, fmod ... are
    # right; a NaN known only at run time is right). clpy guards them for PoCL (quirks,
    # clpy/emit/lower_nan.py).
    i = clpy.get_global_id(0)
    nan = clpy.as_float(uint32(0xFFFFFFFF))
    o[4 * i] = clpy.ceil(nan)
    o[4 * i + 1] = clpy.floor(nan)
    o[4 * i + 2] = clpy.trunc(V.float2(nan, float32(2.5))).x
    o[4 * i + 3] = clpy.round(nan)


def test_rounding_functions_of_a_constant_nan(cl_device):
    sim, dev = _both(round_of_a_constant_nan, (2,), (1,), np.zeros(8, np.float32),
                     cl_device=cl_device)  # fmt: skip
    assert np.isnan(sim[0]).all()
    assert np.isnan(dev[0]).all(), dev[0]


@clpy.kernel
def round_of_a_folded_double_nan(o: Global[float64], w: Global[int32]):
    # seeds 311374, 311802 (the three-way run, 09:36 UTC, before the guard): the same PoCL bug
    # in double, the NaN reaching the call through a variable, as_double(v) with v = -1, or
    # as_double(0xFFFFFFFFFFFFFFF8): round gave a number (1.0 >= it held), floor a denormal.
    i = clpy.get_global_id(0)
    v = int64(-1)
    d = clpy.as_double(v)
    o[3 * i] = clpy.round(d)
    o[3 * i + 1] = clpy.floor(clpy.as_double(uint64(18446744073709551608)))
    o[3 * i + 2] = clpy.rint(d)
    w[i] = clpy.work_group_all(float64(1) >= clpy.round(d))


def test_rounding_functions_of_a_folded_double_nan(cl_device):
    sim, dev = _both(round_of_a_folded_double_nan, (8,), (4,), np.zeros(24, np.float64),
                     np.ones(8, np.int32), cl_device=cl_device)  # fmt: skip
    assert np.isnan(sim[0]).all() and not sim[1].any()
    assert np.isnan(dev[0]).all(), dev[0]
    np.testing.assert_array_equal(dev[1], 0)


RAW_NAN_ROUND = (
    "__kernel void k(__global uint* o) {\n"
    "    o[0] = as_uint(ceil(as_float(0xFFFFFFFFu)));\n"
    "    o[1] = as_uint(floor(nan(1u)));\n}"
)


def test_raw_rounding_functions_of_a_constant_nan(cl_context, cl_queue):
    """The driver's own: PoCL 3.0 gives garbage (the guard above avoids it)."""
    o = np.zeros(2, np.uint32)
    run_raw(cl_context, cl_queue, RAW_NAN_ROUND, "k", (1,), None, [], [o])
    if not np.isnan(o.view(np.float32)).all():
        platform = cl_context.devices[0].platform.name
        assert "portable computing language" in platform.lower(), o
        pytest.xfail(f"PoCL bug: ceil/floor of a constant NaN give {[hex(int(v)) for v in o]}")
