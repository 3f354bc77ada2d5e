"""The native engine's specialised work-item loops (sim/native/cgen_region.py): index clamps
proved away before the loop, loops split at a condition on the local id, plain updates of
local memory and of a launch run by one call; each compared byte for byte with the NumPy
engine, on parameters that make the fast copy's tests fail (indices out of range, int32
wrap-around) as well as pass."""

from __future__ import annotations

import _thread
import threading
import time
from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, float32, int16, int32, uint32
from clpy_sim.native import runner
from clpy_sim.native.cgen import Geometry, generate

pytestmark = pytest.mark.filterwarnings("ignore::clpy.UniformityWarning")


@pytest.fixture(autouse=True)
def _strict(monkeypatch: pytest.MonkeyPatch) -> None:
    """A C compiler error on a generated source fails the test (no quiet fall-back)."""
    monkeypatch.setenv("CLPY_SIM_NATIVE_STRICT", "1")


BIG = 2**31 - 10
SMALL = -(2**31) + 3


@clpy.kernel
def k_split(x: Global[float32], out: Global[float32], s: int32, k: int32):
    lid = clpy.get_local_id(0)
    gid = clpy.get_global_id(0)
    tmp = clpy.local_array(float32, 64)
    tmp[lid] = x[gid]
    clpy.barrier()
    acc = tmp[lid]
    if lid < s:
        acc += tmp[lid + k]
    clpy.barrier()
    if lid <= s:
        acc += tmp[lid - k]
    else:
        acc -= 1.0
    clpy.barrier()
    if s > lid:
        acc *= 2.0
    clpy.barrier()
    if lid >= s:
        acc += tmp[s - lid + 3]
    clpy.barrier()
    if lid == s:
        acc += 5.0
    clpy.barrier()
    if lid != k:
        acc += tmp[lid]
    clpy.barrier()
    if lid > k:
        acc += x[gid + s]
    clpy.barrier()
    if gid + s < k:
        acc -= 0.5
    out[gid] = acc


@clpy.kernel
def k_flat(x: Global[float32], y: Global[float32], k: int32, n: int32):
    gid = clpy.get_global_id(0)
    j = gid * 3 - k
    m = int16(gid) + int16(k)
    if gid < n:
        y[gid] = x[j] + x[gid + k] + x[m] + x[n - gid]
    if gid == k:
        y[0] += 1.0


@clpy.kernel
def k_scattered(x: Global[float32], y: Global[float32]):
    gid = clpy.get_global_id(0)
    s = float32(0.0)
    for j in range(4):
        s += x[(gid * 4 + j) % 500] * x[gid % 3]
    y[gid] = s


@clpy.kernel
def k_counters(x: Global[float32], y: Global[float32], k: int32):
    gid = clpy.get_global_id(0)
    p = clpy.private_array(float32, 4)
    s = float32(0.0)
    for i in range(4):
        p[i] = x[gid + i * k]
        for j in range(i + 1):
            s += x[gid * 4 + j - i] * p[j]
    for i in range(3, -1, -1):
        s -= p[3 - i] * x[i + k]
    y[gid] = s


@clpy.kernel
def k_unsigned(x: Global[int32], y: Global[int32], u: uint32):
    gid = clpy.get_global_id(0)
    y[gid] = x[uint32(gid) + u] + x[uint32(gid) * uint32(2)]


@clpy.kernel
def k_2d(x: Global[float32], y: Global[float32], k: int32):
    tx = clpy.get_local_id(0)
    gx = clpy.get_global_id(0)
    gy = clpy.get_global_id(1)
    w = clpy.get_global_size(0)
    tmp = clpy.local_array(float32, 16)
    tmp[tx] = x[gy * w + gx]
    clpy.barrier()
    if tx < k:
        y[gy * w + gx] = tmp[tx + 1] + tmp[k - tx]


@clpy.kernel
def k_2d_more(x: Global[float32], y: Global[float32], k: int32):
    tx = clpy.get_local_id(0)
    ty = clpy.get_local_id(1)
    li = clpy.get_local_linear_id()
    tmp = clpy.local_array(float32, 64)
    tmp[li] = x[clpy.get_global_id(1) * 32 + clpy.get_global_id(0)]
    clpy.barrier()
    v = tmp[ty * tx + k] + tmp[li - k]
    if tx < ty:
        v += tmp[ty - tx]
    clpy.barrier()
    if tx >= k:
        v *= 2.0
    y[clpy.get_global_id(1) * 32 + clpy.get_global_id(0)] = v


