"""``clpy.to_device`` / ``empty`` / ``zeros`` given a pyopencl ``CommandQueue`` make the array in
that queue's context, so a launch with ``device=queue`` uses it in place (before, the array
went to clpy's own context for that device and the launch refused it)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, float32


@clpy.kernel
def _inc(x: Global[float32]):
    i = clpy.get_global_id(0)
    x[i] += 1.0


def test_device_arrays_on_a_users_queue(cl_device: Any) -> None:
    import pyopencl as cl

    ctx = cl.Context([cl_device])
    q = cl.CommandQueue(ctx)
    x = clpy.to_device(np.arange(8, dtype=np.float32), device=q)
    z = clpy.zeros(8, np.float32, device=q)
    e = clpy.empty(8, np.float32, device=q)
    for a in (x, z, e):
        assert a.cl_array.context == ctx and a.cl_array.queue == q
    _inc[(8,), (8,)](x, device=q)
    _inc[(8,), (8,)](z, device=q)
    np.testing.assert_array_equal(x.get(), np.arange(8, dtype=np.float32) + 1)
    np.testing.assert_array_equal(z.get(), np.ones(8, np.float32))


def test_device_arrays_by_name_use_clpys_queue(cl_device: Any) -> None:
    dev = clpy.get_device(cl_device)
    x = clpy.to_device(np.zeros(4, np.float32), device=dev)
    assert x.cl_array.queue == dev.queue


@pytest.mark.parametrize("what", ["zeros", "empty", "to_device"])
def test_a_device_out_of_memory_is_a_memory_error_naming_the_array(
    cl_device: Any, monkeypatch: Any, what: str
) -> None:
    """NVIDIA allocates at first use, so running out of device memory surfaced as the fill
    kernel's or a copy's error (``clEnqueueNDRangeKernel failed: MEM_OBJECT_ALLOCATION_FAILURE``
    for a 45 GiB clpy.zeros on an H100); it is a MemoryError naming the call, the array and the
    device. Other OpenCL errors pass through unchanged."""
    import pyopencl as cl
    import pyopencl.array as cla

    dev = clpy.get_device(cl_device)

    def no_memory(*a: Any, **k: Any) -> Any:
        raise cl.MemoryError("clEnqueueNDRangeKernel", cl.status_code.MEM_OBJECT_ALLOCATION_FAILURE)

    monkeypatch.setattr(cla, "zeros" if what == "zeros" else "empty", no_memory)
    with pytest.raises(
        MemoryError, match=rf"clpy\.{what}: an array of shape \(3, 4\) and dtype float32"
    ):
        if what == "to_device":
            clpy.to_device(np.ones((3, 4), np.float32), dev)
        else:
            getattr(clpy, what)((3, 4), np.float32, dev)

    def other(*a: Any, **k: Any) -> Any:
        raise cl.LogicError("clCreateBuffer", cl.status_code.INVALID_BUFFER_SIZE)

    monkeypatch.setattr(cla, "zeros" if what == "zeros" else "empty", other)
    with pytest.raises(cl.LogicError):
        if what == "to_device":
            clpy.to_device(np.ones((3, 4), np.float32), dev)
        else:
            getattr(clpy, what)((3, 4), np.float32, dev)
