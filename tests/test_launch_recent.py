"""The launch fast paths of an OpenCL plan (clpy/runtime/clplan.py ``_run_recent``,
``_run_again``; launch.py's memo of the last ``device=``; values packed to bytes): a launch
whose buffer arguments are the objects of one of the last two launches (ping-pong arrays)
binds what they bound then and converts only the numbers, skipping the immutable numbers last
set (clvariant.py ``Variant.set_recent``). What is remembered must never stand for a
different launch: numbers are still checked (in parameter order), new sizes are still
checked, a NumPy array is still copied, an aliasing call still gets its own variant, a launch
on pyopencl buffers that waits still waits, a launch that failed half-way leaves nothing
stale, and the results equal those of the path without memos bit for bit."""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, Local, float32, int32
from clpy.runtime.clplan import CLPlan
from clpy.runtime.devices import RUNTIME


@clpy.kernel
def relax(
    iters: int32, wall: Global[int32], src: Global[int32], dst: Global[int32], cols: int32,
    t: int32, border: int32,
):  # fmt: skip
    i = clpy.get_global_id(0)
    if i < cols:
        dst[i] = src[i] + wall[t * cols + i] * iters + border


def _plan(kernel: Any, dev: Any) -> Any:
    return next(p for key, p in kernel.launches.plans.items() if key[1] is dev)


def _pingpong(dev: Any, steps: int, wait: bool, **kw: Any) -> np.ndarray:
    rows, cols = 6, 200
    rng = np.random.default_rng(5)
    wall = clpy.to_device(rng.integers(-50, 50, (rows, cols), dtype=np.int32), dev)
    res = [clpy.to_device(np.arange(cols, dtype=np.int32), dev), clpy.zeros(cols, np.int32, dev)]
    src, dst = 0, 1
    for s in range(steps):
        h = relax[(256,), (64,)](
            1 + s % 3, wall, res[src], res[dst], cols, s % rows, s, wait=wait, device=dev, **kw
        )
        if not wait:
            assert h is not None
        src, dst = dst, src
    return res[src].get()


def test_ping_pong_equals_the_path_without_memos(cl_device: Any, monkeypatch: Any) -> None:
    """Bit for bit the results of launches that convert and check everything each time."""
    dev = clpy.get_device(cl_device)
    fast = [_pingpong(dev, 13, wait) for wait in (True, False)]
    plan = _plan(relax, dev)
    assert plan._recent is not None and plan._recent_prev is not None
    runs: list[int] = []
    real = CLPlan._run_recent

    def counting(self: Any, *a: Any) -> Any:
        runs.append(1)
        return real(self, *a)

    monkeypatch.setattr(CLPlan, "_run_recent", counting)
    _pingpong(dev, 6, False)
    assert len(runs) >= 4  # the loop took the fast path
    monkeypatch.setattr(CLPlan, "_remember", lambda self, *a: None)  # nothing remembered
    relax.clear_cache()
    runs.clear()
    slow = [_pingpong(dev, 13, wait) for wait in (True, False)]
    assert not runs
    for a, b in zip(fast, slow):
        assert a.tobytes() == b.tobytes()


def test_numbers_are_checked_on_the_fast_path(cl_device: Any) -> None:
    dev = clpy.get_device(cl_device)
    cols = 64
    wall = clpy.zeros((2, cols), np.int32, dev)
    a, b = clpy.zeros(cols, np.int32, dev), clpy.zeros(cols, np.int32, dev)
    for s in range(4):
        relax[(64,), (64,)](1, wall, a, b, cols, 0, s, device=dev, wait=False)
        a, b = b, a
    assert _plan(relax, dev)._recent is not None
    with pytest.raises(ValueError, match="'border'.*out of range"):
        relax[(64,), (64,)](1, wall, a, b, cols, 0, 2**31, device=dev)
    with pytest.raises(TypeError, match="'t'.*expected an integer"):
        relax[(64,), (64,)](1, wall, a, b, cols, 0.5, 0, device=dev)
    with pytest.raises(ValueError, match="local size|work-group"):
        relax[(1 << 20,), (1 << 20,)](1, wall, a, b, cols, 0, 0, device=dev)
    x = np.full(cols, 7, np.int32)  # a NumPy array where a device array was: copied back
    relax[(64,), (64,)](1, wall, a, x, cols, 0, 3, device=dev)
    np.testing.assert_array_equal(x, a.get() + 3)


