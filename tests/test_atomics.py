"""Atomics (1.x and C11 forms): emission/lowering, PoCL runs and the simulator's sequential
order semantics."""

from __future__ import annotations

import numpy as np
import pytest

import clpy
import clpy_sim as sim
from clpy import Global, atomic_int, float32, int32, int64, uint32
from clpy.errors import KernelTypeError
from tests.test_collectives_util import cl_target, run_cl


@clpy.kernel
def histogram(x: Global[uint32], h: Global[int32]):
    lh = clpy.local_array(int32, 256)
    lid = clpy.get_local_id(0)
    for b in range(lid, 256, clpy.get_local_size(0)):
        lh[b] = 0
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    clpy.atomic_inc(lh, x[clpy.get_global_id(0)] % 256)
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    for b in range(lid, 256, clpy.get_local_size(0)):
        clpy.atomic_add(h, b, lh[b])


@clpy.kernel
def global_histogram(x: Global[uint32], h: Global[uint32]):
    clpy.atomic_inc(h + x[clpy.get_global_id(0)] % 64)


@clpy.kernel
def counters(c: Global[atomic_int], tick: Global[int32], fsum: Global[float32],
             x: Global[float32], wide: Global[int64], e: Global[int32], bits: Global[int32]):
    g = clpy.get_global_id(0)
    tick[g] = clpy.atomic_fetch_add(c, 1)
    clpy.atomic_fetch_add(fsum, x[g])
    clpy.atomic_add(fsum, 1, x[g])
    clpy.atom_add(wide, int64(g))
    clpy.atomic_fetch_max_explicit(wide + 1, int64(g), clpy.memory_order_relaxed,
                                   clpy.memory_scope_device)
    exp = clpy.private_array(int32, 1)
    exp[0] = 0
    ok = clpy.atomic_compare_exchange_strong(e, exp, int32(g) + 1)
    e[1 + g] = int32(ok)
    clpy.atomic_store(e + 1000, clpy.atomic_load(e))
    clpy.atomic_or(bits, 1 << (int32(g) % 31))
    clpy.atomic_fetch_xor(bits + 1, int32(g))
    clpy.atomic_min(bits, 2, int32(g) - 50)
    clpy.atomic_fetch_and(bits + 3, ~(1 << (int32(g) % 31)))


@clpy.kernel
def cas_loop_add(p: Global[int32], v: Global[float32], x: Global[float32]):
    g = clpy.get_global_id(0)
    old = p[0]
    while True:  # a classic compare-exchange spin: terminates on every device and the sim
        seen = clpy.atomic_cmpxchg(p, old, old + 1)
        if seen == old:
            break
        old = seen
    cur = v[0]
    while True:
        seen_f = clpy.atomic_compare_exchange(v, cur, cur + x[g])
        if seen_f == cur:
            break
        cur = seen_f


@clpy.kernel
def ticket_writes(c: Global[int32], out: Global[int32]):
    t = clpy.atomic_inc(c)
    out[t] = int32(clpy.get_global_id(0))  # assumes tickets follow ids: an order bug


def _counter_args(n: int) -> list[np.ndarray]:
    bits = np.zeros(4, np.int32)
    bits[3] = -1
    return [np.zeros(1, np.int32), np.zeros(n, np.int32), np.zeros(2, np.float32),
            (np.arange(n) % 5 * 0.25).astype(np.float32), np.zeros(2, np.int64),
            np.zeros(1100, np.int32), bits]


