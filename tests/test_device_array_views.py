"""``clpy.DeviceArray`` indexing (clpy/abi/device_array.py, clpy/abi/array_index.py): one-element
reads, views that share the buffer (as kernel arguments too: sub-buffers where aligned, copies
where not), region writes, NumPy's errors for what a device region cannot be; the same results
on the simulator and on PoCL."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, float32, int32
from clpy.runtime import transfers


@clpy.kernel
def add_one(x: Global[float32], y: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    if i < n:
        y[i] = x[i] + 1.0


@clpy.kernel
def write_then_read(x: Global[float32], y: Global[float32], out: Global[float32], k: int32):
    # y[i] is x[i + k] when y is the view starting k elements into x: one memory
    i = clpy.get_global_id(0)
    y[i] = 5.0
    out[i] = x[i + k]


@clpy.kernel
def scale(x: Global[float32]):
    i = clpy.get_global_id(0)
    x[i] = x[i] * 2.0


@clpy.kernel
def write_past_end(y: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    y[i] = 7.0
    y[i + n] = 1.0  # out of the view's bounds: the simulator stops the launch


def _align(dev: Any) -> int:
    """Elements of float32 per base-address alignment (any view is aligned on the sim)."""
    return 1 if dev.is_sim else dev.cl_device.mem_base_addr_align // 32


def test_one_element_reads_are_numpy_scalars(dev: Any) -> None:
    h = np.arange(24, dtype=np.float32).reshape(4, 6)
    d = clpy.to_device(h, dev)
    for key in [(1, 2), (-1, -1), (0, 5), (3, -6)]:
        got = d[key]
        assert type(got) is np.float32 and got == h[key]
    v = clpy.to_device(np.arange(10, dtype=np.int64), dev)
    assert type(v[3]) is np.int64 and v[3] == 3 and v[-1] == 9
    assert float(v[2:5][1]) == 3.0  # a view's element
    assert d[2][4] == h[2, 4]


def test_views_read_write_and_share_memory(dev: Any) -> None:
    h = np.arange(100, dtype=np.float32)
    d = clpy.to_device(h, dev)
    v = d[10:20]
    assert isinstance(v, clpy.DeviceArray) and v.base is d and v.shape == (10,)
    assert v.device == d.device and len(v) == 10 and v.dtype == np.float32
    np.testing.assert_array_equal(v.get(), h[10:20])
    np.testing.assert_array_equal(np.asarray(v), h[10:20])
    w = v[2:5]  # a view of a view
    assert w.base is d
    np.testing.assert_array_equal(w.get(), h[12:15])
    v.set(np.full(10, -1, np.float32))
    want = h.copy()
    want[10:20] = -1
    np.testing.assert_array_equal(d.get(), want)
    np.testing.assert_array_equal(d[...].get(), want)
    np.testing.assert_array_equal(d[None].get(), want[None])
    np.testing.assert_array_equal(d[95:1000].get(), want[95:])  # clipped, as in NumPy
    np.testing.assert_array_equal(d[2:8:1].get(), want[2:8])
    np.testing.assert_array_equal(d[-5:].get(), want[-5:])
    assert d[5:5].shape == (0,) and d[5:5].get().shape == (0,)
    out = np.empty(10, np.float32)
    assert v.get(out=out) is out
    np.testing.assert_array_equal(out, -1)


def test_region_writes(dev: Any) -> None:
    h = np.arange(40, dtype=np.float32)
    d = clpy.to_device(h, dev)
    want = h.copy()
    for key, val in [
        (slice(3, 7), np.array([9, 8, 7, 6])),  # converted to float32, as NumPy does
        (slice(33, 40), 0.5),  # a scalar fills
        (11, -3),
        (Ellipsis, want * 0 + 2),
    ]:
        d[key] = val
        want[key] = val
        np.testing.assert_array_equal(d.get(), want)
    d[0:10] = d[5:15]  # overlapping source: NumPy's result
    want[0:10] = want[5:15].copy()
    np.testing.assert_array_equal(d.get(), want)
    e = clpy.to_device(np.arange(10, dtype=np.float32), dev)
    d[20:30] = e  # device to device
    want[20:30] = np.arange(10)
    np.testing.assert_array_equal(d.get(), want)


def test_multidimensional_views(dev: Any) -> None:
    h = np.arange(5 * 6 * 4, dtype=np.float32).reshape(5, 6, 4)
    d = clpy.to_device(h, dev)
    keys: list[Any] = [
        1,
        (slice(1, 3),),
        (2, slice(1, 4)),
        (slice(1, 4), slice(2, 5)),  # rectangular, not contiguous
        (slice(None), 1),  # a column of rows: strided rows
        (slice(None), slice(None), 2),  # one element per row: stride 16 bytes
        (Ellipsis, slice(1, 3)),
        (1, None, slice(2, 4), slice(0, 3)),
    ]
    for key in keys:
        v = d[key]
        np.testing.assert_array_equal(v.get(), h[key], err_msg=str(key))
        assert v.shape == h[key].shape and v.flags.c_contiguous == h[key].flags.c_contiguous
        np.testing.assert_array_equal(v.copy().get(), h[key])
    want = h.copy()
    for k, key in enumerate(keys):
        val = np.arange(h[key].size, dtype=np.float32).reshape(h[key].shape) - 100 * k
        d[key] = val
        want[key] = val
        np.testing.assert_array_equal(d.get(), want, err_msg=str(key))
    d[1:4, 2:5] = 7.0  # scalar into a rectangle
    want[1:4, 2:5] = 7.0
    d[:, 0] = np.arange(4, dtype=np.float32)  # broadcast a row
    want[:, 0] = np.arange(4)
    np.testing.assert_array_equal(d.get(), want)


@pytest.mark.parametrize(
    ("key", "exc", "msg"),
    [
        (slice(0, 10, 2), ValueError, "step 1, got step 2 on axis 0"),
        ((slice(None), slice(None, None, -1)), ValueError, "step -1 on axis 1"),
        ([1, 2], TypeError, "fancy indexing, on axis 0"),
        (np.array([0, 1]), TypeError, "fancy indexing"),
        (True, TypeError, "boolean index on axis 0"),
        ((0, 1.5), IndexError, "got float 1.5 on axis 1"),
        (6, IndexError, "index 6 is out of bounds for axis 0 with size 6"),
        ((0, -5), IndexError, "index -5 is out of bounds for axis 1 with size 4"),
        ((0, 0, 0), IndexError, "2-dimensional, but 3 were indexed"),
        ((Ellipsis, Ellipsis), IndexError, "single ellipsis"),
        (slice("a", 3), TypeError, "slice bounds must be integers"),
    ],
)
def test_index_errors_name_what_is_wrong(dev: Any, key: Any, exc: type, msg: str) -> None:
    h = np.arange(24, dtype=np.float32).reshape(6, 4)
    d = clpy.to_device(h, dev)
    with pytest.raises(exc, match=msg.replace("(", "\\(").replace(")", "\\)").replace(".", "\\.")):
        d[key]
    with pytest.raises(exc):
        d[key] = 0.0
    np.testing.assert_array_equal(d.get(), h)  # nothing written


def test_bad_writes_leave_the_array_untouched(dev: Any) -> None:
    h = np.arange(10, dtype=np.float32)
    d = clpy.to_device(h, dev)
    with pytest.raises(ValueError, match=r"broadcast values of shape \(3,\) into .* \(4,\)"):
        d[0:4] = np.ones(3)
    with pytest.raises(ValueError, match="expected shape"):
        d[2:5].set(np.ones(4))
    np.testing.assert_array_equal(d.get(), h)


def test_kernels_take_aligned_views_in_place(dev: Any) -> None:
    a = _align(dev)
    n = 4 * a
    d = clpy.to_device(np.arange(n, dtype=np.float32), dev)
    y = clpy.zeros((n,), np.float32, dev)
    add_one[a](d[a : 2 * a], y[2 * a : 3 * a], np.int32(a), device=dev)
    want = np.zeros(n, np.float32)
    want[2 * a : 3 * a] = np.arange(a, 2 * a) + 1
    np.testing.assert_array_equal(y.get(), want)
    rows = clpy.to_device(np.ones((4, a), np.float32), dev)
    scale[a](rows[2], device=dev)  # a row of a 2-D array
    np.testing.assert_array_equal(rows.get()[:, 0], [1, 1, 2, 1])


@pytest.mark.parametrize("wait", [True, False])
def test_kernels_take_misaligned_views_through_a_copy(dev: Any, wait: bool) -> None:
    h = np.arange(100, dtype=np.float32)
    d = clpy.to_device(h, dev)
    y = clpy.zeros((100,), np.float32, dev)
    x_view, y_view = d[1:11], y[3:13]
    assert dev.is_sim or (x_view.staged and y_view.staged)
    got = add_one[10](x_view, y_view, np.int32(10), device=dev, wait=wait)
    if got is not None:
        got.wait()
    want = np.zeros(100, np.float32)
    want[3:13] = h[1:11] + 1
    np.testing.assert_array_equal(y.get(), want)
    np.testing.assert_array_equal(d.get(), h)  # read only: not copied back
    scale[5](d[7:12], device=dev)  # written in place, only there
    h2 = h.copy()
    h2[7:12] *= 2
    np.testing.assert_array_equal(d.get(), h2)


@pytest.mark.parametrize("wait", [True, False])
def test_copied_views_reuse_pooled_buffers(cl_device: Any, monkeypatch: Any, wait: bool) -> None:
    """A misaligned view travels in a buffer of the launch queue's pool (as NumPy arguments
    do), given back once its copy-back is enqueued: launch after launch the same buffers,
    each filled again before its kernel runs."""
    import pyopencl as cl

    dev = clpy.get_device(cl_device)
    pool = transfers.pool_for(cl, dev.queue)
    assert pool is not None
    taken: list[Any] = []
    take = pool.take
    monkeypatch.setattr(pool, "take", lambda n: taken.append(take(n)) or taken[-1])
    h = np.arange(100, dtype=np.float32)
    d = clpy.to_device(h, dev)
    y = clpy.zeros((100,), np.float32, dev)
    handles = []
    for k in range(4):
        d[1:11] = h[1:11] + k  # new data in the view each time
        got = add_one[10](d[1:11], y[3:13], np.int32(10), device=dev, wait=wait)
        np.testing.assert_array_equal(y[3:13].get(), h[1:11] + k + 1)
        scale[10](d[1:11], device=dev, wait=wait)  # written: copied back, in order
        handles.append(got)
    for got in handles:
        if got is not None:
            got.wait()
    want = h.copy()
    want[1:11] = (h[1:11] + 3) * 2
    np.testing.assert_array_equal(d.get(), want)
    assert len(taken) == 12 and all(b.size == 40 for b in taken)
    assert len({b.int_ptr for b in taken}) == 2  # the first launch's two, ever after


def test_copied_views_from_another_queue(cl_device: Any) -> None:
    """A launch on another queue of the array's context: the view's queue is finished before
    the device copy into the launch queue's pooled buffer."""
    import pyopencl as cl

    dev = clpy.get_device(cl_device)
    q2 = cl.CommandQueue(dev.context, cl_device)
    h = np.arange(64, dtype=np.float32)
    d = clpy.to_device(h, dev)
    y = clpy.zeros((64,), np.float32, dev)
    for _ in range(2):
        scale[8](d[3:11], device=dev, wait=False)  # pending on the array's queue
        add_one[8](d[3:11], y[5:13], np.int32(8), device=q2)
    h2 = h.copy()
    h2[3:11] *= 4
    np.testing.assert_array_equal(d.get(), h2)
    want = np.zeros(64, np.float32)
    want[5:13] = h2[3:11] + 1
    np.testing.assert_array_equal(y.get(), want)
    # the array's queue held back by a user event: the launch on q2 returns (it does not
    # block the host on that queue), and its copy of the view waits for the scale before it
    gate = cl.UserEvent(dev.context)
    cl.enqueue_barrier(dev.queue, wait_for=[gate])
    first = scale[8](d[3:11], device=dev, wait=False)
    second = add_one[8](d[3:11], y[5:13], np.int32(8), device=q2, wait=False)
    gate.set_status(cl.command_execution_status.COMPLETE)
    assert first is not None and second is not None
    first.wait()
    second.wait()
    h2[3:11] *= 2
    want[5:13] = h2[3:11] + 1
    np.testing.assert_array_equal(d.get(), h2)
    np.testing.assert_array_equal(y.get(), want)


