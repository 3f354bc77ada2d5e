"""NumPy floating-point warnings stay off in the simulator's worker threads too:
``np.errstate`` is per thread, so each batch sets it (sim/launch.py), not only the serial
loop. A float kernel computing NaN (0/0 is NaN in OpenCL C, no error) warns nothing."""

from __future__ import annotations

import warnings

import numpy as np

import clpy
import clpy_sim as sim
from clpy import Global, float32


@clpy.kernel
def self_ratio(x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    y[i] = x[i] / x[i]


def test_threaded_nan_division_emits_no_runtime_warning() -> None:
    n = 64 * 1024
    x = np.zeros(n, np.float32)
    y = np.ones(n, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with sim.config(threads=2, max_lanes=4096):
            sim.launch(self_ratio.specialize().function, (n,), (64,), [x, y])
    assert np.isnan(y).all()