def test_aliasing_between_ping_pong_launches(cl_device: Any) -> None:
    """(a, b), (b, a), then (a, a): the aliasing variant; back to (a, b): the main one."""
    dev = clpy.get_device(cl_device)
    cols = 64
    wall = clpy.to_device(np.ones((1, cols), np.int32), dev)
    a = clpy.to_device(np.arange(cols, dtype=np.int32), dev)
    b = clpy.zeros(cols, np.int32, dev)
    plan = None
    for s in range(4):
        src, dst = (a, b) if s % 2 == 0 else (b, a)
        relax[(64,), (64,)](1, wall, src, dst, cols, 0, 0, device=dev)
        plan = _plan(relax, dev)
        assert plan._alias_memo is None or plan._alias_memo[1] is None
    relax[(64,), (64,)](1, wall, a, a, cols, 0, 0, device=dev)  # one array for both
    assert plan is not None and plan._alias_memo[1] is not None
    np.testing.assert_array_equal(a.get(), np.arange(cols) + 5)
    relax[(64,), (64,)](1, wall, a, b, cols, 0, 0, device=dev)
    assert plan._alias_memo[1] is None
    np.testing.assert_array_equal(b.get(), np.arange(cols) + 6)


def test_a_launch_on_buffers_that_waits_still_waits(cl_device: Any, monkeypatch: Any) -> None:
    """pyopencl buffers are no device arrays of the plan's queue: ``wait=True`` waits for
    the kernel on every path (the repeat, the ping-pong), device arrays do not."""
    import pyopencl as cl

    dev = clpy.get_device(cl_device)
    ctx = dev.context
    cols = 64
    mf = cl.mem_flags
    wall = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.ones(cols, np.int32))
    bufs = [
        cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.zeros(cols, np.int32))
        for _ in range(2)
    ]
    waits: list[int] = []
    real = CLPlan._wait_kernel

    def counting(self: Any, evt: Any) -> None:
        waits.append(1)
        real(self, evt)

    monkeypatch.setattr(CLPlan, "_wait_kernel", counting)
    for s in range(6):  # ping-pong, then the same launch three times
        x, y = (bufs[s % 2], bufs[1 - s % 2]) if s < 3 else (bufs[0], bufs[1])
        relax[(64,), (64,)](1, wall, x, y, cols, 0, 0, device=dev)
    assert len(waits) == 6
    h = relax[(64,), (64,)](1, wall, bufs[0], bufs[1], cols, 0, 0, device=dev, wait=False)
    assert h is not None and len(waits) == 6
    h.wait()
    d = [clpy.zeros(cols, np.int32, dev) for _ in range(2)]
    dwall = clpy.to_device(np.ones((1, cols), np.int32), dev)
    waits.clear()
    for s in range(4):
        relax[(64,), (64,)](1, dwall, d[s % 2], d[1 - s % 2], cols, 0, 0, device=dev)
    assert not waits
    np.testing.assert_array_equal(d[0].get(), 4)


@clpy.kernel
def put(y: Global[float32], a: float32, n: int32):
    i = clpy.get_global_id(0)
    if i < n:
        y[i] = a


def test_changed_numbers_are_set_and_equal_ones_kept(cl_device: Any) -> None:
    """-0.0 after 0.0 is another value (bytes differ); a 0-d array changed in place is read
    again on the repeat path, with or without wait."""
    dev = clpy.get_device(cl_device)
    y = clpy.zeros(4, np.float32, dev)
    for a, sign in ((0.0, False), (-0.0, True), (0.0, False), (np.float32(-0.0), True)):
        put[4](y, a, 4, device=dev)
        assert np.signbit(y.get()).all() == sign
    z = np.array(1.5, np.float32)
    for wait in (True, False):
        for v in (1.5, 2.5, 3.5):
            z[()] = v
            h = put[4](y, z, 4, device=dev, wait=wait)
            if h is not None:
                h.wait()
            np.testing.assert_array_equal(y.get(), v)