def _check_counters(r: list[np.ndarray], n: int, exact_order: bool) -> None:
    c, tick, fsum, x, wide, e, bits = r
    assert c[0] == n
    assert sorted(tick) == list(range(n))  # fetch results form a permutation
    if exact_order:
        assert tick.tolist() == list(range(n))
    assert fsum[0] == pytest.approx(x.sum()) and fsum[1] == pytest.approx(x.sum())
    assert wide.tolist() == [n * (n - 1) // 2, n - 1]
    assert e[1:n + 1].sum() == 1 and e[0] != 0 and e[1000] == e[0]
    g = np.arange(n)
    assert bits[0] == np.bitwise_or.reduce(1 << (g % 31))
    assert bits[1] == np.bitwise_xor.reduce(g.astype(np.int32))
    assert bits[2] == -50
    assert bits[3] == np.int32(~np.bitwise_or.reduce(1 << (g % 31)))


@pytest.mark.parametrize("profile,std", [("opencl-c-1.2", None),
                                         ("opencl-c-3.0", "-cl-std=CL3.0")])
def test_counters_pocl(cl_device, cl_context, cl_queue, profile, std):
    n = 256
    r = run_cl(cl_context, cl_queue, counters.specialize(), cl_target(cl_device, profile),
               (n,), (64,), *_counter_args(n), std=std)
    _check_counters(r, n, exact_order=False)


def test_counters_sim_work_item_order():
    n = 256
    r = _counter_args(n)
    sim.launch(counters.ir, (n,), (64,), r)
    _check_counters(r, n, exact_order=True)
    e = r[5]
    assert e[0] == 1 and e[1] == 1  # work-item 0 wins the compare-exchange


def test_histograms_sim_and_pocl(cl_device, cl_context, cl_queue):
    rng = np.random.default_rng(2)
    x = rng.integers(0, 10_000, 8192).astype(np.uint32)
    want = np.bincount(x % 256, minlength=256)
    _, got = run_cl(cl_context, cl_queue, histogram.specialize(), cl_target(cl_device),
                    (8192,), (128,), x, np.zeros(256, np.int32))
    np.testing.assert_array_equal(got, want)
    h = np.zeros(256, np.int32)
    sim.launch(histogram.ir, (8192,), (128,), [x, h])
    np.testing.assert_array_equal(h, want)
    hg = np.zeros(64, np.uint32)
    sim.launch(global_histogram.ir, (8192,), (256,), [x, hg])
    np.testing.assert_array_equal(hg, np.bincount(x % 64, minlength=64))


def test_cas_loops_sim_and_pocl(cl_device, cl_context, cl_queue):
    n = 192
    x = (np.arange(n) % 7 * 0.5).astype(np.float32)
    args = [np.zeros(1, np.int32), np.zeros(1, np.float32), x]
    p, v, _ = run_cl(cl_context, cl_queue, cas_loop_add.specialize(), cl_target(cl_device),
                     (n,), (64,), *args)
    assert p[0] == n and v[0] == pytest.approx(x.sum())
    sim.launch(cas_loop_add.ir, (n,), (64,), args)
    assert args[0][0] == n
    assert args[1][0] == np.cumsum(x, dtype=np.float32)[-1]  # sequential, work-item order


def test_shuffled_order_exposes_order_bug():
    n = 128
    c, out = np.zeros(1, np.int32), np.zeros(n, np.int32)
    sim.launch(ticket_writes.ir, (n,), (32,), [c, out])
    assert out.tolist() == list(range(n))  # work-item order hides the bug
    c, out = np.zeros(1, np.int32), np.zeros(n, np.int32)
    with clpy.sim.config(atomic_order="shuffled", seed=1):
        sim.launch(ticket_writes.ir, (n,), (32,), [c, out])
    assert sorted(out) == list(range(n)) and out.tolist() != list(range(n))
    c2, out2 = np.zeros(1, np.int32), np.zeros(n, np.int32)
    with clpy.sim.config(atomic_order="shuffled", seed=1):
        sim.launch(ticket_writes.ir, (n,), (32,), [c2, out2])
    np.testing.assert_array_equal(out, out2)  # seeded: reproducible


def test_lowering_texts():
    src12 = counters.source_for("opencl-c-1.2")
    assert "typedef int atomic_int;" in src12
    assert "atomic_add((volatile __global int*)(c), 1)" in src12
    assert "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable" in src12
    assert "atom_max((volatile __global long*)(wide + 1), (long)g)" in src12
    assert "clpy_atomic_addf_global_float(" in src12
    assert "bool clpy_atomic_cas_global_private_int(" in src12
    src20 = counters.source_for("opencl-c-2.0")
    assert "atomic_fetch_add(c, 1)" in src20
    assert "atomic_compare_exchange_strong((volatile __global atomic_int*)(e), exp," in src20
    assert "atomic_fetch_max_explicit((volatile __global atomic_long*)(wide + 1)" in src20
    assert "memory_order_relaxed, memory_scope_device)" in src20


@clpy.kernel
def bad_atomic(x: Global[float32]):
    clpy.atomic_or(x, 1.0)


@clpy.kernel
def bad_private(x: Global[int32]):
    p = clpy.private_array(int32, 2)
    clpy.atomic_add(p, 0, 1)
    x[0] = p[0]


def test_atomic_errors():
    with pytest.raises(KernelTypeError, match="works on int, uint"):
        bad_atomic.source_for("opencl-c-2.0")
    with pytest.raises(KernelTypeError, match="Global, Local or generic pointer"):
        bad_private.source_for("opencl-c-2.0")


@pytest.mark.parametrize("device", ["sim", "pocl"])
def test_through_runtime(cl_device, device):
    """``k[g, l](..., device=...)``: atomic_int parameters take host arrays of int32."""
    dev = "sim" if device == "sim" else next(d for d in clpy.devices() if d != "sim")
    n = 128
    r = _counter_args(n)
    counters[(n,), (32,)](*r, device=dev)
    _check_counters(r, n, exact_order=device == "sim")
