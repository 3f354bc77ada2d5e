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


# ---------------------------------------------------------------- views of one DeviceArray


def _align(dev: Any) -> int:
    """float32 elements per base-address alignment: views starting there are sub-buffers."""
    return 1 if dev.is_sim else dev.cl_device.mem_base_addr_align // 32


@pytest.mark.parametrize("where", ["sim", "opencl"])
def test_disjoint_views_keep_restrict(where: str, request: pytest.FixtureRequest) -> None:
    dev = get_device("sim" if where == "sim" else request.getfixturevalue("cl_device"))
    a = _align(dev)
    h = np.arange(3 * a, dtype=np.float32)
    d = clpy.to_device(h, dev)
    x, y = d[0:a], d[2 * a : 3 * a]
    assert not (x.staged or y.staged)  # sub-buffers of one buffer, bound in place
    twice_then_add[a](x, y, device=dev)
    want = h.copy()
    want[2 * a :] = 3 * h[:a] + 1
    np.testing.assert_array_equal(d.get(), want)
    if where == "opencl":
        assert _last_noalias(twice_then_add, dev) is None  # the main variant
        src = _plan_of(twice_then_add, dev).source
        assert "restrict x" in src and "restrict y" in src


@pytest.mark.parametrize("where", ["sim", "opencl"])
def test_overlapping_views_get_the_aliasing_variant(
    where: str, request: pytest.FixtureRequest
) -> None:
    dev = get_device("sim" if where == "sim" else request.getfixturevalue("cl_device"))
    a = _align(dev)
    h = np.arange(3 * a, dtype=np.float32)
    d = clpy.to_device(h, dev)
    w = clpy.to_device(np.full(2 * a, 10, np.float32), dev)
    # y is the second half of x: y[i] and x[i + a] are one element; w is other memory
    read_twice[a](d[0 : 2 * a], w, d[a : 2 * a], device=dev)
    # only w keeps restrict, but none on a device that takes one restrict for all (NVIDIA)
    keep = frozenset() if _all_or_none(dev) else frozenset({"w"})
    if where == "opencl":
        assert _last_noalias(read_twice, dev) == keep
    want = h.copy()
    want[a : 2 * a] = h[:a] + 10
    np.testing.assert_array_equal(d.get(), want)
    read_twice[a](d, w, d[2 * a : 3 * a], device=dev)  # the whole array and a view of it
    if where == "opencl":
        assert _last_noalias(read_twice, dev) == keep
    want[2 * a :] = want[:a] + 10
    np.testing.assert_array_equal(d.get(), want)
    # x and y the same elements through two views: y = 2x; z = 2x + 1; y = 4x + 1, which a
    # restrict variant could compute as 3x + 1 (x[i] kept from before the store to y[i])
    e = clpy.to_device(h, dev)
    twice_then_add[a](e[0 : 2 * a], e[0:a], device=dev)
    if where == "opencl":
        assert _last_noalias(twice_then_add, dev) == frozenset()
    want = h.copy()
    want[:a] = 4 * h[:a] + 1
    np.testing.assert_array_equal(e.get(), want)
    if where == "opencl":
        src = next(
            v.source
            for key, p in read_twice.launches.plans.items()
            if key[1] is dev
            for k, v in p._variants.items()
            if k == keep
        )
        assert ("restrict w" in src) == bool(keep)
        assert "restrict x" not in src and "restrict y" not in src


def _all_or_none(dev: Any) -> bool:
    return not dev.is_sim and bool(dev.target.info.get("restrict_all_or_none"))


