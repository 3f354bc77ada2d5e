"""Every work-group size the device runs for a hand-written kernel is accepted for the same
kernel written in clpy (issue 18).

NVIDIA's driver reports CL_KERNEL_WORK_GROUP_SIZE = 256 for every kernel yet runs 512 and 1,024
work-items (scripts/nv_wg_size_diag.py); clpy used to refuse those launches. Now the launcher
checks the device's limits there and lets the driver decide, and a work-group the driver
refuses is a ``ValueError`` naming the local size, with the arguments untouched."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, int32, uint32
from clpy.runtime.api import get_device

C_HISTO = r"""
__kernel void histo_c(__global const uint *x, int n, __global uint *bins)
{
    __local uint h[256];
    for (int i = get_local_id(0); i < 256; i += get_local_size(0)) h[i] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = get_global_id(0); i < n; i += get_global_size(0))
        atomic_inc(&h[x[i] & 255]);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = get_local_id(0); i < 256; i += get_local_size(0))
        atomic_add(&bins[i], h[i]);
}
"""


@clpy.kernel
def histo(x: Global[uint32], n: int32, bins: Global[uint32]):
    h = clpy.local_array(uint32, 256)
    for i in range(clpy.get_local_id(0), 256, clpy.get_local_size(0)):
        h[i] = 0
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    for i in range(clpy.get_global_id(0), n, clpy.get_global_size(0)):
        clpy.atomic_inc(h, x[i] & 255)
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    for i in range(clpy.get_local_id(0), 256, clpy.get_local_size(0)):
        clpy.atomic_add(bins, i, h[i])


def _hand_runs(cl_context: Any, cl_queue: Any, knl: Any, x: np.ndarray, size: int) -> bool:
    import pyopencl as cl

    mf = cl.mem_flags
    xb = cl.Buffer(cl_context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    bins = np.zeros(256, np.uint32)
    bb = cl.Buffer(cl_context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=bins)
    try:
        knl(cl_queue, (size * 4,), (size,), xb, np.int32(x.size), bb).wait()
    except cl.Error:
        return False
    cl.enqueue_copy(cl_queue, bins, bb)
    return bool((bins == np.bincount(x & 255, minlength=256)).all())


def test_clpy_accepts_every_size_the_hand_written_kernel_runs(
    cl_device: Any, cl_context: Any, cl_queue: Any
) -> None:
    import pyopencl as cl

    knl = cl.Program(cl_context, C_HISTO).build().histo_c
    x = np.random.default_rng(3).integers(0, 1 << 20, 50_000).astype(np.uint32)
    want = np.bincount(x & 255, minlength=256)
    dev = get_device(cl_device)
    limit = min(cl_device.max_work_group_size, 1024)
    ran = []
    for size in (64, 128, 256, 512, 1024):
        if size > limit or not _hand_runs(cl_context, cl_queue, knl, x, size):
            continue
        ran.append(size)
        bins = np.zeros(256, np.uint32)
        histo[(size * 4,), (size,)](x, np.int32(x.size), bins, device=dev)
        np.testing.assert_array_equal(bins, want, err_msg=f"local size {size}")
    assert 256 in ran or limit < 256, ran


def test_driver_refusal_names_the_local_size(cl_device: Any, monkeypatch: Any) -> None:
    import pyopencl as cl

    dev = get_device(cl_device)
    x = np.arange(1024, dtype=np.uint32)
    bins = np.zeros(256, np.uint32)
    histo[(256,), (64,)](x, np.int32(x.size), bins, device=dev)  # build the plan
    record = cl._cl._ErrorRecord(
        "clEnqueueNDRangeKernel failed",
        cl.status_code.INVALID_WORK_GROUP_SIZE,
        "clEnqueueNDRangeKernel",
    )

    def refuse(*args: Any, **kw: Any) -> Any:
        raise cl.LogicError(record)

    monkeypatch.setattr(cl, "enqueue_nd_range_kernel", refuse)
    before = bins.copy()
    with pytest.raises(ValueError, match=r"histo\[\.\.\.\].*64 work-items.*untouched"):
        histo[(256,), (64,)](x, np.int32(x.size), bins, device=dev)
    np.testing.assert_array_equal(bins, before)