def test_overlapping_views_are_one_memory(dev: Any) -> None:
    a = _align(dev)
    d = clpy.to_device(np.zeros(3 * a, np.float32), dev)
    out = clpy.zeros((a,), np.float32, dev)
    write_then_read[a](d[0 : 2 * a], d[a : 2 * a], out, np.int32(a), device=dev)
    np.testing.assert_array_equal(out.get(), 5)  # y's write seen through x


def test_overlapping_copied_views_are_an_error(cl_device: Any) -> None:
    # (on the simulator every view is bound in place: the test above)
    dev = clpy.get_device(cl_device)
    d = clpy.to_device(np.zeros(300, np.float32), dev)
    out = clpy.zeros((10,), np.float32, dev)
    with pytest.raises(ValueError, match="'x' and 'y' are overlapping parts of one DeviceArray"):
        write_then_read[10](d[0:20], d[3:13], out, np.int32(3), device=dev)
    np.testing.assert_array_equal(d.get(), 0)
    np.testing.assert_array_equal(out.get(), 0)


def test_views_that_are_not_contiguous_are_no_kernel_arguments(dev: Any) -> None:
    d = clpy.to_device(np.ones((4, 8), np.float32), dev)
    with pytest.raises(ValueError, match="parameter 'x'.*not contiguous.*view.copy"):
        scale[8](d[:, 0:2], device=dev)
    np.testing.assert_array_equal(d.get(), 1)


