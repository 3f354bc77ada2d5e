"""Device-side enqueue (OpenCL C 2.0 §1.13.17) and the kernel queries: recursive kernels on the
simulator against NumPy, the emitted blocks built by Oclgrind's OpenCL C 2.0 compiler, and the
FeatureError on devices without ``__opencl_c_device_enqueue`` (PoCL here, NVIDIA)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, Local, float32, int32
from clpy.runtime.api import get_device

sys.path.insert(0, str(Path(__file__).parent))
from oclgrind_kernels import build_on_oclgrind  # noqa: E402

WAIT_KERNEL = clpy.CLK_ENQUEUE_FLAGS_WAIT_KERNEL
NO_WAIT = clpy.CLK_ENQUEUE_FLAGS_NO_WAIT
SMALL = 8  # quicksort: segments this short are sorted by insertion


@clpy.kernel
def quicksort(a: Global[int32], lo: int32, hi: int32):
    """Sorts a[lo:hi]: one work-item partitions around the middle element, then enqueues
    itself on both sides (the classic recursive device-side enqueue)."""
    if hi - lo <= SMALL:
        for i in range(lo + 1, hi):
            v = a[i]
            j = i - 1
            while j >= lo and a[j] > v:
                a[j + 1] = a[j]
                j -= 1
            a[j + 1] = v
    else:
        m = lo + (hi - lo) // 2
        pivot = a[m]
        a[m] = a[hi - 1]
        a[hi - 1] = pivot
        store = lo
        for i in range(lo, hi - 1):
            if a[i] < pivot:
                t = a[i]
                a[i] = a[store]
                a[store] = t
                store += 1
        a[hi - 1] = a[store]
        a[store] = pivot
        q = clpy.get_default_queue()
        clpy.enqueue_kernel(q, WAIT_KERNEL, clpy.ndrange_1D(1), quicksort, a, lo, store)
        clpy.enqueue_kernel(q, WAIT_KERNEL, clpy.ndrange_1D(1), quicksort, a, store + 1, hi)


@clpy.kernel
def depths(left: Global[int32], right: Global[int32], out: Global[int32], node: int32,
           d: int32):
    """Two work-items per node: the first walks to the left child, the second to the right;
    each enqueues the walk below its child (per-work-item captures)."""
    g = clpy.get_global_id(0)
    c = left[node] if g == 0 else right[node]
    if c >= 0:
        out[c] = d + 1
        clpy.enqueue_kernel(clpy.get_default_queue(), NO_WAIT, clpy.ndrange_1D(2), depths,
                            left, right, out, c, d + 1)


@clpy.kernel
def combine(left: Global[int32], right: Global[int32], val: Global[int32],
            total: Global[int32], node: int32):
    t = val[node]
    if left[node] >= 0:
        t += total[left[node]]
    if right[node] >= 0:
        t += total[right[node]]
    total[node] = t


@clpy.kernel
def subtree_sums(left: Global[int32], right: Global[int32], val: Global[int32],
                 total: Global[int32], node: int32):
    """Post-order through events: the children's walks (each complete only when everything
    it enqueued is), a marker on their events, then ``combine`` waiting on the marker."""
    q = clpy.get_default_queue()
    evs = clpy.private_array(clpy.clk_event_t, 3)
    n = 0
    lc = left[node]
    rc = right[node]
    if lc >= 0:
        clpy.enqueue_kernel(q, NO_WAIT, clpy.ndrange_1D(1), 0, None, evs + n, subtree_sums,
                            left, right, val, total, lc)
        n += 1
    if rc >= 0:
        clpy.enqueue_kernel(q, NO_WAIT, clpy.ndrange_1D(1), 0, None, evs + n, subtree_sums,
                            left, right, val, total, rc)
        n += 1
    if n > 0:
        clpy.enqueue_marker(q, n, evs, evs + 2)
        clpy.enqueue_kernel(q, NO_WAIT, clpy.ndrange_1D(1), 1, evs + 2, None, combine, left,
                            right, val, total, node)
        for k in range(n):
            clpy.release_event(evs[k])
        clpy.release_event(evs[2])
    else:
        total[node] = val[node]


@clpy.kernel
def group_sums(x: Global[float32], out: Global[float32], tmp: Local[float32]):
    lid = clpy.get_local_id(0)
    tmp[lid] = x[clpy.get_global_id(0)]
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    if lid == 0:
        s = 0.0
        for i in range(clpy.get_local_size(0)):
            s += tmp[i]
        out[clpy.get_group_id(0)] = s


@clpy.kernel
def launch_group_sums(x: Global[float32], out: Global[float32], n: int32, wg: int32,
                      err: Global[int32]):
    if clpy.get_global_id(0) == 0:
        err[0] = clpy.enqueue_kernel(clpy.get_default_queue(), WAIT_KERNEL,
                                     clpy.ndrange_1D(n, wg), group_sums, x, out,
                                     clpy.local_bytes(wg * 4))


@clpy.kernel
def lambda_blocks(x: Global[float32], out: Global[float32], n: int32, wg: int32,
                  err: Global[int32]):
    """The spec's block spelled as a lambda: ``^(local void *tmp){group_sums(x, out, tmp);}``
    with its size after it, and ``^{mark(...);}``."""
    q = clpy.get_default_queue()
    err[0] = clpy.enqueue_kernel(q, WAIT_KERNEL, clpy.ndrange_1D(n, wg),
                                 lambda tmp: group_sums(x, out, tmp), wg * 4)
    err[1] = clpy.enqueue_kernel(q, NO_WAIT, clpy.ndrange_1D(1), lambda: scale_at(x, n, 0.5))


@clpy.func
def scale_at(x: Global[float32], i: int32, f: float32):
    x[i] = x[i] * f


@clpy.kernel
def scale_by_func(x: Global[float32], f: float32):
    i = clpy.get_global_id(0)
    clpy.enqueue_kernel(clpy.get_default_queue(), NO_WAIT, clpy.ndrange_1D(1), scale_at, x,
                        i, f)


@clpy.kernel
def user_events(out: Global[int32], status: int32):
    """A child waiting on a user event: runs once the event is CL_COMPLETE, never when the
    event is set to an error; is_valid_event before and after release."""
    q = clpy.get_default_queue()
    u = clpy.private_array(clpy.clk_event_t, 2)
    u[0] = clpy.create_user_event()
    out[0] = clpy.enqueue_kernel(q, NO_WAIT, clpy.ndrange_1D(1), 1, u, u + 1, mark, out, 1)
    out[2] = int(clpy.is_valid_event(u[0]))
    clpy.set_user_event_status(u[0], status)
    clpy.release_event(u[0])


@clpy.kernel
def mark(out: Global[int32], i: int32):
    out[i] = 7


@clpy.kernel
def forever(x: Global[int32], d: int32):
    x[0] = d
    clpy.enqueue_kernel(clpy.get_default_queue(), WAIT_KERNEL, clpy.ndrange_1D(1), forever, x,
                        d + 1)


@clpy.kernel
def never_set(out: Global[int32]):
    u = clpy.private_array(clpy.clk_event_t, 1)
    u[0] = clpy.create_user_event()
    clpy.enqueue_kernel(clpy.get_default_queue(), NO_WAIT, clpy.ndrange_1D(1), 1, u, None,
                        mark, out, 0)


@clpy.kernel
def queries(out: Global[int32], n: int32, wg: int32):
    out[0] = clpy.get_kernel_work_group_size(mark, out, 0)
    out[1] = clpy.get_kernel_preferred_work_group_size_multiple(mark, out, 0)
    nd = clpy.ndrange_1D(n, wg)
    out[2] = clpy.get_kernel_max_sub_group_size_for_ndrange(nd, mark, out, 0)
    out[3] = clpy.get_kernel_sub_group_count_for_ndrange(nd, mark, out, 0)
    nd3 = clpy.ndrange_3D((n, 2, 2), (wg, 2, 1))
    out[4] = clpy.get_kernel_sub_group_count_for_ndrange(nd3, mark, out, 0)
    out[5] = clpy.enqueue_kernel(clpy.get_default_queue(), NO_WAIT, clpy.ndrange_1D(1), mark,
                                 out, 6)


@clpy.kernel
def countdown(q: clpy.queue_t, x: Global[int32], n: int32):
    """The spec's "complete example" shape: the queue is a kernel parameter, passed on."""
    x[clpy.get_global_id(0)] = n
    if n > 0:
        clpy.enqueue_kernel(q, WAIT_KERNEL, clpy.ndrange_1D(1), countdown, q, x, n - 1)