@clpy.kernel
def k_atomics(x: Global[uint32], h: Global[int32], lo: Global[int32]):
    lh = clpy.local_array(int32, 16)
    lm = clpy.local_array(int32, 1)
    lid = clpy.get_local_id(0)
    if lid < 16:
        lh[lid] = 0
    if lid == 0:
        lm[0] = 1 << 30
    clpy.barrier()
    v = x[clpy.get_global_id(0)]
    clpy.atomic_inc(lh, v % 16)
    clpy.atomic_sub(lh, (v >> 4) % 16, 3)
    clpy.atomic_min(lm, 0, int32(v % 1000))
    clpy.barrier()
    if lid < 16:
        clpy.atomic_add(h, lid, lh[lid])
    if lid == 0:
        clpy.atomic_max(lo, 0, lm[0])
        clpy.atomic_xor(lo, 1, lm[0])


@clpy.func
def spin(n: int32) -> int32:
    i = 0
    t = 0
    while i < n:
        t += i
        i += 1
    return t


@clpy.kernel
def k_loops(y: Global[int32], n: int32):
    gid = clpy.get_global_id(0)
    acc = spin(n)
    for k in range(n):
        acc += k
    for k in range(8):  # (constant trips: no poll)
        acc += k
    y[gid] = acc


@clpy.kernel
def k_forever(x: Global[int32], n: int32):
    i = 0
    while x[0] == 0:
        i += 1
    for k in range(n):
        i += k
    x[1] = i


@clpy.kernel
def k_forever_group(x: Global[int32], n: int32):
    t = clpy.local_array(int32, 4)
    lid = clpy.get_local_id(0)
    while x[0] == 0:
        t[lid] += n
        clpy.barrier()
    x[1] = t[lid]


def _run(k: Any, gs: Any, ls: Any, args: list[Any], **cfg: Any) -> list[Any]:
    out = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with clpy.sim.config(checks=False, **cfg):
        k[gs, ls](*out, device="sim")
    return out


def _compare(k: Any, gs: Any, ls: Any, args: list[Any], threads: int = 1) -> None:
    ref = _run(k, gs, ls, args, engine="numpy")
    got = _run(k, gs, ls, args, engine="native", threads=threads)
    assert runner.why_not(k) is None
    for a, b in zip(ref, got):
        if isinstance(a, np.ndarray):
            assert a.tobytes() == b.tobytes()


RNG = np.random.default_rng(11)


@pytest.mark.parametrize("s", [-5, 0, 1, 10, 63, 64, 200, BIG, SMALL])
@pytest.mark.parametrize("k", [0, 1, 40, -3, BIG])
def test_split_loops(s: int, k: int) -> None:
    x = RNG.uniform(-9, 9, 256).astype(np.float32)
    _compare(k_split, (256,), (64,), [x, np.zeros(256, np.float32), np.int32(s), np.int32(k)])


@pytest.mark.parametrize("k", [0, 5, -7, 300, BIG, SMALL, 2**15 - 3])
@pytest.mark.parametrize("n", [0, 100, 1000, BIG])
def test_barrier_free_indices(k: int, n: int) -> None:
    x = RNG.uniform(-9, 9, 1000).astype(np.float32)
    _compare(k_flat, (640,), (64,), [x, np.zeros(640, np.float32), np.int32(k), np.int32(n)])


def test_region_kept_as_one_loop() -> None:
    """Most indices are not affine: the region keeps its one loop, its clamps back."""
    x = RNG.uniform(-9, 9, 512).astype(np.float32)
    _compare(k_scattered, (128,), (32,), [x, np.zeros(128, np.float32)])
    src, _ = generate(k_scattered.specialize().function, Geometry(1, (32, 1, 1)))
    assert "clpy_hx" not in src and "CLPY_IXU(" not in src.split("int clpy_run")[1]


@pytest.mark.parametrize("n", [512, 509, 300])
@pytest.mark.parametrize("k", [0, 1, 5, -2, 200, BIG])
def test_loop_counters_in_indices(n: int, k: int) -> None:
    """Indices with counters of loops of constant trips (and of ``range(i + 1)`` inside one)
    are proved in range at the corners of the counters' ranges too."""
    x = RNG.uniform(-9, 9, n).astype(np.float32)
    _compare(k_counters, (128,), (32,), [x, np.zeros(128, np.float32), np.int32(k)])
    src, _ = generate(k_counters.specialize().function, Geometry(1, (32, 1, 1)))
    assert "CLPY_IXU((int64_t)(j), 4)" in src and "CLPY_POLL(clpy_tk" not in src