def test_failed_launch_leaves_views_untouched_on_the_simulator() -> None:
    dev = clpy.get_device("sim")
    h = np.arange(20, dtype=np.float32)
    d = clpy.to_device(h, dev)
    with pytest.raises(clpy.sim.SimulationError):
        write_past_end[4](d[2:6], np.int32(4), device=dev)
    np.testing.assert_array_equal(d.get(), h)


def test_failed_launch_leaves_copied_views_untouched(cl_device: Any, monkeypatch: Any) -> None:
    import pyopencl as cl

    dev = clpy.get_device(cl_device)
    h = np.arange(20, dtype=np.float32)
    d = clpy.to_device(h, dev)
    scale[4](d[1:5], device=dev)  # built and run once
    h[1:5] *= 2

    record = cl._cl._ErrorRecord(
        "clEnqueueNDRangeKernel failed (injected)",
        cl.status_code.OUT_OF_HOST_MEMORY,
        "clEnqueueNDRangeKernel",
    )

    def refuse(*a: Any, **k: Any) -> Any:
        raise cl.RuntimeError(record)

    monkeypatch.setattr(cl, "enqueue_nd_range_kernel", refuse)
    with pytest.raises(clpy.LaunchError, match="injected"):
        scale[4](d[1:5], device=dev)
    monkeypatch.undo()
    np.testing.assert_array_equal(d.get(), h)


