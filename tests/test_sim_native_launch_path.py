"""The per-launch path of the native engine (sim/native/chunks.py, clpy/abi/buffers.py
SimSnapshot): snapshots of written arguments taken only before a path that can fail, shared by
the runtime's rollback and the checked engine's re-run; long launches in pieces that Ctrl-C
stops and that drive the progress bar; results that do not depend on the pieces."""

from __future__ import annotations

import _thread
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, float32, int32
from clpy.abi import buffers
from clpy_sim import progress as sim_progress
from clpy_sim.native import chunks, compiler, runner


@clpy.kernel
def bump(x: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    if i < n:
        x[i] = x[i] * 2.0 + 1.0


@clpy.kernel
def slow(x: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    acc = x[i]
    for _k in range(n):
        acc = acc * 0.5 + 1.0
    x[i] = acc


@clpy.kernel
def racy_bump(x: Global[float32], out: Global[float32]):
    # the local race fires the native race detector (on whenever a checker is); the NumPy
    # engine, with only the bounds checker, reports nothing and its result stands
    lid = clpy.get_local_id(0)
    gid = clpy.get_global_id(0)
    t = clpy.local_array(float32, 64)
    t[lid] = x[gid]
    out[gid] = t[(lid + 1) % 64]
    x[gid] = x[gid] + 1.0


@clpy.kernel
def oob(x: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    x[i] = 5.0
    x[i] = x[i + n]  # out of bounds for the last work-items


@pytest.fixture
def saves(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Counts the copies of arrays written in place (``DeviceArray`` snapshots)."""
    count: list[int] = []
    real = buffers._InPlace.save

    def save(self: Any) -> None:
        if self.saved is None:
            count.append(self.array.size)
        real(self)

    monkeypatch.setattr(buffers._InPlace, "save", save)
    yield count


def _fresh_kernel(k: Any) -> None:
    """Forget the time per group of ``k``'s compiled kernels (its next launch is a first)."""
    for fn, per in list(runner._CACHE.items()):
        if fn.name == k.__name__:
            for c in per.values():
                if isinstance(c, runner._Compiled):
                    c.per_group = None


def test_short_native_launch_takes_no_snapshot(saves: list[int]) -> None:
    x = clpy.to_device(np.arange(256, dtype=np.float32), "sim")
    with clpy.sim.config(checks=()):
        bump[(256,), (64,)](x, 256, device="sim")  # a first launch is long: a snapshot
        assert clpy.sim.why_not(bump) is None
        first = len(saves)
        for _ in range(3):
            bump[(256,), (64,)](x, 256, device="sim")
    assert len(saves) == first  # no copy on the short launches
    want = np.arange(256, dtype=np.float32)
    for _ in range(4):
        want = want * np.float32(2.0) + np.float32(1.0)
    assert x.get().tobytes() == want.tobytes()


def test_long_native_launch_takes_a_snapshot(saves: list[int]) -> None:
    x = clpy.to_device(np.arange(256, dtype=np.float32), "sim")
    with clpy.sim.config(checks=()):
        bump[(256,), (64,)](x, 256, device="sim")
        _fresh_kernel(bump)
        before = len(saves)
        bump[(256,), (64,)](x, 256, device="sim")
    assert len(saves) == before + 1


def test_numpy_engine_takes_a_snapshot_and_a_failure_rolls_back(saves: list[int]) -> None:
    host = np.arange(128, dtype=np.float32)
    x = clpy.to_device(host, "sim")
    with clpy.sim.config(engine="numpy", checks=("bounds",)):
        with pytest.raises(clpy.sim.SimulationError):
            oob[(128,), (64,)](x, 8, device="sim")
    assert saves == [128]
    assert x.get().tobytes() == host.tobytes()


@pytest.mark.parametrize("kind", ["numpy", "device_array"])
def test_checked_native_failure_leaves_arrays_untouched(kind: str) -> None:
    host = np.arange(128, dtype=np.float32)
    before = host.copy()
    arg = host if kind == "numpy" else clpy.to_device(host, "sim")
    with clpy.sim.config(checks=("bounds",)):
        with pytest.raises(clpy.sim.SimulationError):
            oob[(128,), (64,)](arg, 8, device="sim")
    assert "fired" in (clpy.sim.why_not(oob) or "")
    got = host if kind == "numpy" else arg.get()
    assert got.tobytes() == before.tobytes()


@pytest.mark.parametrize("kind", ["numpy", "device_array"])
def test_checked_native_detection_reruns_from_the_shared_snapshot(
    kind: str, saves: list[int]
) -> None:
    """The detector fires after the native run wrote ``x``: the NumPy engine's re-run starts
    from the runtime's snapshot (one copy per written array, written in place: a DeviceArray
    or a NumPy argument) and its result stands."""
    host = np.arange(128, dtype=np.float32)
    arg = host.copy() if kind == "numpy" else clpy.to_device(host, "sim")
    out = np.zeros(128, np.float32)
    with clpy.sim.config(checks=("bounds",)):
        racy_bump[(128,), (64,)](arg, out, device="sim")
    assert saves == [128, 128]  # x and out, once each
    assert "races checker fired" in (clpy.sim.why_not(racy_bump) or "")
    got = arg if kind == "numpy" else arg.get()
    assert got.tobytes() == (host + np.float32(1.0)).tobytes()  # once, not twice
    ref = np.zeros(128, np.float32)
    with clpy.sim.config(engine="numpy", checks=("bounds",)):
        racy_bump[(128,), (64,)](host.copy(), ref, device="sim")
    assert out.tobytes() == ref.tobytes()


@pytest.mark.parametrize("checks", [(), ("bounds", "races")])
def test_pieces_give_the_same_bytes(monkeypatch: pytest.MonkeyPatch, checks: Any) -> None:
    """A long launch runs in pieces of groups: the same bytes as the NumPy engine."""
    monkeypatch.setattr(chunks, "PIECE_S", 0.0)  # one group per piece
    host = np.linspace(-3, 3, 64 * 40, dtype=np.float32)
    want = host.copy()
    with clpy.sim.config(engine="numpy", checks=checks):
        slow[(want.size,), (64,)](want, 7, device="sim")
    for threads in (1, 2):
        got = clpy.to_device(host, "sim")
        _fresh_kernel(slow)
        with clpy.sim.config(checks=checks, threads=threads):
            slow[(host.size,), (64,)](got, 7, device="sim")
        assert clpy.sim.why_not(slow) is None
        assert got.get().tobytes() == want.tobytes()


def test_cancel_flag_stops_a_kernel_at_its_next_poll() -> None:
    """engine.h: a set flag makes CLPY_BACKEDGE() jump back to clpy_enter (CANCELLED);
    clpy_run called directly has no landing place and runs on."""
    src = (
        '#include "prelude.h"\n#include "engine.h"\n'
        "int clpy_run(void **A, const int64_t *N, int64_t g0, int64_t g1) {\n"
        "    int64_t *x = (int64_t *)A[0];\n"
        "    for (int64_t g = g0; g < g1; g++) {\n"
        "        CLPY_BACKEDGE();\n"
        "        x[0] += 1;\n"
        "        if (x[0] == 5) *clpy_cancel_ptr() = 1;\n"
        "    }\n"
        "    return 0;\n}\n"
    )
    lib = chunks.Library(compiler.build(src))
    import ctypes

    x = np.zeros(1, np.int64)
    ptrs = (ctypes.c_void_p * 1)(x.ctypes.data)
    geo = (ctypes.c_int64 * 9)()
    assert lib.enter(ptrs, geo, 0, 100) == chunks.CANCELLED
    assert x[0] == 5 and lib.flag.value == 1
    assert lib.fn(ptrs, geo, 0, 10) == 0 and x[0] == 15  # no landing place: runs on
    lib.flag.value = 0
    assert lib.enter(ptrs, geo, 0, 10) == 0 and x[0] == 25


@pytest.mark.parametrize("checks", [(), ("bounds",)])
@pytest.mark.parametrize("kind", ["numpy", "device_array"])
def test_ctrl_c_stops_a_long_native_launch(kind: str, checks: Any) -> None:
    """Ctrl-C (a timer thread's ``_thread.interrupt_main``) during a long native launch of
    many groups: it stops within a piece, and the caller's array keeps its bits, also after a
    while (no chunk writes into it later)."""
    n = 64 * 16384  # ~30 s natively
    host = np.arange(n, dtype=np.float32)
    before = host.copy()
    arg = host if kind == "numpy" else clpy.to_device(host, "sim")
    with clpy.sim.config(checks=checks):
        slow[(64,), (64,)](np.zeros(64, np.float32), 3, device="sim")  # compiled
        assert clpy.sim.why_not(slow) is None
        _fresh_kernel(slow)  # a first launch: long
        timer = threading.Timer(0.3, _thread.interrupt_main)
        start = time.monotonic()
        timer.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                slow[(n,), (64,)](arg, 20000, device="sim")
                time.sleep(60)  # only reached if the launch ended before the timer fired
        finally:
            timer.cancel()
    assert time.monotonic() - start < 10
    time.sleep(0.3)
    got = host if kind == "numpy" else arg.get()
    assert got.tobytes() == before.tobytes()


def test_progress_bar_for_a_long_native_launch(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("tqdm")
    monkeypatch.setattr(sim_progress, "PROGRESS_AFTER_S", 0.0)  # "long" from the start
    monkeypatch.delenv("CLPY_PROGRESS", raising=False)
    x = np.zeros(64 * 256, np.float32)
    with clpy.sim.config(checks=()):
        slow[(64,), (64,)](np.zeros(64, np.float32), 3, device="sim")  # compiled
        _fresh_kernel(slow)
        slow[(x.size,), (64,)](x, 20000, device="sim")  # ~0.5 s
    assert clpy.sim.why_not(slow) is None
    assert "clpy sim" in capsys.readouterr().err


def test_ctrl_c_during_a_short_native_launch_raises_after_it(saves: list[int]) -> None:
    """A launch expected to be short (the kernel's launches before were quick; here its loop
    count grew) takes no snapshot and runs to its end: Ctrl-C then raises, with the results
    in the arrays."""
    host = np.linspace(0, 1, 64 * 8, dtype=np.float32)
    want = clpy.to_device(host, "sim")
    got = clpy.to_device(host, "sim")
    with clpy.sim.config(checks=(), threads=1):
        for _ in range(3):  # quick launches: the time per group is known and small
            slow[(host.size,), (64,)](clpy.to_device(host, "sim"), 1, device="sim")
        slow[(host.size,), (64,)](want, 1 << 19, device="sim")
        _fresh_kernel(slow)  # forget that one's time: the estimate comes from quick ones
        for _ in range(3):
            slow[(host.size,), (64,)](clpy.to_device(host, "sim"), 1, device="sim")
        before = len(saves)
        timer = threading.Timer(0.05, _thread.interrupt_main)
        timer.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                slow[(host.size,), (64,)](got, 1 << 19, device="sim")
                time.sleep(60)  # only reached if the launch ended before the timer fired
        finally:
            timer.cancel()
    assert len(saves) == before
    assert got.get().tobytes() == want.get().tobytes()


def test_short_native_launch_writes_numpy_arguments_in_place(
    monkeypatch: pytest.MonkeyPatch, saves: list[int]
) -> None:
    """A written NumPy argument is written in place: no copy in or out on a short native
    launch; the same bytes as the NumPy engine, which copies it (a snapshot) first."""
    copies: list[int] = []  # np.array calls (the runtime's copy of an argument)
    host = np.linspace(-2, 2, 256, dtype=np.float32)
    want = host.copy()
    with clpy.sim.config(engine="numpy", checks=()):
        bump[(256,), (64,)](want, 256, device="sim")
    x = host.copy()
    with clpy.sim.config(checks=()):
        bump[(256,), (64,)](x.copy(), 256, device="sim")  # the first launch: long
        before = len(saves)
        monkeypatch.setattr(np, "array", _counting(np.array, copies))
        bump[(256,), (64,)](x, 256, device="sim")
    assert len(saves) == before and copies == []
    assert x.tobytes() == want.tobytes()


def _counting(f: Any, calls: list[int]) -> Any:
    def wrapper(*a: Any, **k: Any) -> Any:
        calls.append(1)
        return f(*a, **k)

    return wrapper


@clpy.kernel
def hist(x: Global[int32], h: Global[int32], n: int32):
    i = clpy.get_global_id(0)
    if i < n:
        clpy.atomic_add(h, x[i] % 16, 1)


def _compiled_of(k: Any) -> list[Any]:
    return [
        c
        for fn, per in list(runner._CACHE.items())
        if fn.name == k.__name__
        for c in per.values()
        if isinstance(c, runner._Compiled)
    ]


def test_a_kernel_with_a_solo_path_weighs_one_thread_against_many(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Global atomics are plain when one call runs every group (``clpy_solo``), so one thread
    may beat many (sim_bench's histogram on 16 cores: 4.7 ms on one thread, 19.6 ms on two):
    the first launch runs on the threads allowed, the next on one, the later ones on whichever
    was faster per group at that size; the counts are the same every time."""
    x = np.arange(1 << 18, dtype=np.int32) * 7
    want = np.bincount(x % 16, minlength=16).astype(np.int32)
    used: list[int] = []
    real = runner._Compiled.weigh

    def spy(self: Any, total: int, threads: int, est: Any) -> int:
        got = real(self, total, threads, est)
        used.append(got)
        return got

    monkeypatch.setattr(runner._Compiled, "weigh", spy)
    with clpy.sim.config(checks=False, engine="native", threads=4):
        for _ in range(4):
            h = np.zeros(16, np.int32)
            hist[x.size, 64](x, h, np.int32(x.size), device="sim")
            np.testing.assert_array_equal(h, want)
    (c,) = _compiled_of(hist)
    assert c.solo and runner.SOLO_MARK in c.source  # the generator's test, as the runner reads it
    # the launches the runner ran on threads: 4, then 1, then the faster (the first always
    # is one: nothing measured yet)
    assert used and used[0] == 4
    total = x.size // 64
    if len(used) >= 2:
        assert used[:2] == [4, 1] and {(total, 1), (total, 4)} <= set(c.trial)
        best = 1 if c.trial[total, 1] <= c.trial[total, 4] else 4
        assert all(u == best for u in used[2:])


def test_weigh_one_thread_against_many() -> None:
    """Short launches (and any of a kernel with a solo path) try one thread once per size;
    long ones keep every thread."""
    c = runner._Compiled.__new__(runner._Compiled)
    c.trial = {}
    c.solo = False
    assert c.weigh(100, 8, None) == 8  # nothing measured: no trial
    assert c.weigh(100, 8, 1.0) == 8  # long on one thread: never tried there
    c.weighed(100, 8, 2e-4)
    assert c.weigh(100, 8, 1e-3) == 1  # short: one thread next
    c.weighed(100, 1, 1e-4)
    assert c.weigh(100, 8, 1e-3) == 1  # one thread was faster per group
    assert c.weigh(200, 8, 1e-3) == 8  # another size: measured afresh
    c.weighed(100, 1, 3e-4)
    assert c.weigh(100, 8, 1e-3) == 8
    c.solo = True
    assert c.weigh(300, 8, 5.0) == 8
    c.weighed(300, 8, 1.0)
    assert c.weigh(300, 8, 5.0) == 1  # a solo path is tried whatever the length


def test_gathers_by_cpu_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Work-item loops that keep index tests are left unvectorized where gathers are slow (AMD),
    vectorized elsewhere (Intel); CLPY_SIM_NATIVE_GATHERS=0/1 decides instead."""
    monkeypatch.setenv("CLPY_SIM_NATIVE_GATHERS", "0")
    compiler.slow_gathers.cache_clear()
    try:
        assert compiler.slow_gathers() is True
        monkeypatch.setenv("CLPY_SIM_NATIVE_GATHERS", "1")
        compiler.slow_gathers.cache_clear()
        assert compiler.slow_gathers() is False
        monkeypatch.delenv("CLPY_SIM_NATIVE_GATHERS")
        compiler.slow_gathers.cache_clear()
        with open("/proc/cpuinfo") as f:
            amd = "AuthenticAMD" in f.read()
        assert compiler.slow_gathers() is amd
    finally:
        compiler.slow_gathers.cache_clear()
