"""Wrong launches across devices, contexts and in-flight launches (the rest of the corpus is in
tests/test_bad_calls.py): each a clear error naming what is wrong, or a correct result, with the
caller's arrays untouched."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import clpy
from tests.test_bad_calls import ERRORS, N, axpy, axpy_ref


@pytest.mark.parametrize("where", ["sim", "pocl"])
def test_launch_while_an_async_launch_runs_on_the_same_arrays(
    where: str, request: pytest.FixtureRequest
) -> None:
    """A second launch on the arrays of a ``wait=False`` launch still in flight sees its
    results (the queue is in order; the copy-back lands before the next upload reads)."""
    device = "sim" if where == "sim" else request.getfixturevalue("cl_device")
    n = 1 << 16
    x = np.arange(n, dtype=np.float32) % 7
    y = np.ones(n, np.float32)
    y0 = y.copy()
    handle = axpy[(n,)](x, y, 2.0, n, device=device, wait=False)
    axpy[(n,)](x, y, 3.0, n, device=device)
    handle.wait()
    want = axpy_ref(x, axpy_ref(x, y0, 2.0, n), 3.0, n)
    np.testing.assert_array_equal(y, want)


def test_arguments_from_another_context(cl_device: Any, cl_queue: Any) -> None:
    import pyopencl as cl
    import pyopencl.array as cla

    other_ctx = cl.Context([cl_device])
    other_q = cl.CommandQueue(other_ctx)
    x = cla.to_device(other_q, np.arange(N, dtype=np.float32))
    y = cla.to_device(other_q, np.ones(N, np.float32))
    xb, yb = x.get(), y.get()
    with pytest.raises(ValueError, match="parameter 'x'.*another pyopencl context"):
        axpy[(N,)](x, y, 2.0, N, device=cl_queue)
    assert x.get().tobytes() == xb.tobytes() and y.get().tobytes() == yb.tobytes()
    # Without a context of its own the launch runs where the memory is.
    axpy[(N,)](x, y, 2.0, N, device=cl_device)
    np.testing.assert_array_equal(y.get(), axpy_ref(xb, yb, 2.0, N))


def test_pyopencl_arrays_on_the_simulator(cl_queue: Any) -> None:
    import pyopencl.array as cla

    x = cla.to_device(cl_queue, np.arange(N, dtype=np.float32))
    y = cla.to_device(cl_queue, np.ones(N, np.float32))
    axpy[(N,)](x, y, 2.0, N, device="sim")
    np.testing.assert_array_equal(y.get(), axpy_ref(np.arange(N), np.ones(N), 2.0, N))
    bad = cla.to_device(cl_queue, np.ones(N, np.float64))
    yb = y.get()
    with pytest.raises(TypeError, match="parameter 'y'"):
        axpy[(N,)](x, bad, 2.0, N, device="sim")
    with pytest.raises(TypeError, match="parameter 'x'"):
        axpy[(N,)](bad, y, 2.0, N, device="sim")
    assert y.get().tobytes() == yb.tobytes()


def test_device_array_of_another_device(cl_device: Any) -> None:
    d = clpy.to_device(np.ones(N, np.float32), "sim")
    x = np.arange(N, dtype=np.float32)
    with pytest.raises(ValueError, match="parameter 'y'.*lives on sim"):
        axpy[(N,)](x, d, 2.0, N, device=cl_device)
    assert np.array_equal(d.get(), np.ones(N, np.float32))
    wrong = clpy.to_device(np.ones(N, np.float64), "sim")
    with pytest.raises(TypeError, match="parameter 'y'"):
        axpy[(N,)](x, wrong, 2.0, N, device="sim")


@pytest.mark.parametrize("what", ["platform", "context-of-two", "buffer"])
def test_wrong_pyopencl_objects_as_device(what: str, cl_device: Any, cl_context: Any) -> None:
    import pyopencl as cl

    dev = {
        "platform": lambda: cl_device.platform,
        "context-of-two": lambda: cl.Context([cl_device]),
        "buffer": lambda: cl.Buffer(cl_context, cl.mem_flags.READ_WRITE, 64),
    }[what]()
    x, y = np.arange(N, dtype=np.float32), np.ones(N, np.float32)
    yb = y.copy()
    try:
        axpy[(N,)](x, y, 2.0, N, device=dev)
    except ERRORS as e:
        assert "device" in str(e).lower() or "context" in str(e).lower(), str(e)
        assert y.tobytes() == yb.tobytes()
    else:
        np.testing.assert_array_equal(y, axpy_ref(x, yb, 2.0, N))
