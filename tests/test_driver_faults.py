"""Driver faults on PoCL, injected with monkeypatch: a device build that fails, an enqueue
refused with an OpenCL error (out of resources, invalid work-group size), and a device lost
mid-run (the kernel's event fails, through a fake queue/event). Each surfaces as a clpy error
(``BuildError`` at the Python line, ``ValueError`` naming the local size, ``LaunchError``) and
nothing is copied back into the caller's arrays."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, float32, int32
from clpy.errors import BuildError
from clpy.kernel import Specialization
from clpy.runtime.handles import LaunchError

N = 64


def make_kernel() -> Any:
    @clpy.kernel
    def twice(x: Global[float32], out: Global[float32], n: int32):
        i = clpy.get_global_id(0)
        if i < n:
            out[i] = x[i] * 2.0  # marker: the faulty line

    return twice


def marker_line() -> int:
    lines, first = inspect.getsourcelines(make_kernel)
    return first + next(i for i, t in enumerate(lines) if "marker: the faulty line" in t)


def arrays() -> tuple[np.ndarray, np.ndarray]:
    return np.arange(N, dtype=np.float32), np.full(N, -7.0, np.float32)


def _error(cl: Any, code: int, routine: str) -> Exception:
    return cl.RuntimeError(cl._cl._ErrorRecord(f"{routine} failed (injected)", code, routine))


def test_device_build_failure_names_the_python_line(
    cl_device: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The device compiler rejects the program (here: an undeclared identifier spliced into
    the emitted C of one statement); the BuildError points at that statement's Python line."""
    real = Specialization.source_for

    def broken(self: Any, target: Any, line_directives: bool = True, **kw: Any) -> str:
        text = real(self, target, line_directives, **kw)
        return text.replace("out[i] = ", "out[i] = no_such_identifier + ", 1)

    monkeypatch.setattr(Specialization, "source_for", broken)
    k = make_kernel()
    x, out = arrays()
    before = out.copy()
    with pytest.raises(BuildError) as info:
        k[(N,)](x, out, N, device=cl_device)
    msg = str(info.value)
    assert "no_such_identifier" in msg
    assert f"test_driver_faults.py:{marker_line()}" in msg, msg
    assert out.tobytes() == before.tobytes()


@pytest.mark.parametrize("code", ["OUT_OF_RESOURCES", "INVALID_WORK_GROUP_SIZE"])
@pytest.mark.parametrize("local", [(16,), None])
def test_enqueue_refused(
    code: str, local: Any, cl_device: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyopencl as cl

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise _error(cl, getattr(cl.status_code, code), "clEnqueueNDRangeKernel")

    k = make_kernel()
    x, out = arrays()
    k[(N,), local](x, out, N, device=cl_device)  # built and planned before the fault
    out[:] = -7.0
    before = out.copy()
    monkeypatch.setattr(cl, "enqueue_nd_range_kernel", refuse)
    with pytest.raises((ValueError, LaunchError)) as info:
        k[(N,), local](x, out, N, device=cl_device)
    msg = str(info.value)
    assert "twice" in msg and "injected" in msg
    if local is not None:
        assert isinstance(info.value, ValueError) and "local size (16,)" in msg
    assert out.tobytes() == before.tobytes()


class _LostEvent:
    """The event of a kernel whose device was lost: waiting fails, or the status is an
    error code (both happen, depending on the driver)."""

    def __init__(self, cl: Any, real: Any, raise_on_wait: bool) -> None:
        self._cl = cl
        self._real = real
        self._raise = raise_on_wait

    def wait(self) -> None:
        self._real.wait()
        if self._raise:
            raise _error(self._cl, self._cl.status_code.DEVICE_NOT_AVAILABLE, "clWaitForEvents")

    @property
    def command_execution_status(self) -> int:
        return -2  # CL_DEVICE_NOT_AVAILABLE as an execution status


class _FailedEvent:
    """A command that did not run because an event it waited for failed."""

    def wait(self) -> None:
        pass

    command_execution_status = -14  # CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST


@pytest.mark.parametrize("wait", [True, False])
@pytest.mark.parametrize("raise_on_wait", [True, False])
def test_device_lost_mid_run(
    wait: bool, raise_on_wait: bool, cl_device: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyopencl as cl

    real_enqueue = cl.enqueue_nd_range_kernel
    real_copy = cl.enqueue_copy
    lost: list[bool] = []

    def enqueue(queue: Any, *args: Any, **kwargs: Any) -> Any:
        lost.append(True)
        return _LostEvent(cl, real_enqueue(queue, *args, **kwargs), raise_on_wait)

    def copy(queue: Any, dest: Any, src: Any, **kwargs: Any) -> Any:
        # After the loss a copy back would read garbage: fail the test if one is attempted
        # into a host array.
        if lost and isinstance(dest, np.ndarray):
            # OpenCL: a command waiting on a failed event does not run and fails itself
            # (CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST); a blocking copy is a bug.
            assert kwargs.get("wait_for") and not kwargs.get("is_blocking", True), (
                "copied back after the device was lost"
            )
            return _FailedEvent()
        return real_copy(queue, dest, src, **kwargs)

    k = make_kernel()
    x, out = arrays()
    k[(N,)](x, out, N, device=cl_device)
    out[:] = -7.0
    before = out.copy()
    monkeypatch.setattr(cl, "enqueue_nd_range_kernel", enqueue)
    monkeypatch.setattr(cl, "enqueue_copy", copy)
    with pytest.raises(LaunchError) as info:
        h = k[(N,)](x, out, N, device=cl_device, wait=wait)
        if h is not None:
            h.wait()
    assert "twice" in str(info.value) or "launch failed" in str(info.value)
    assert out.tobytes() == before.tobytes()
