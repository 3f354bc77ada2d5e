"""Simulator resources: the memory budget (``clpy.sim.config(max_memory=...)``, checked before
anything is allocated), loops that make no progress, and Ctrl-C during a long simulation."""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, Local, float32, int32
from clpy_sim.budget import SimulationTooLarge, default_max_memory, estimate


@clpy.kernel
def reverse_in_groups(x: Global[float32], tmp: Local[float32], out: Global[float32]):
    lid = clpy.get_local_id(0)
    tmp[lid] = x[clpy.get_global_id(0)]
    clpy.barrier()
    out[clpy.get_global_id(0)] = tmp[clpy.get_local_size(0) - 1 - lid]


@clpy.kernel
def stuck(x: Global[int32], n: int32):
    i = clpy.get_global_id(0)
    c = x[i]
    while c < n:
        c = c * 1  # never changes: no progress
    x[i] = c


@clpy.kernel
def stuck_store(x: Global[int32], n: int32):
    i = clpy.get_global_id(0)
    while x[i] < n:
        x[i] = x[i]  # a store that changes nothing: no progress either


@clpy.kernel
def stuck_local_store(x: Global[int32], n: int32):
    lid = clpy.get_local_id(0)
    tmp = clpy.local_array(int32, 8)
    tmp[lid] = x[lid]
    while tmp[lid] < n:
        tmp[lid] = tmp[lid] + 0


@clpy.kernel
def stuck_private_store(x: Global[int32], n: int32):
    i = clpy.get_global_id(0)
    a = clpy.private_array(int32, 2)
    a[0] = x[i]
    while a[0] < n:
        a[0] += 0
        a[i % 2] = a[i % 2]


@clpy.kernel
def count_up_in_memory(x: Global[int32], n: int32):
    i = clpy.get_global_id(0)
    while x[i] < n:
        x[i] = x[i] + 1  # every store changes memory: progress


@clpy.kernel
def slow(x: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    acc = x[i]
    for _k in range(n):
        acc = acc * 0.5 + 1.0
    x[i] = acc


def test_default_budget_is_a_fraction_of_free_memory() -> None:
    limit = default_max_memory()
    assert limit is None or limit > 0
    assert clpy.sim.current().max_memory is None


def test_launch_over_budget_fails_before_running_and_says_how_to_batch() -> None:
    x = np.arange(64, dtype=np.float32)
    out = np.full(64, -1.0, np.float32)
    with clpy.sim.config(max_memory=1 << 20):
        with pytest.raises(SimulationTooLarge) as info:
            reverse_in_groups[(64,), (8,)](x, clpy.LocalMemory(1 << 20), out, device="sim")
    msg = str(info.value)
    assert "needs about" in msg and "max_memory" in msg and "'tmp'" in msg
    assert "offset=" in msg  # how to batch
    assert isinstance(info.value, MemoryError)
    assert np.all(out == -1.0)  # nothing ran, nothing copied back
    # The same launch within the budget runs.
    reverse_in_groups[(64,), (8,)](x, clpy.LocalMemory(8), out, device="sim")
    np.testing.assert_array_equal(out, x.reshape(-1, 8)[:, ::-1].reshape(-1))


def test_huge_local_memory_under_the_default_budget() -> None:
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(16, np.float32)
    with pytest.raises(SimulationTooLarge, match="'tmp'"):
        reverse_in_groups[(16,), (8,)](x, clpy.LocalMemory(1 << 40), out, device="sim")


def test_estimate_grows_with_work_group_and_local_memory() -> None:
    spec = reverse_in_groups.specialize()
    fn, params = spec.function, spec.abi
    x = np.zeros(1024, np.float32)
    small = estimate(
        fn, (1024,), (8,), params, [x, clpy.LocalMemory(8), x], 1 << 17, 1, frozenset({"races"})
    )
    big = estimate(
        fn,
        (1024,),
        (8,),
        params,
        [x, clpy.LocalMemory(1 << 16), x],
        1 << 17,
        1,
        frozenset({"races"}),
    )
    assert sum(n for _, n in big) > sum(n for _, n in small)
    assert big[0][0].startswith("local memory 'tmp'")


def test_max_memory_must_be_a_positive_int() -> None:
    with pytest.raises(ValueError, match="max_memory"):
        clpy.sim.config(max_memory=-1)
    with pytest.raises(ValueError, match="max_memory"):
        clpy.sim.config(max_memory=1.5)  # type: ignore[arg-type]


def test_loop_without_progress_is_reported_not_a_hang() -> None:
    x = np.zeros(8, np.int32)
    with pytest.raises(clpy.sim.SimulationError, match="no progress") as info:
        stuck[(8,), (8,)](x, 5, device="sim")
    assert "test_sim_resources.py" in str(info.value)  # the loop's line
    assert np.all(x == 0)


@pytest.mark.parametrize("kernel", [stuck_store, stuck_local_store, stuck_private_store])
def test_store_that_changes_nothing_is_no_progress(kernel: Any) -> None:
    x = np.zeros(8, np.int32)
    with pytest.raises(clpy.sim.SimulationError, match="no progress"):
        kernel[(8,), (8,)](x, 5, device="sim")
    assert np.all(x == 0)


def test_stores_that_change_memory_are_progress() -> None:
    x = np.zeros(8, np.int32)
    count_up_in_memory[(8,), (8,)](x, 200, device="sim")  # more trips than spin_limit
    assert np.all(x == 200)


@pytest.mark.parametrize("engine", ["numpy", "native"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("kind", ["numpy", "device_array"])
def test_keyboard_interrupt_leaves_arrays_untouched(kind: str, threads: int, engine: str) -> None:
    """Ctrl-C (KeyboardInterrupt in the main thread, from a timer) during a long launch:
    the launch stops, and the caller's array keeps its bits, also after a while (no worker
    thread writes into it later). Natively (``"native"``): a first launch counts as long, its
    kernel polls the cancel flag at its loop's back-edges (docs/simulator.md, Native engine,
    Snapshots and Ctrl-C); an interrupted launch records no time, so each case is a first."""
    n = 4096
    host = np.arange(n, dtype=np.float32)
    before = host.copy()
    arg = host if kind == "numpy" else clpy.to_device(host, "sim")
    # A real SIGINT, as Ctrl-C sends (it also wakes a main thread waiting on the pool).
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    start = time.monotonic()
    with clpy.sim.config(threads=threads, max_lanes=256, engine=engine):
        timer.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                slow[(n,), (64,)](arg, 1 << 30, device="sim")
                time.sleep(60)  # only reached if the launch ended before the timer fired
        finally:
            timer.cancel()
    assert time.monotonic() - start < 50
    time.sleep(0.5)
    got = host if kind == "numpy" else arg.get()
    assert got.tobytes() == before.tobytes()
    if kind == "device_array":
        assert host.tobytes() == before.tobytes()
