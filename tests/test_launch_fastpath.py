"""The resident launch fast path (clpy/runtime/clplan.py, devices.py): selectors resolved once,
the resident and aliasing checks remembered by the identity of the buffer arguments. What is
remembered must never stand for a different launch: a NumPy array in a slot that held a device
array is still copied back, an aliasing call still gets its own variant."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, float32, int32
from clpy.runtime.devices import RUNTIME


@clpy.kernel
def axpy(x: Global[float32], y: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    if i < n:
        y[i] = y[i] + 2.0 * x[i]


def test_selectors_resolve_to_the_same_device(cl_device: Any) -> None:
    import pyopencl as cl

    dev = clpy.get_device(cl_device)
    assert RUNTIME.find(dev.name) is dev
    assert RUNTIME.find(dev.name) is dev  # remembered
    assert RUNTIME.find(dev.queue) is dev
    q = cl.CommandQueue(dev.context, cl_device)
    assert RUNTIME.find(q) is dev
    assert RUNTIME.find(q) is dev
    assert RUNTIME.find("sim").is_sim


def test_resident_memo_does_not_outlive_its_arguments(cl_device: Any) -> None:
    dev = clpy.get_device(cl_device)
    n = 1000
    x = np.arange(n, dtype=np.float32)
    dx = clpy.to_device(x, dev)
    dy = clpy.zeros((n,), np.float32, dev)
    for _ in range(3):  # the same device arrays: the remembered answer
        axpy[n](dx, dy, n, device=dev)
    np.testing.assert_array_equal(dy.get(), 6 * x)
    y = np.ones(n, np.float32)  # a NumPy array in the slot: copied in and back
    axpy[n](dx, y, n, device=dev)
    np.testing.assert_array_equal(y, 1 + 2 * x)
    axpy[n](dx, dy, n, device=dev)  # and back to the device arrays
    np.testing.assert_array_equal(dy.get(), 8 * x)


def test_alias_memo_follows_the_arguments(cl_device: Any) -> None:
    dev = clpy.get_device(cl_device)
    n = 256
    x = np.arange(n, dtype=np.float32)
    dx = clpy.to_device(x, dev)
    dy = clpy.to_device(x, dev)
    axpy[n](dx, dy, n, device=dev)  # distinct: restrict
    axpy[n](dx, dx, n, device=dev)  # one array for both: the aliasing variant
    axpy[n](dx, dy, n, device=dev)
    np.testing.assert_array_equal(dy.get(), 9 * x)  # 3x, then 3x + 2 * 3x
    np.testing.assert_array_equal(dx.get(), 3 * x)
    plan = next(iter(axpy.launches.plans.values()))
    assert len(plan._variants) == 2


@clpy.kernel
def scale_add(x: Global[float32], y: Global[float32], a: float32, n: int32):
    i = clpy.get_global_id(0)
    if i < n:
        y[i] = y[i] + a * x[i]


def test_a_repeated_launch_is_the_same_launch(cl_device: Any) -> None:
    """The same objects launch after launch are enqueued again without converting them; a
    0-d NumPy array changed in place in between is read again, as is a new number."""
    dev = clpy.get_device(cl_device)
    n = 300
    x = np.arange(n, dtype=np.float32)
    dx = clpy.to_device(x, dev)
    dy = clpy.zeros((n,), np.float32, dev)
    a = np.float32(1.0)
    for _ in range(3):
        scale_add[n](dx, dy, a, n, device=dev)
    plan = next(iter(scale_add.launches.plans.values()))
    assert plan._again is not None
    np.testing.assert_array_equal(dy.get(), 3 * x)
    scale_add[n](dx, dy, 2.0, n, device=dev)  # another number: converted
    np.testing.assert_array_equal(dy.get(), 5 * x)
    z = np.array(1.0, np.float32)  # mutable: never repeated blindly
    scale_add[n](dx, dy, z, n, device=dev)
    z[()] = 10.0
    scale_add[n](dx, dy, z, n, device=dev)
    np.testing.assert_array_equal(dy.get(), 16 * x)
    scale_add[(n // 2,)](dx, dy, a, n, device=dev)  # other sizes: not the same launch
    want = 16 * x
    want[: n // 2] += x[: n // 2]
    np.testing.assert_array_equal(dy.get(), want)
    scale_add[n](dx, dx, a, n, device=dev)  # aliasing: its own variant, then back
    scale_add[n](dx, dy, a, n, device=dev)
    scale_add[n](dx, dy, a, n, device=dev)
    np.testing.assert_array_equal(dx.get(), 2 * x)
    np.testing.assert_array_equal(dy.get(), want + 4 * x)


def test_ping_pong_arguments_are_checked_once_each(cl_device: Any, monkeypatch: Any) -> None:
    """Each buffer parameter remembers the last two device objects it bound: a loop that swaps
    two arrays checks each array once per parameter, and still binds the right one every
    launch (the values show it); a third array in the slot is checked again."""
    from clpy.abi import buffers

    dev = clpy.get_device(cl_device)
    n = 256
    a = clpy.to_device(np.ones(n, np.float32), dev)
    b = clpy.to_device(np.zeros(n, np.float32), dev)
    axpy[n](a, b, np.int32(n), device=dev)  # build, first checks
    checked: list[int] = []
    real = buffers.Buffer.check_array

    def counting(self: Any, arr: Any) -> Any:
        checked.append(id(arr))
        return real(self, arr)

    monkeypatch.setattr(buffers.Buffer, "check_array", counting)
    want_a, want_b = np.ones(n, np.float32), 2 * np.ones(n, np.float32)  # after the first
    src, dst = b, a
    for _ in range(10):
        axpy[n](src, dst, np.int32(n), device=dev)
        if dst is a:
            want_a = want_a + 2 * want_b
        else:
            want_b = want_b + 2 * want_a
        src, dst = dst, src
    np.testing.assert_array_equal(a.get(), want_a)
    np.testing.assert_array_equal(b.get(), want_b)
    # each parameter checked the one array it had not bound yet, once
    assert len(checked) == 2
    c = clpy.to_device(np.zeros(n, np.float32), dev)
    axpy[n](a, c, np.int32(n), device=dev)  # x: a, remembered; y: c, new
    assert len(checked) == 3
    np.testing.assert_array_equal(c.get(), 2 * want_a)


def test_checked_sizes_stay_bounded(cl_device: Any, monkeypatch: Any) -> None:
    """A kernel launched with ever-new sizes does not grow its plan's memory of checked sizes
    without bound; forgotten sizes are checked again (a bad one still raises)."""
    from clpy.runtime import clplan

    monkeypatch.setattr(clplan, "_CHECKED_SIZES", 4)
    dev = clpy.get_device(cl_device)
    x = clpy.to_device(np.zeros(64, np.float32), dev)
    y = clpy.to_device(np.zeros(64, np.float32), dev)
    for n in range(1, 12):
        axpy[n](x, y, np.int32(n), device=dev)
    plan = next(p for key, p in axpy.launches.plans.items() if key[1] is dev)
    assert len(plan._checked) <= 4
    big = plan.max_wg + 1  # over the kernel's work-group limit: refused on every device
    with pytest.raises(ValueError):
        axpy[(big,), (big,)](x, y, np.int32(0), device=dev)
