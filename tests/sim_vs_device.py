"""The two runs a fuzz regression compares: a clpy kernel on the simulator and, through clpy,
on an OpenCL device (tests/test_fuzz_*.py)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np


def both(
    k: Any, gsize: Any, lsize: Any, *arrays: np.ndarray, cl_device: Any = None
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """``k`` launched on copies of ``arrays``, once on the simulator and once on ``cl_device``
    (its warnings silenced): the simulator's arrays and the device's."""
    import pyopencl as cl

    sim = [a.copy() for a in arrays]
    dev = [a.copy() for a in arrays]
    k[gsize, lsize](*sim, device="sim")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k[gsize, lsize](*dev, device=cl.Context([cl_device]))
    return sim, dev