@pytest.fixture
def small_staging(monkeypatch: Any) -> Any:
    """Pinned staging (on PoCL too) with 1 MiB chunks from 1 MiB up, so offsets meet ragged
    chunks fast."""
    monkeypatch.setattr(transfers, "STAGE_CPU_DEVICES", True)
    monkeypatch.setattr(transfers, "CHUNK", 1 << 20)
    monkeypatch.setattr(transfers, "STAGE_MIN", 1 << 20)
    transfers.clear_pools()
    yield
    transfers.clear_pools()  # the next staging area gets the real chunk size


def test_large_views_move_through_pinned_staging(cl_device: Any, small_staging: Any) -> None:
    import pyopencl as cl

    dev = clpy.get_device(cl_device)
    n = (5 << 20) // 8 + 11  # 2.5 chunks of float32 and a ragged end
    h = np.random.default_rng(3).random(n + 100, dtype=np.float32)
    d = clpy.to_device(h, dev)
    v = d[37 : 37 + n]
    assert transfers.staging_of(cl, dev.queue, h) is not None
    np.testing.assert_array_equal(v.get(), h[37 : 37 + n])
    v.set(h[:n] * 2)
    want = h.copy()
    want[37 : 37 + n] = h[:n] * 2
    np.testing.assert_array_equal(d.get(), want)