@pytest.mark.parametrize("u", [0, 3, 200, 2**32 - 5, 2**31])
def test_unsigned_indices(u: int) -> None:
    x = RNG.integers(-99, 99, 300).astype(np.int32)
    _compare(k_unsigned, (256,), (32,), [x, np.zeros(256, np.int32), np.uint32(u)])


@pytest.mark.parametrize("ls", [(16, 1), (8, 2)])
@pytest.mark.parametrize("k", [-1, 3, 15, 16, 40])
def test_two_dimensions(ls: tuple[int, int], k: int) -> None:
    x = RNG.uniform(-9, 9, 64 * 4).astype(np.float32)
    _compare(k_2d, (64, 4), ls, [x, np.zeros(64 * 4, np.float32), np.int32(k)])


@pytest.mark.parametrize("ls", [(8, 8), (16, 4), (32, 2)])
@pytest.mark.parametrize("k", [-9, 0, 3, 40])
def test_two_dimensional_rows(ls: tuple[int, int], k: int) -> None:
    x = RNG.uniform(-9, 9, 32 * 8).astype(np.float32)
    _compare(k_2d_more, (32, 8), ls, [x, np.zeros(32 * 8, np.float32), np.int32(k)])
    src, _ = generate(k_2d_more.specialize().function, Geometry(2, (*ls, 1)))
    assert "for (int64_t clpy_lx = 0; clpy_lx < clpy_lo; clpy_lx++) {" in src


@pytest.mark.parametrize("threads", [1, 2])
def test_local_and_solo_atomics(threads: int) -> None:
    x = RNG.integers(0, 2**32, 1 << 14).astype(np.uint32)
    args = [x, np.zeros(16, np.int32), np.array([-5, 7], np.int32)]
    _compare(k_atomics, (1 << 14,), (64,), args, threads=threads)


def test_loops_poll_the_cancel_flag() -> None:
    _compare(k_loops, (128,), (32,), [np.zeros(128, np.int32), np.int32(9)])
    src, _ = generate(k_loops.specialize(n=int32).function, Geometry(1, (32, 1, 1)))
    # the device function's while and the kernel's for (in each copy of its region's loop)
    # poll every 1024 trips, the group loop once per group, the loop of 8 trips never
    func = src[src.index("static int32_t clpy_f_spin") : src.index("int clpy_run(")]
    run = src[src.index("int clpy_run(") :]
    assert func.count("CLPY_POLL(clpy_tk") == 1
    assert run.count("CLPY_POLL(clpy_tk") == 2 and run.count("CLPY_BACKEDGE();") == 1
    src, _ = generate(k_flat.specialize().function, Geometry(1, (32, 1, 1)))
    run = src[src.index("int clpy_run(") :]
    assert "CLPY_POLL(clpy_tk" not in src and run.count("CLPY_BACKEDGE();") == 1


def test_tree_reduction_source() -> None:
    """The tree reduction's level is a loop over its active work-items, unclamped indices."""
    src, _ = generate(k_split.specialize().function, Geometry(1, (64, 1, 1)))
    assert "for (int64_t wi = clpy_lo; wi < clpy_hi; wi++) {" in src
    assert "CLPY_IXU((int64_t)(((int32_t)((uint32_t)(lid) + (uint32_t)(clpy_a_k)))), 64)" in src


@pytest.mark.parametrize(
    "k, x0, n", [(k_forever, 0, 1), (k_forever, 1, 2**31 - 1), (k_forever_group, 0, 1)]
)
def test_ctrl_c_stops_an_endless_work_item_loop(k: Any, x0: int, n: int) -> None:
    """Ctrl-C stops a work-item's endless while loop, its for loop of 2^31 trips, or a loop
    with a barrier run once per group, at a poll of the cancel flag; the array keeps its
    bits."""
    x = np.array([x0, 5], np.int32)
    with clpy.sim.config(checks=False, engine="native", threads=1):
        k[(4,), (4,)](np.array([1, 0], np.int32), 3, device="sim")  # (compiled)
        # (a launch the runner takes for a first one: long, run where Ctrl-C can stop it;
        # sim/native/chunks.py)
        for fn, per in list(runner._CACHE.items()):
            if fn.name == k.__name__:
                for c in per.values():
                    if isinstance(c, runner._Compiled):
                        c.per_group = None
        timer = threading.Timer(0.3, _thread.interrupt_main)
        start = time.monotonic()
        timer.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                k[(4,), (4,)](x, n, device="sim")
                time.sleep(60)  # only reached if the launch ended before the timer fired
        finally:
            timer.cancel()
    assert time.monotonic() - start < 10
    assert x.tolist() == [x0, 5]
