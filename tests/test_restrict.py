"""Aliasing-aware launches (issue 18): a launch whose buffers reach distinct memory runs the
kernel with ``restrict`` pointers (C99 6.7.3.1: the compiler may keep loads across stores to
other buffers, and NVIDIA uses read-only loads for them); a launch that passes one device array
for two parameters runs a variant without it, and both compute what the program says."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, float32
from clpy.runtime.api import get_device


@clpy.kernel
def twice_then_add(x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    y[i] = x[i] * 2.0
    z = x[i] + 1.0  # reads y's store when x and y are one array
    y[i] = y[i] + z


def _plan_sources(dev: Any) -> list[str]:
    return [
        v.source
        for key, p in twice_then_add.launches.plans.items()
        if key[1] is dev
        for v in p._variants.values()
    ]


def test_distinct_buffers_get_restrict(cl_device: Any) -> None:
    dev = get_device(cl_device)
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, np.float32)
    twice_then_add[16](x, y, device=dev)  # NumPy arguments: fresh, distinct uploads
    np.testing.assert_array_equal(y, 3 * x + 1)
    dx, dy = clpy.to_device(x, dev), clpy.zeros_like(clpy.to_device(x, dev))
    twice_then_add[16](dx, dy, device=dev)
    np.testing.assert_array_equal(dy.get(), 3 * x + 1)
    (main,) = _plan_sources(dev)
    assert "__global const float* restrict x" in main
    assert "__global float* restrict y" in main
    assert "* restrict" not in twice_then_add.source  # the portable text promises nothing


@pytest.mark.parametrize("where", ["sim", "opencl"])
def test_one_array_for_two_parameters(where: str, request: pytest.FixtureRequest) -> None:
    dev = get_device("sim" if where == "sim" else request.getfixturevalue("cl_device"))
    x = np.arange(16, dtype=np.float32)
    d = clpy.to_device(x, dev)
    twice_then_add[16](d, d, device=dev)
    np.testing.assert_array_equal(d.get(), 4 * x + 1)  # y = 2x; z = 2x + 1; y = 4x + 1
    if where == "opencl":
        sources = _plan_sources(dev)
        aliased = [s for s in sources if "* restrict" not in s]
        assert aliased, sources
        # and the distinct-buffer launch still runs the restrict variant
        e = clpy.to_device(x, dev)
        out = clpy.zeros_like(e)
        twice_then_add[16](e, out, device=dev)
        np.testing.assert_array_equal(out.get(), 3 * x + 1)


@clpy.kernel
def read_twice(x: Global[float32], w: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    y[i] = x[i] + w[i]


def test_read_only_duplicates_keep_restrict(cl_device: Any) -> None:
    dev = get_device(cl_device)
    x = clpy.to_device(np.arange(8, dtype=np.float32), dev)
    y = clpy.zeros_like(x)
    read_twice[8](x, x, y, device=dev)  # restrict on two read-only pointers to one array
    np.testing.assert_array_equal(y.get(), 2 * np.arange(8))
    srcs = [
        v.source
        for key, p in read_twice.launches.plans.items()
        if key[1] is dev
        for v in p._variants.values()
    ]
    assert len(srcs) == 1 and "restrict x" in srcs[0] and "restrict w" in srcs[0]


@pytest.mark.parametrize("where", ["sim", "opencl"])
def test_one_numpy_array_for_two_parameters_is_one_memory(
    where: str, request: pytest.FixtureRequest
) -> None:
    dev = get_device("sim" if where == "sim" else request.getfixturevalue("cl_device"))
    x = np.arange(16, dtype=np.float32)
    a = x.copy()
    twice_then_add[16](a, a, device=dev)  # as a DeviceArray passed twice
    np.testing.assert_array_equal(a, 4 * x + 1)
    b = x.copy()
    twice_then_add[16](b, b[:], device=dev)  # another view of the same memory
    np.testing.assert_array_equal(b, 4 * x + 1)


@pytest.mark.parametrize("where", ["sim", "opencl"])
def test_overlapping_numpy_arrays_are_refused(where: str, request: pytest.FixtureRequest) -> None:
    dev = get_device("sim" if where == "sim" else request.getfixturevalue("cl_device"))
    x = np.arange(17, dtype=np.float32)
    before = x.copy()
    with pytest.raises(ValueError, match="'x' and 'y' are different arrays that overlap"):
        twice_then_add[16](x[1:], x[:-1], device=dev)
    np.testing.assert_array_equal(x, before)
    y = np.zeros(16, np.float32)
    read_twice[16](x[1:], x[:-1], y, device=dev)  # overlapping reads are fine
    np.testing.assert_array_equal(y, x[1:] + x[:-1])