def _gather(buf: np.ndarray, lay: Any) -> bytes:
    """What the rectangular copies of ``rect_blocks`` read from the bytes ``buf``, done on
    the host by the spec's addressing (offset + x + y*row_pitch + z*slice_pitch)."""
    from clpy.abi.array_index import rect_blocks

    out = bytearray(lay.nbytes)
    for hoff, r in rect_blocks(lay):
        w, rows, slices = r.region
        k = hoff
        for z in range(slices):
            for yy in range(rows):
                start = r.offset + yy * r.pitches[0] + z * r.pitches[1]
                out[k : k + w] = buf[start : start + w].tobytes()
                k += w
    return bytes(out)


def test_index_layouts_match_numpy_views() -> None:
    from clpy.abi.array_index import Layout, index_layout

    rng = np.random.default_rng(7)
    a = np.arange(2 * 5 * 6 * 7, dtype=np.int32).reshape(2, 5, 6, 7)
    raw = a.reshape(-1).view(np.uint8)
    base = a.__array_interface__["data"][0]
    for _ in range(300):
        key: list[Any] = []
        for n in a.shape[: rng.integers(0, 5)]:
            kind = rng.integers(0, 3)
            if kind == 0:
                key.append(int(rng.integers(-n, n)))
            elif kind == 1:
                lo, hi = sorted(rng.integers(-n - 2, n + 3, size=2))
                key.append(slice(int(lo), int(hi)))
            else:
                key.append(slice(None))
        if rng.integers(0, 3) == 0:  # '...' stands for the axes not named (from the end)
            key = [*key[: rng.integers(0, len(key) + 1)], Ellipsis]
        for _ in range(rng.integers(0, 3)):
            key.insert(int(rng.integers(0, len(key) + 1)), None)
        want = a[tuple(key)]
        lay = index_layout(Layout.contiguous(a.shape, 4), tuple(key))
        assert lay.shape == np.shape(want), key
        if lay.size == 0 or not lay.shape:
            continue
        assert lay.offset == want.__array_interface__["data"][0] - base, key
        assert lay.c_contiguous == want.flags.c_contiguous, key
        assert _gather(raw, lay) == np.ascontiguousarray(want).tobytes(), key


def test_views_of_four_unmergeable_axes(dev: Any) -> None:
    h = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    d = clpy.to_device(h, dev)
    key = (slice(None), slice(1, 3), slice(1, 3), slice(1, 4))  # two rectangular copies
    np.testing.assert_array_equal(d[key].get(), h[key])
    np.testing.assert_array_equal(d[key].copy().get(), h[key])
    d[key] = -h[key]
    want = h.copy()
    want[key] = -h[key]
    np.testing.assert_array_equal(d.get(), want)


def test_scalar_fill_of_records(dev: Any) -> None:
    rec = np.dtype([("a", np.int32), ("b", np.float32), ("c", np.int32)])  # 12 bytes
    h = np.zeros(6, rec)
    d = clpy.to_device(h, dev)
    d[1:4] = np.array((1, 2.5, 3), rec)  # no 12-byte fill pattern: written as values
    h[1:4] = np.array((1, 2.5, 3), rec)
    assert d.get().tobytes() == h.tobytes()
    assert d[2] == h[2]


def test_a_region_indexed_again_is_the_same_view(cl_device: Any) -> None:
    """``d[a:b]`` again (while a view of that region is alive) is the same object: a loop
    launching on fresh slices repeats the launch without converting its arguments again. The
    array keeps its views weakly: dropping both frees the device memory at once."""
    import gc
    import weakref

    dev = clpy.get_device(cl_device)
    a = _align(dev)
    d = clpy.to_device(np.zeros(3 * a, np.float32), dev)
    v = d[a : 2 * a]
    assert d[a : 2 * a] is v and d[a : 2 * a][0:a] is v and d[a:][0:a] is v
    assert d[a : 2 * a + 1] is not v and d[2 * a :] is not v
    for _ in range(4):
        add_one[a](d[0:a], d[a : 2 * a], np.int32(a), device=dev)
    # add_one may have plans for this device from other tests (other argument kinds): the
    # one these launches used holds them for its repeat path
    agains = [
        p._again
        for key, p in add_one.launches.plans.items()
        if key[1] is dev and getattr(p, "_again", None) is not None
    ]
    assert any(ag[1][1] is v for ag in agains)  # the repeat path held the same view
    np.testing.assert_array_equal(d.get()[a : 2 * a], 1)
    e = clpy.to_device(np.zeros(3 * a, np.float32), dev)
    root = weakref.ref(e)
    gc.disable()
    try:
        w = e[0:a]
        assert e[0:a] is w and e[1 : a + 1].staged
        w.get()
        del e, w
        assert root() is None  # no cycle between an array and its views
    finally:
        gc.enable()