@clpy.kernel
def widen(x: Global[int32], n):
    """Enqueues itself with a long ``n``: a second specialization of one kernel, renamed."""
    x[0] = x[0] + 1
    if n > 0:
        clpy.enqueue_kernel(clpy.get_default_queue(), WAIT_KERNEL, clpy.ndrange_1D(1), widen, x,
                            clpy.int64(n) - 1)


@clpy.kernel
def profiled(out: Global[int32], times: Global[clpy.uint64], err: Global[int32],
             f: Global[float32]):
    q = clpy.get_default_queue()
    ev = clpy.private_array(clpy.clk_event_t, 1)
    err[0] = clpy.enqueue_kernel(q, clpy.CLK_ENQUEUE_FLAGS_WAIT_WORK_GROUP, clpy.ndrange_1D(1),
                                 0, None, ev, mark, out, 0)
    clpy.retain_event(ev[0])
    clpy.capture_event_profiling_info(ev[0], clpy.CLK_PROFILING_COMMAND_EXEC_TIME, times)
    clpy.release_event(ev[0])
    clpy.release_event(ev[0])
    err[1] = clpy.enqueue_kernel(q, NO_WAIT, clpy.ndrange_2D((4, 4), (2, 0)), mark, out, 1)
    err[2] = clpy.enqueue_kernel(q, NO_WAIT, clpy.ndrange_1D(4, 2), group_sums, f, f,
                                 clpy.local_bytes(0))


