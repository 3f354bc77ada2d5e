"""Edge values of the conversions and 64-bit integer built-ins the fuzzer saw drivers get
wrong, and the spec's saturating conversion computed exactly: shared by
tests/test_fuzz_conversions.py and scripts/gpu_fuzz_diag.py (the drivers' raw results on a GPU
host), so both check the same values.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

INTS: dict[str, type[np.integer[Any]]] = {
    "char": np.int8,
    "uchar": np.uint8,
    "short": np.int16,
    "ushort": np.uint16,
    "int": np.int32,
    "uint": np.uint32,
    "long": np.int64,
    "ulong": np.uint64,
}
ROUNDINGS = ("", "_rte", "_rtz", "_rtp", "_rtn")
# float/double sources: around every destination's bounds, halves (rounding modes), NaN, ±inf
EDGES = [2.0**63, 2.0**64, -1.0, -0.5, 0.99, -0.99, 0.5, 1.5, 2.5, -1.5, -2.5, 1e30, -1e30,
         math.inf, -math.inf, math.nan, -(2.0**63), 2.0**63 - 2**40, 2.0**31, -(2.0**31),
         2.0**31 - 0.5, 2.0**32, 4294967295.5, 127.5, -128.5, 255.5, 32767.5, 65535.5, -0.0,
         1e-30]  # fmt: skip
I64 = [-(2**63), -(2**63) + 1, -2, -1, 0, 1, 2, 2**31, -(2**31), 2**32, 2**62, 2**63 - 1,
       2**63 - 2, 12345678901234]  # fmt: skip
U64 = [0, 1, 2, 2**63, 2**64 - 1, 2**64 - 2, 2**32, 2**63 - 1, 3, 12345678901234567890]


def limits(dest: str) -> tuple[int, int]:
    info = np.iinfo(INTS[dest])
    return int(info.min), int(info.max)


def spec_sat(x: float, dest: str, rnd: str) -> int:
    """The spec's value of ``convert_<dest>_sat<rnd>(x)`` (OpenCL C 2.0 §6.2.3.3: NaN is 0,
    out-of-range values saturate), computed exactly."""
    lo, hi = limits(dest)
    if math.isnan(x):
        return 0
    if math.isinf(x):
        return hi if x > 0 else lo
    f = Fraction(x)
    r = {
        "_rte": round(f),  # Fraction rounds half to even
        "_rtp": math.ceil(f),
        "_rtn": math.floor(f),
    }.get(rnd, math.trunc(f))
    return min(max(int(r), lo), hi)