def test_one_dimensional_slices_match_numpy() -> None:
    """The shortcut for ``d[a:b]`` of a 1-D array (clpy/abi/array_index.py) gives NumPy's
    view, from a whole array and from a view, and NumPy's errors."""
    from clpy.abi.array_index import Layout, index_layout

    a = np.arange(40, dtype=np.float64)
    base = a.__array_interface__["data"][0]
    rng = np.random.default_rng(11)
    for start in (0, 8 * 3):
        lay0 = Layout.contiguous((40 - start // 8,), 8, start)
        for _ in range(200):
            lo, hi = (int(x) if rng.integers(0, 4) else None for x in rng.integers(-45, 46, 2))
            key = slice(lo, hi, 1 if rng.integers(0, 2) else None)
            want = a[start // 8 :][key]
            lay = index_layout(lay0, key)
            assert lay.shape == want.shape, key
            if want.size:
                assert lay.offset == want.__array_interface__["data"][0] - base, key
            assert lay == index_layout(lay0, (key,)), key  # the general path agrees
    with pytest.raises(ValueError, match="step 1, got step 2 on axis 0"):
        index_layout(Layout.contiguous((10,), 4), slice(0, 8, 2))
    with pytest.raises(TypeError, match="slice bounds must be integers"):
        index_layout(Layout.contiguous((10,), 4), slice(0.5, 3))


def test_sub_buffers_are_released_newest_first(cl_device: Any, monkeypatch: Any) -> None:
    """NVIDIA's OpenCL (driver 580) crashed releasing a sub-buffer a kernel had used while a
    newer sub-buffer overlapping it was alive (benchmarks/results/segv_diag_h100_s9.md), and
    the garbage collector and interpreter exit release in no particular order. A root keeps
    its views' sub-buffers and releases them newest first when it goes; beyond ``_SUB_KEEP``
    it releases the newest ones nothing else holds."""
    import gc

    from clpy.abi import device_array as da

    released: list[str] = []

    class Buf:
        def __init__(self, name: str) -> None:
            self.name = name

        def release(self) -> None:
            released.append(self.name)

    subs = da._SubBuffers()
    held = [Buf("x"), Buf("y")]
    for b in held:
        subs.add(b)
    subs.add(Buf("z"))  # held by the list alone
    subs.trim()
    assert released == ["z"]  # y is held elsewhere: x (older) stays too
    da._SubBuffers.release_all(subs.bufs)
    assert released == ["z", "y", "x"] and not subs.bufs
    monkeypatch.setattr(da, "_SUB_KEEP", 2)
    released.clear()
    subs.add(held[0])
    subs.add(Buf("w"))
    subs.add(Buf("v"))  # over the bound: w goes first
    assert released == ["w"] and [b.name for b in subs.bufs] == ["x", "v"]
    monkeypatch.undo()
    # real views: their sub-buffers belong to the root until it goes, then are released
    d = clpy.to_device(np.arange(64, dtype=np.float32), clpy.get_device(cl_device))
    v, w = d[0:8], d[0:4]  # offset 0: aligned, sub-buffers (overlapping)
    assert v.cl_array is not None and w.cl_array is not None
    bufs = d._sub_buffers().bufs
    assert [b.int_ptr for b in bufs] == [v.cl_array.base_data.int_ptr, w.cl_array.base_data.int_ptr]
    np.testing.assert_array_equal(w.get(), np.arange(4, dtype=np.float32))
    del d, v, w
    gc.collect()
    assert bufs == []  # released, newest first, when the root went
