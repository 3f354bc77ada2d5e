"""NumPy arguments travel through pooled device buffers (clpy/runtime/transfers.py); one
array uploaded in launch after launch earns a one-time hint; a launch on device arrays only
returns without waiting, and reading the result still sees it."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, float32, int32
from clpy.runtime import transfers
from clpy.runtime.api import get_device


@clpy.kernel
def add_one(x: Global[float32], y: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    if i < n:
        y[i] = x[i] + 1.0


def test_uploads_reuse_pooled_buffers(cl_device: Any, monkeypatch: Any) -> None:
    import pyopencl as cl

    dev = get_device(cl_device)
    made: list[int] = []
    real = cl.Buffer

    class Spy(real):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            made.append(1)
            super().__init__(*args, **kwargs)

    x = np.arange(1000, dtype=np.float32)
    add_one[1024](x, np.zeros(1000, np.float32), np.int32(1000), device=dev)  # warm the pool
    monkeypatch.setattr(cl, "Buffer", Spy)
    for k in range(5):
        y = np.zeros(1000, np.float32)
        add_one[1024](x + k, y, np.int32(1000), device=dev)
        np.testing.assert_array_equal(y, x + k + 1)
    assert made == []  # every upload went into a buffer of an earlier launch


def test_async_launch_copies_before_returning(cl_device: Any) -> None:
    dev = get_device(cl_device)
    x = np.arange(4096, dtype=np.float32)
    y = np.zeros(4096, np.float32)
    h = add_one[4096](x, y, np.int32(4096), device=dev, wait=False)
    x[:] = -100  # changing the argument right away must not change what the kernel read
    assert h is not None
    h.wait()
    np.testing.assert_array_equal(y, np.arange(4096) + 1)


def test_repeated_upload_hint_once(cl_device: Any, monkeypatch: Any) -> None:
    dev = get_device(cl_device)
    monkeypatch.setattr(transfers.RepeatWatch, "warned", False)
    x = np.ones(1 << 15, np.float32)  # 128 KiB
    y = np.zeros_like(x)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        for _ in range(transfers.HINT_AFTER + 3):
            add_one[x.size](x, y, np.int32(x.size), device=dev)
    hints = [w for w in got if issubclass(w.category, transfers.PerformanceHint)]
    assert len(hints) == 1
    assert "parameter 'x'" in str(hints[0].message) and "clpy.to_device" in str(hints[0].message)
    assert hints[0].filename == __file__  # points at the user's launch line


@pytest.mark.parametrize("steps", [1, 7])
def test_resident_launches_need_no_wait(cl_device: Any, steps: int) -> None:
    dev = get_device(cl_device)
    a = clpy.to_device(np.zeros(1 << 16, np.float32), dev)
    b = clpy.zeros_like(a)
    n = np.int32(a.shape[0])
    for _ in range(steps):
        add_one[a.shape[0]](a, b, n, device=dev)
        add_one[a.shape[0]](b, a, n, device=dev)
    np.testing.assert_array_equal(a.get(), 2 * steps)


@pytest.fixture
def staged(monkeypatch: Any) -> Any:
    """Pinned staging on PoCL too (a CPU device copies directly by default), with 1 MiB chunks
    from 1 MiB up: the chunked, double-buffered paths with small arrays."""
    monkeypatch.setattr(transfers, "STAGE_CPU_DEVICES", True)
    monkeypatch.setattr(transfers, "CHUNK", 1 << 20)
    monkeypatch.setattr(transfers, "STAGE_MIN", 1 << 20)
    transfers.clear_pools()
    yield
    transfers.clear_pools()  # the next staging area gets the real settings


def test_cpu_devices_copy_directly(cl_device: Any, monkeypatch: Any) -> None:
    import pyopencl as cl

    dev = get_device(cl_device)
    transfers.clear_pools()
    is_cpu = bool(cl_device.type & cl.device_type.CPU)
    assert (transfers.staging_for(cl, dev.queue) is None) == is_cpu
    monkeypatch.setattr(transfers, "STAGE_CPU_DEVICES", True)
    transfers.clear_pools()
    assert transfers.staging_for(cl, dev.queue) is not None
    transfers.clear_pools()


def test_large_arrays_through_pinned_staging(cl_device: Any, staged: Any) -> None:
    # 2.5 chunks each way: double-buffered uploads and downloads, a ragged last chunk
    dev = get_device(cl_device)
    n = (5 * transfers.CHUNK) // 8 + 7
    x = np.random.default_rng(1).random(n, dtype=np.float32)
    assert x.nbytes >= transfers.STAGE_MIN
    for _ in range(2):  # the second launch reuses the pool and the staging area
        y = np.full(n, -1, np.float32)
        add_one[n](x, y, np.int32(n), device=dev)
        np.testing.assert_array_equal(y, x + 1)


def test_device_arrays_move_large_data_through_staging(cl_device: Any, staged: Any) -> None:
    dev = get_device(cl_device)
    n = (5 * transfers.CHUNK) // 8 + 3
    x = np.random.default_rng(2).random(n, dtype=np.float32)
    d = clpy.to_device(x, dev)
    x_before = x.copy()
    x[:] = 0  # to_device copied the data: changing the host array changes nothing
    np.testing.assert_array_equal(d.get(), x_before)
    d.set(x_before * 2)
    np.testing.assert_array_equal(d.get(), x_before * 2)
    e = d.copy()
    np.testing.assert_array_equal(e.get(), x_before * 2)
    z = clpy.zeros((0,), np.float32, dev)
    assert z.get().shape == (0,)


def test_pinned_host_arrays_skip_the_staging_copy(
    cl_device: Any, monkeypatch: Any, staged: Any
) -> None:
    dev = get_device(cl_device)
    n = transfers.STAGE_MIN // 4 * 3  # 3 MiB of float32: large enough to be staged
    x = clpy.pinned_empty((n,), np.float32, dev)
    y = clpy.pinned_empty((n,), np.float32, dev)
    assert transfers.is_pinned(x) and transfers.is_pinned(x[10:20])
    assert not transfers.is_pinned(np.empty(n, np.float32))
    x[:] = np.arange(n, dtype=np.float32)

    def no_staging(*a: Any, **k: Any) -> None:
        raise AssertionError("a pinned array went through the staging area")

    monkeypatch.setattr(transfers.Staging, "upload", no_staging)
    monkeypatch.setattr(transfers.Staging, "download", no_staging)
    add_one[n](x, y, np.int32(n), device=dev)
    np.testing.assert_array_equal(y, x + 1)
    d = clpy.to_device(x, dev)
    out = clpy.pinned_empty((n,), np.float32, dev)
    assert d.get(out=out) is out
    np.testing.assert_array_equal(out, x)
    with pytest.raises(ValueError, match="get\\(out=...\\)"):
        d.get(out=np.empty(3, np.float32))
    assert type(clpy.pinned_empty((4,), np.int32, "sim")) is np.ndarray


@pytest.mark.parametrize("share", [0.25, 0.5])
def test_split_path_moves_the_same_bytes(
    cl_device: Any, staged: Any, monkeypatch: Any, share: float
) -> None:
    """Part of each copy by the driver's pageable path on a second queue (DIRECT_SHARE), the
    rest staged: launches, device arrays and views see exactly the data."""
    import pyopencl as cl

    monkeypatch.setattr(transfers, "DIRECT_SHARE", share)
    monkeypatch.setattr(transfers, "PIPELINE", "pair")  # the split path is the pair's
    transfers.clear_pools()
    dev = get_device(cl_device)
    st = transfers.staging_for(cl, dev.queue)
    assert st is not None and st._staged_bytes(3 << 20) < (3 << 20)
    n = (3 << 20) // 4 + 5  # 3 chunks and a ragged end
    x = np.random.default_rng(4).random(n, dtype=np.float32)
    for _ in range(2):
        y = np.full(n, -1, np.float32)
        add_one[n](x, y, np.int32(n), device=dev)
        np.testing.assert_array_equal(y, x + 1)
    d = clpy.to_device(x, dev)
    add_one[n](d, d, np.int32(n), device=dev)  # then read on the second queue: after it
    np.testing.assert_array_equal(d.get(), x + 1)
    d[3 : n - 2] = x[: n - 5]
    np.testing.assert_array_equal(d[3 : n - 2].get(), x[: n - 5])


@pytest.mark.parametrize("flush", [True, False])
def test_ring_pipeline_moves_the_same_bytes(cl_device: Any, monkeypatch: Any, flush: bool) -> None:
    """The ring pipeline (PIPELINE="ring"): pieces of 256 KiB through 4 pinned slots, so each
    slot is reused several times each way; launches, device arrays and views at an offset."""
    import pyopencl as cl

    for k, v in dict(
        STAGE_CPU_DEVICES=True,
        STAGE_MIN=1 << 20,
        PIPELINE="ring",
        RING_SLOT=1 << 18,
        RING_SLOTS=4,
        RING_FLUSH=flush,
    ).items():
        monkeypatch.setattr(transfers, k, v)
    transfers.clear_pools()
    try:
        dev = get_device(cl_device)
        assert isinstance(transfers.staging_for(cl, dev.queue), transfers.Ring)
        n = (3 << 20) // 4 + 5  # 13 pieces, a ragged last one
        x = np.random.default_rng(5).random(n, dtype=np.float32)
        for _ in range(2):
            y = np.full(n, -1, np.float32)
            add_one[n](x, y, np.int32(n), device=dev)
            np.testing.assert_array_equal(y, x + 1)
        d = clpy.to_device(x, dev)
        add_one[n](d, d, np.int32(n), device=dev)
        np.testing.assert_array_equal(d.get(), x + 1)
        d[3 : n - 2] = x[: n - 5]
        np.testing.assert_array_equal(d[3 : n - 2].get(), x[: n - 5])
        d.set(x * 2)
        np.testing.assert_array_equal(d.get(), x * 2)
    finally:
        transfers.clear_pools()


def test_staging_pipeline_from_the_environment(monkeypatch: Any) -> None:
    monkeypatch.setenv("CLPY_STAGING", "ring")
    assert transfers._pipeline_from_env() == "ring"
    monkeypatch.setenv("CLPY_STAGING", "")
    assert transfers._pipeline_from_env() == ""  # each device's default_pipeline
    monkeypatch.setenv("CLPY_STAGING", "rng")
    with pytest.warns(RuntimeWarning, match="CLPY_STAGING='rng'"):
        assert transfers._pipeline_from_env() == "pair"


def test_pools_of_one_device_share_the_idle_limit(cl_device: Any, monkeypatch: Any) -> None:
    """POOL_LIMIT bounds the idle buffers of all queues of a device together: a program
    launching on many queues does not keep a limit's worth of device memory per queue."""
    import pyopencl as cl

    dev = get_device(cl_device)
    q1, q2 = (cl.CommandQueue(dev.context, cl_device) for _ in range(2))
    p1, p2 = transfers.pool_for(cl, q1), transfers.pool_for(cl, q2)
    assert p1 is not None and p2 is not None and p1 is not p2
    idle = sum(p._bytes for p in p1._siblings)  # earlier tests' launches on this device
    monkeypatch.setattr(transfers, "POOL_LIMIT", idle + 3000)
    b1, b2 = p1.take(2000), p2.take(2000)
    p1.give(b1, 2000)
    p2.give(b2, 2000)  # over the device's limit with p1's: released
    assert p1.take(2000) is b1
    assert p2.take(2000) is not b2
    p1.give(b1, 2000)
    transfers.clear_pools()
    assert not p1._free  # a plan holding p1 holds an empty pool


def test_ping_pong_arrays_keep_their_answers(cl_device: Any) -> None:
    """A loop that swaps two device arrays finds both argument sets remembered (resident and
    aliasing answers, clpy/runtime/clplan.py); an aliasing launch in between still gets the
    aliasing variant, and every result is right."""
    dev = get_device(cl_device)
    n = 1000
    x = np.arange(n, dtype=np.float32)
    a = clpy.to_device(x, dev)
    b = clpy.zeros((n,), np.float32, dev)
    for i in range(6):  # a -> b, b -> a, ...: +1 per step
        src, dst = (a, b) if i % 2 == 0 else (b, a)
        add_one[1024](src, dst, n, device=dev)
    np.testing.assert_array_equal(a.get(), x + 6)
    add_one[1024](a, a, n, device=dev)  # one array for both: not restrict
    np.testing.assert_array_equal(a.get(), x + 7)
    plan = next(p for key, p in add_one.launches.plans.items() if key[1] is dev)
    assert plan._alias_memo[1] == frozenset()
    add_one[1024](a, b, n, device=dev)
    add_one[1024](b, a, n, device=dev)
    np.testing.assert_array_equal(a.get(), x + 9)
    assert plan._alias_memo[1] is None  # distinct arrays again: the main variant