@pytest.mark.parametrize(
    "dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
)
def test_int_values_pack_as_numpy(dtype: Any) -> None:
    from clpy.abi.values import Value
    from clpy.types import catalog as C

    t = C.scalar_for_dtype(np.dtype(dtype))
    conv = Value("v", t, False, "k", 0).cl_converter(None)  # type: ignore[arg-type]
    info = np.iinfo(dtype)
    for v in (0, 1, info.min, info.max, info.max // 3, np.int8(-1) if info.min else 7):
        assert conv(v, []) == np.array(v).astype(dtype).tobytes()
    for bad in (info.min - 1, info.max + 1):
        with pytest.raises(ValueError, match="out of range"):
            conv(bad, [])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_values_pack_as_numpy(dtype: Any) -> None:
    from clpy.abi.values import Value
    from clpy.types import catalog as C

    t = C.scalar_for_dtype(np.dtype(dtype))
    conv = Value("v", t, False, "k", 0).cl_converter(None)  # type: ignore[arg-type]
    tiny = float(np.finfo(dtype).tiny)
    vals = [0.0, -0.0, 1.0, 0.1, -2.5e-3, 1 / 3, float("inf"), -float("inf"), tiny, tiny / 7]
    vals += [float(np.finfo(dtype).max), 1 + 2**-24, 1 + 3 * 2**-25, 16777217.0, 3, True]
    vals += [np.float16(0.1), np.float64(0.7), np.int64(2**40)]
    for v in vals:
        assert conv(v, []) == dtype(v).tobytes(), v
    nan = conv(float("nan"), [])
    assert np.isnan(np.frombuffer(nan, dtype)[0])
    if dtype is np.float32:
        with pytest.raises(ValueError, match="out of range"):
            conv(1e39, [])
    assert struct.calcsize("=f") == 4


def test_the_last_device_memo_follows_the_runtime(cl_device: Any) -> None:
    """The launcher's memo of the last ``device=`` (launch.py): another object, the current
    device for ``device=None``, and a runtime reset each lead to the plan of their own."""
    import pyopencl as cl

    dev = clpy.get_device(cl_device)
    y = np.zeros(4, np.float32)
    put[4](y, 1.0, 4, device=dev)
    last = put.launches.last
    assert last is not None and last[0] is dev
    q = cl.CommandQueue(dev.context, cl_device)
    put[4](y, 2.0, 4, device=q)
    assert put.launches.last[0] is q and put.launches.last[6].queue is q
    put[4](y, 3.0, 4, device=q)
    np.testing.assert_array_equal(y, 3.0)
    try:
        clpy.use_device("sim")
        put[4](y, 4.0, 4)
        assert put.launches.last[4].is_sim
        clpy.use_device(dev)
        put[4](y, 5.0, 4)
        assert put.launches.last[4] is dev
    finally:
        clpy.use_device(None)
    epoch = RUNTIME.epoch
    put[4](y, 6.0, 4, device=q)
    assert put.launches.last[3] is epoch
    np.testing.assert_array_equal(y, 6.0)
    put.clear_cache()
    assert put.launches.last is None


def test_two_dimensional_sizes_parse_on_the_fast_path() -> None:
    from clpy.runtime.sizes import parse_sizes

    assert parse_sizes(((16, 8), (4, 2)), "k") == ((16, 8), (4, 2))
    assert parse_sizes(((16, 8, 2), None), "k") == ((16, 8, 2), None)
    assert parse_sizes(((np.int64(16), 8), (4, 2)), "k") == ((16, 8), (4, 2))
    assert parse_sizes(((16, 0), (4, 2)), "k") == ((16, 0), (4, 2))
    with pytest.raises(ValueError, match="different"):
        parse_sizes(((16, 8), (4,)), "k")
    with pytest.raises(TypeError, match="global_size"):
        parse_sizes(((True, 8), None), "k")
    with pytest.raises(ValueError, match="zero"):
        parse_sizes(((16, 8), (4, 0)), "k")
    with pytest.raises(ValueError, match="negative"):
        parse_sizes(((16, -8), None), "k")


def _mixed(dev: Any, steps: int, wait: bool) -> list[bytes]:
    """Ping-pong launches (and some in the same direction twice) whose numbers come as
    Python ints, NumPy scalars, a bool and one 0-d array changed in place (the same object
    every launch), with a launch whose last number fails its check after an earlier one
    changed (Variant.set_recent had set it)."""
    rows, cols = 4, 96
    rng = np.random.default_rng(7)
    wall = clpy.to_device(rng.integers(-9, 9, (rows, cols), dtype=np.int32), dev)
    res = [clpy.to_device(np.arange(cols, dtype=np.int32), dev), clpy.zeros(cols, np.int32, dev)]
    t = np.array(0, np.int32)
    out = []
    # ping-pong, then twice the same direction (the set tried first after a swap is not it)
    flip = [s % 2 if s % 7 != 5 else (s - 1) % 2 for s in range(steps)]
    for s in range(steps):
        t[()] = s // 2 % rows  # (a failing launch comes between two of the same t)
        iters = (1, np.int32(2), np.int64(1), True)[s % 4]
        border = (s, np.int16(-s), 3)[s % 3]
        src, dst = res[flip[s]], res[1 - flip[s]]
        if s % 5 == 3:
            with pytest.raises(ValueError, match="'border'"):
                relax[(128,), (64,)](
                    iters, wall, src, dst, cols, s % rows + 1, 2**40, wait=wait, device=dev
                )
        h = relax[(128,), (64,)](iters, wall, src, dst, cols, t, border, wait=wait, device=dev)
        if h is not None:
            h.wait()
        out.append(dst.get().tobytes())
    return out


def test_mixed_numbers_equal_the_path_without_memos(cl_device: Any, monkeypatch: Any) -> None:
    """The numbers the fast path remembers by identity (immutable ones) and those it converts
    every time (a 0-d array) give the launches without memos' results, also after a launch
    failed half-way through setting its arguments."""
    dev = clpy.get_device(cl_device)
    runs: list[int] = []
    real = CLPlan._run_recent

    def counting(self: Any, *a: Any) -> Any:
        runs.append(1)
        return real(self, *a)

    monkeypatch.setattr(CLPlan, "_run_recent", counting)
    fast = [_mixed(dev, 14, wait) for wait in (True, False)]
    assert len(runs) >= 20
    monkeypatch.setattr(CLPlan, "_remember", lambda self, *a: None)
    relax.clear_cache()
    runs.clear()
    slow = [_mixed(dev, 14, wait) for wait in (True, False)]
    assert not runs
    assert fast == slow


def test_empty_launches_are_not_remembered(cl_device: Any) -> None:
    """An empty NDRange runs nothing on every path (its sizes are never taken as checked)."""
    dev = clpy.get_device(cl_device)
    cols = 64
    wall = clpy.zeros((1, cols), np.int32, dev)
    a, b = clpy.to_device(np.ones(cols, np.int32), dev), clpy.zeros(cols, np.int32, dev)
    for wait in (True, False, True):
        h = relax[(0,), None](1, wall, a, b, cols, 0, 5, device=dev, wait=wait)
        assert (h is None) == wait and (h is None or h.done)
    np.testing.assert_array_equal(b.get(), 0)
    assert all(0 not in s[0] for s in _plan(relax, dev)._checked)
    relax[(64,), None](1, wall, a, b, cols, 0, 5, device=dev)
    relax[(64,), None](1, wall, a, b, cols, 0, 5, device=dev)
    np.testing.assert_array_equal(b.get(), 6)


@clpy.kernel
def scaled(
    tmp: Local[float32], src: Global[float32], k: float32, dst: Global[float32], n: int32
):  # fmt: skip
    i = clpy.get_global_id(0)
    j = clpy.get_local_id(0)
    tmp[j] = src[i] if i < n else 0.0
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    if i < n:
        dst[i] = tmp[j] * k + tmp[0]


def test_local_memory_on_the_fast_path_checks_in_parameter_order(cl_device: Any) -> None:
    """With local memory among the numbers, a recognised launch converts every other argument
    in parameter order: of two bad ones the first raises, as without memos."""
    dev = clpy.get_device(cl_device)
    n = 100
    a = clpy.to_device(np.arange(n, dtype=np.float32), dev)
    b = clpy.zeros(n, np.float32, dev)
    for s in range(4):
        src, dst = (a, b) if s % 2 == 0 else (b, a)
        scaled[(128,), (32,)](clpy.LocalMemory(32), src, 2.0, dst, n, device=dev, wait=False)
    assert _plan(scaled, dev)._recent_prev is not None
    with pytest.raises(ValueError, match="'tmp'"):
        scaled[(128,), (32,)](clpy.LocalMemory(2**40), a, 1e300, b, n, device=dev)
    with pytest.raises(ValueError, match="'k'"):
        scaled[(128,), (32,)](clpy.LocalMemory(32), a, 1e300, b, 2**40, device=dev)
    want = np.arange(n, dtype=np.float32)
    for _ in range(4):
        src = want.copy()
        want = src * 2.0 + src[(np.arange(n) // 32) * 32]
    np.testing.assert_array_equal(a.get(), want)
