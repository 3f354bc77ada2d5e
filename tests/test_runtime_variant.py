"""``Device.variant(exact_div_sqrt=False, queue=q)``: a hand-written host's float build rules
and a queue of the caller's (issue 18: timing clpy's kernels under the originals' rules)."""

from __future__ import annotations

from typing import Any

import numpy as np

import clpy
from clpy import Global, float32
from clpy.runtime.api import get_device


@clpy.kernel
def rdiv(x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    y[i] = 1.0 / clpy.sqrt(x[i])


def test_variant_builds_without_exact_div_sqrt_on_a_given_queue(cl_device: Any) -> None:
    import pyopencl as cl

    dev = get_device(cl_device)
    q = cl.CommandQueue(dev.context, cl_device, cl.command_queue_properties.PROFILING_ENABLE)
    v = dev.variant(exact_div_sqrt=False, queue=q)
    assert v.target is not None and v.target.info["correctly_rounded_divide_sqrt"] is False
    assert v.queue is q and v.context == dev.context
    x = clpy.to_device(np.arange(1, 65, dtype=np.float32), v)
    assert x.cl_array.queue is q
    y = clpy.zeros_like(x)
    h = rdiv[64](x, y, device=v, wait=False)
    assert h is not None
    h.wait()
    assert h.event.profile.end >= h.event.profile.start  # ran on the profiling queue
    np.testing.assert_allclose(y.get(), 1 / np.sqrt(np.arange(1, 65)), rtol=1e-6)
    plans = [p for key, p in rdiv.launches.plans.items() if key[1] is v]
    assert plans and all(
        "-cl-fp32-correctly-rounded-divide-sqrt" not in p.options.split() for p in plans
    )
    # the device itself keeps its exact build where it reports exact / and sqrt
    exact = bool(cl_device.single_fp_config & cl.device_fp_config.CORRECTLY_ROUNDED_DIVIDE_SQRT)
    assert dev.variant(exact_div_sqrt=True).target.info["correctly_rounded_divide_sqrt"] is exact