@clpy.kernel(fp_contract=True)
def fused(x: Global[float32], a: float32, b: float32, c: float32, n: int32):
    x[n] = a * b + c
    if n > 0:
        clpy.enqueue_kernel(clpy.get_default_queue(), WAIT_KERNEL, clpy.ndrange_1D(1), fused, x,
                            a, b, c, n - 1)


@clpy.kernel
def poke(p: clpy.Ptr[int32]):
    p[0] = 1


@clpy.kernel
def generic_to_local(t: Local[int32]):
    q: clpy.Ptr[int32] = t
    clpy.enqueue_kernel(clpy.get_default_queue(), NO_WAIT, clpy.ndrange_1D(1), poke, q)


def _sim(k: Any, g: int, l_: int, *args: Any) -> None:
    k[(g,), (l_,)](*args, device="sim")


# ----------------------------------------------------------------------------- simulator


def test_recursive_quicksort_matches_numpy() -> None:
    rng = np.random.default_rng(17)
    a = rng.integers(-1000, 1000, 200).astype(np.int32)
    with clpy.sim.config(enqueue_depth=64):
        got = a.copy()
        _sim(quicksort, 1, 1, got, 0, len(a))
    np.testing.assert_array_equal(got, np.sort(a))


def _tree(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A random binary tree on nodes 0..n-1 (root 0): each node hangs under a random earlier
    node with a free slot."""
    rng = np.random.default_rng(seed)
    left = np.full(n, -1, np.int32)
    right = np.full(n, -1, np.int32)
    for v in range(1, n):
        while True:
            p = int(rng.integers(0, v))
            side = left if rng.random() < 0.5 else right
            if side[p] < 0:
                side[p] = v
                break
    return left, right


def test_parallel_tree_walk_depths() -> None:
    left, right = _tree(40, 3)
    out = np.full(40, -1, np.int32)
    out[0] = 0
    _sim(depths, 2, 2, left, right, out, 0, 0)
    want = np.full(40, -1, np.int32)
    want[0] = 0
    stack = [0]
    while stack:
        v = stack.pop()
        for c in (left[v], right[v]):
            if c >= 0:
                want[c] = want[v] + 1
                stack.append(int(c))
    np.testing.assert_array_equal(out, want)


def test_subtree_sums_through_events_and_markers() -> None:
    left, right = _tree(25, 5)
    val = np.arange(1, 26, dtype=np.int32) * 3
    total = np.zeros(25, np.int32)
    _sim(subtree_sums, 1, 1, left, right, val, total, 0)

    def ref(v: int) -> int:
        return int(val[v]) + sum(ref(int(c)) for c in (left[v], right[v]) if c >= 0)

    np.testing.assert_array_equal(total, [ref(v) for v in range(25)])


def test_local_memory_block_arguments() -> None:
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(4, np.float32)
    err = np.full(1, 99, np.int32)
    _sim(launch_group_sums, 1, 1, x, out, 64, 16, err)
    assert err[0] == clpy.CLK_SUCCESS.value
    np.testing.assert_array_equal(out, x.reshape(4, 16).sum(axis=1))


def test_blocks_written_as_lambdas() -> None:
    x = np.arange(65, dtype=np.float32)
    out = np.zeros(4, np.float32)
    err = np.full(2, 99, np.int32)
    _sim(lambda_blocks, 1, 1, x, out, 64, 16, err)
    assert list(err) == [0, 0]
    np.testing.assert_array_equal(out, np.arange(64).reshape(4, 16).sum(axis=1))
    assert x[64] == 32.0 and x[63] == 63.0
    src = lambda_blocks.source
    assert "^(local void *clpy_l0){group_sums(x, out, (__local float*)clpy_l0);}, " in src
    assert "^{scale_at(x, n, 0.5f);}" in src


def test_device_function_child_per_work_item() -> None:
    x = np.arange(8, dtype=np.float32)
    _sim(scale_by_func, 8, 4, x, 2.0)
    np.testing.assert_array_equal(x, np.arange(8) * 2.0)


def test_user_events_gate_the_child() -> None:
    out = np.zeros(3, np.int32)
    _sim(user_events, 1, 1, out, clpy.CL_COMPLETE.value)
    np.testing.assert_array_equal(out, [0, 7, 1])  # CLK_SUCCESS, the child ran, valid
    out = np.zeros(3, np.int32)
    _sim(user_events, 1, 1, out, -5)
    np.testing.assert_array_equal(out, [0, 0, 1])  # failed event: the child never runs


def test_depth_limit_and_deadlock_are_clear_errors() -> None:
    x = np.zeros(1, np.int32)
    with clpy.sim.config(enqueue_depth=5), pytest.raises(
        clpy.sim.SimulationError, match=r"enqueue_depth=5"
    ) as e:
        _sim(forever, 1, 1, x, 0)
    assert "test_device_enqueue.py" in str(e.value)
    with pytest.raises(clpy.sim.SimulationError, match="never complete"):
        _sim(never_set, 1, 1, np.zeros(1, np.int32))


def test_child_specialized_for_other_types_is_renamed() -> None:
    x = np.zeros(1, np.int32)
    _sim(widen, 1, 1, x, 3)
    assert x[0] == 4
    src = widen.specialize(n=int32).source
    assert "__kernel void widen(__global int* x, int n)" in src
    assert "__kernel void widen_global_intp_long(__global int* x, long n)" in src
    assert "^{widen_global_intp_long(x, (long)n - 1);}" in src


def test_profiling_and_error_codes() -> None:
    out = np.zeros(2, np.int32)
    times = np.full(2, 99, np.uint64)
    err = np.full(3, 1, np.int32)
    f = np.zeros(4, np.float32)
    _sim(profiled, 1, 1, out, times, err, f)
    assert list(err) == [clpy.CLK_SUCCESS.value, clpy.CLK_INVALID_NDRANGE.value,
                         clpy.CLK_INVALID_ARG_SIZE.value]
    assert list(out) == [7, 0]
    assert times[0] == times[1] and times[0] != 99  # END - START, COMPLETE - START in ns


def test_contracted_kernel_enqueues_its_contracted_self() -> None:
    a = np.float32(1 + 2.0**-12)
    x = np.zeros(3, np.float32)
    _sim(fused, 1, 1, x, a, a, np.float32(-1), 2)
    np.testing.assert_array_equal(x, np.float32(2.0**-11 + 2.0**-24))  # one rounding each
    assert "fma(a, b, c)" in fused.source


def test_queue_parameters() -> None:
    x = np.zeros(3, np.int32)
    _sim(countdown, 2, 1, "default", x, 3)
    np.testing.assert_array_equal(x, [0, 3, 0])  # item 1 wrote 3; item 0's chain ends at 0
    assert "__kernel void countdown(queue_t q, __global int* x, int n)" in countdown.source
    with pytest.raises(TypeError, match=r"parameter 'q' \(queue_t\): pass \"default\""):
        _sim(countdown, 1, 1, None, x, 1)


def test_generic_pointer_into_local_memory_is_reported() -> None:
    with pytest.raises(clpy.sim.SimulationError, match="points to local memory `t`"):
        _sim(generic_to_local, 1, 1, clpy.LocalMemory(4))


def test_checkers_run_inside_children() -> None:
    x = np.zeros(4, np.int32)
    with pytest.raises(clpy.sim.SimulationError, match="out of bounds") as e:
        _sim(depths, 2, 2, np.array([1, 5, -1, -1], np.int32), np.full(4, -1, np.int32),
             x, 0, 0)
    assert "test_device_enqueue.py" in str(e.value)
    np.testing.assert_array_equal(x, 0)  # the parent's store to x[1] is rolled back too


def test_kernel_queries_on_the_simulator() -> None:
    out = np.zeros(7, np.int32)
    with clpy.sim.config(max_work_group_size=256, sub_group_size=16):
        _sim(queries, 1, 1, out, 100, 40)
    assert list(out) == [256, 16, 16, 3, 5, 0, 7]  # 40 * 2 items: 5 sub-groups of 16


# ----------------------------------------------------------------------------- emission


def test_emitted_blocks() -> None:
    src = quicksort.source
    assert "enqueue_kernel(q, CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_1D(1), " in src
    assert "^{quicksort(a, lo, store);}" in src
    assert "queue_t q = get_default_queue();" in src
    gs = launch_group_sums.source
    assert "^(local void *clpy_l0){group_sums(x, out, (__local float*)clpy_l0);}" in gs
    assert "__kernel void group_sums(" in gs
    q = queries.source
    assert "ndrange_3D((__private size_t[3]){" in q
    assert "get_kernel_work_group_size(^{mark(out, 0);})" in q
    ss = subtree_sums.source
    assert "clk_event_t evs[3];" in ss and "enqueue_marker(q, (uint)n, evs, evs + 2)" in ss


def test_no_device_enqueue_is_a_feature_error(cl_device: Any) -> None:
    assert "enqueue_kernel" in quicksort.source  # the 2.0 text is there
    with pytest.raises(clpy.FeatureError, match="device-side enqueue"):
        quicksort.source_for("opencl-c-1.2")
    dev = get_device(cl_device)
    a = np.arange(4, dtype=np.int32)
    with pytest.raises(clpy.FeatureError, match="__opencl_c_device_enqueue"):
        quicksort[(1,), (1,)](a, 0, 4, device=dev)
    np.testing.assert_array_equal(a, np.arange(4))
    out = np.zeros(7, np.int32)
    with pytest.raises(clpy.FeatureError, match="device-side enqueue"):
        queries[(1,), (1,)](out, 8, 4, device=dev)  # the kernel queries need blocks too


def test_host_makes_one_default_device_queue_per_context() -> None:
    """clpy/runtime/device_queue.py, with a stand-in for pyopencl (no device here has
    device-side enqueue): ON_DEVICE | ON_DEVICE_DEFAULT | out of order, made once."""
    from types import SimpleNamespace

    from clpy.runtime.device_queue import DeviceQueues

    made: list[tuple[Any, Any, int]] = []
    props = SimpleNamespace(ON_DEVICE=4, ON_DEVICE_DEFAULT=8, OUT_OF_ORDER_EXEC_MODE_ENABLE=1)

    def queue(ctx: Any, dev: Any, properties: int) -> object:
        made.append((ctx, dev, properties))
        return object()

    cl = SimpleNamespace(command_queue_properties=props, CommandQueue=queue)
    queues = DeviceQueues()
    ctx, dev = object(), object()
    q = queues.ensure(cl, ctx, dev)
    assert queues.ensure(cl, ctx, dev) is q
    assert made == [(ctx, dev, 13)]


# ----------------------------------------------------------------------------- frontend


@clpy.kernel
def captures_local(x: Global[int32], t: Local[int32]):
    clpy.enqueue_kernel(clpy.get_default_queue(), NO_WAIT, clpy.ndrange_1D(1), mark, t, 0)


@clpy.kernel
def captures_private(x: Global[int32]):
    tmp = clpy.private_array(int32, 4)
    clpy.enqueue_kernel(clpy.get_default_queue(), NO_WAIT, clpy.ndrange_1D(1), mark, tmp, 0)


@clpy.kernel
def captures_a_read(x: Global[int32]):
    clpy.enqueue_kernel(clpy.get_default_queue(), NO_WAIT, clpy.ndrange_1D(1), mark, x, x[0])


@clpy.kernel
def captures_an_id(x: Global[int32]):
    clpy.enqueue_kernel(clpy.get_default_queue(), NO_WAIT, clpy.ndrange_1D(1), mark, x,
                        clpy.get_global_id(0))


@clpy.kernel
def no_child(x: Global[int32]):
    clpy.enqueue_kernel(clpy.get_default_queue(), NO_WAIT, clpy.ndrange_1D(1), x, 0)


@clpy.kernel
def local_unannotated(x: Global[float32]):
    clpy.enqueue_kernel(clpy.get_default_queue(), NO_WAIT, clpy.ndrange_1D(1), scale_at, x,
                        clpy.local_bytes(4), 1.0)


@clpy.kernel
def lambda_without_size(x: Global[float32], out: Global[float32]):
    clpy.enqueue_kernel(clpy.get_default_queue(), NO_WAIT, clpy.ndrange_1D(1),
                        lambda t: group_sums(x, out, t))


@clpy.kernel
def lambda_not_a_call(x: Global[float32]):
    clpy.enqueue_kernel(clpy.get_default_queue(), NO_WAIT, clpy.ndrange_1D(1), lambda: x)


@pytest.mark.parametrize(
    ("k", "pattern"),
    [
        (captures_local, r"cannot capture 't', a pointer to Local memory"),
        (captures_private, r"cannot capture 'tmp', a pointer to Private memory"),
        (captures_a_read, r"'x\[0\]' would be evaluated when the child runs"),
        (captures_an_id, r"calls get_global_id"),
        (no_child, r"needs a child to run"),
        (local_unannotated, r"annotate it clpy.Local\[T\]"),
        (lambda_without_size, r"1 local-memory parameter\(s\) and 0 size\(s\) follow it"),
        (lambda_not_a_call, r"a block lambda calls a @clpy.kernel or @clpy.func"),
    ],
)
def test_frontend_errors_point_at_the_call(k: Any, pattern: str) -> None:
    with pytest.raises(clpy.CompileError, match=pattern) as e:
        k.source  # noqa: B018
    assert "test_device_enqueue.py:" in str(e.value)


# ----------------------------------------------------------------------------- Oclgrind

def test_enqueue_sources_build_with_an_opencl_c_2_compiler(tmp_path: Path) -> None:
    """PoCL has no device-side enqueue; Oclgrind's Clang (OpenCL C 2.0) builds every emitted
    enqueue kernel (its runtime has no on-device queue, so nothing runs there)."""
    kernels = [quicksort, depths, subtree_sums, launch_group_sums, scale_by_func, user_events,
               forever, never_set, queries, countdown, profiled, lambda_blocks]
    sources = [k.source for k in kernels] + [widen.specialize(n=int32).source]
    build_on_oclgrind(sources, tmp_path)