def test_all_or_none_restrict_where_the_device_needs_it(cl_device: Any) -> None:
    """NVIDIA (driver 580) took a kernel with one restrict pointer for one whose other pointers
    are distinct too: `y[i] = 5; out[i] = x[i + k]` over overlapping x and y read 0 with only
    `out` restrict (scripts/gpu_alias_diag.py). With the quirk forced here, an aliasing launch
    runs the variant without any restrict, and the overlap reads the store."""
    from dataclasses import replace

    from clpy.runtime.quirks import device_target
    from tests.test_fuzz_triage_s5 import _nvidia_info

    assert device_target(_nvidia_info()).info["restrict_all_or_none"]
    base = get_device(cl_device)
    tgt = replace(base.target, name="forced-all-or-none",
                  info={**base.target.info, "restrict_all_or_none": True})  # fmt: skip
    dev = base.variant(target=tgt)
    a = _align(dev)
    h = np.arange(3 * a, dtype=np.float32)
    d = clpy.to_device(h, dev)
    w = clpy.to_device(np.full(2 * a, 10, np.float32), dev)
    read_twice[a](d[0 : 2 * a], w, d[a : 2 * a], device=dev)
    assert _last_noalias(read_twice, dev) == frozenset()
    want = h.copy()
    want[a : 2 * a] = h[:a] + 10
    np.testing.assert_array_equal(d.get(), want)
    e = clpy.to_device(np.ones(a, np.float32), dev)
    read_twice[a](e, w, clpy.to_device(np.zeros(a, np.float32), dev), device=dev)
    assert _last_noalias(read_twice, dev) is None  # nothing aliases: every buffer restrict


@pytest.mark.parametrize("where", ["sim", "opencl"])
def test_overlapping_read_only_views_keep_restrict(
    where: str, request: pytest.FixtureRequest
) -> None:
    dev = get_device("sim" if where == "sim" else request.getfixturevalue("cl_device"))
    a = _align(dev)
    h = np.arange(3 * a, dtype=np.float32)
    d = clpy.to_device(h, dev)
    out = clpy.zeros((a,), np.float32, dev)
    read_twice[a](d[0 : 2 * a], d[a : 3 * a], out, device=dev)  # overlapping reads only
    np.testing.assert_array_equal(out.get(), h[:a] + h[a : 2 * a])
    if where == "opencl":
        assert _last_noalias(read_twice, dev) is None


@clpy.kernel
def shift_add(x: Global[float32], y: Global[float32]):
    # every read before every write of the work-group (one work-group: the barrier orders
    # global memory between its work-items, OpenCL C 2.0 §1.13.8), so y overlapping x
    # gets NumPy's y[:] = x[:-1] + x[1:]; without the barrier it would be a data race
    i = clpy.get_global_id(0)
    s = x[i] + x[i + 1]
    clpy.barrier(clpy.CLK_GLOBAL_MEM_FENCE)
    y[i] = s


@pytest.mark.parametrize("where", ["sim", "opencl"])
def test_in_place_shift_through_overlapping_views(
    where: str, request: pytest.FixtureRequest
) -> None:
    dev = get_device("sim" if where == "sim" else request.getfixturevalue("cl_device"))
    n = max(_align(dev), 8)
    h = np.arange(3 * n, dtype=np.float32) ** 2
    d = clpy.to_device(h, dev)
    shift_add[(n,), (n,)](d[0 : n + 1], d[0:n], device=dev)  # overlapping: y is x[:-1]
    if where == "opencl":
        assert _last_noalias(shift_add, dev) == frozenset()  # neither is restrict
    want = h.copy()
    want[:n] = want[:n] + want[1 : n + 1]  # NumPy: as if the inputs were read first
    np.testing.assert_array_equal(d.get(), want)
    e = clpy.to_device(h, dev)
    shift_add[(n,), (n,)](e[0 : n + 1], e[2 * n : 3 * n], device=dev)  # disjoint
    if where == "opencl":
        assert _last_noalias(shift_add, dev) is None  # the main variant: both restrict
        assert "restrict x" in _plan_of(shift_add, dev).source
    want = h.copy()
    want[2 * n :] = h[:n] + h[1 : n + 1]
    np.testing.assert_array_equal(e.get(), want)


def _plan_of(kernel: Any, dev: Any) -> Any:
    return next(p for key, p in kernel.launches.plans.items() if key[1] is dev)


def _last_noalias(kernel: Any, dev: Any) -> Any:
    """The buffers the last launch declared restrict (None: all, the main variant)."""
    memo = _plan_of(kernel, dev)._alias_memo
    assert memo is not None
    return memo[1]
