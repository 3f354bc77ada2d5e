"""NumPy arguments through registered host memory (CLPY_STAGING=register,
clpy/runtime/registered.py): USE_HOST_PTR buffers over the pages each array touches (less a
page a neighbour's registration covers), kept per queue, synced by maps of the array's bytes;
the bytes on such a page through pinned slots. Forced on PoCL here (a CPU device
normally copies directly): values, unaligned ends, host changes between launches, reuse,
read-only inputs, the byte bound and clear_caches."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, float32, int32
from clpy.runtime import registered, transfers
from clpy.runtime.api import get_device


@clpy.kernel
def axpy(x: Global[float32], y: Global[float32], a: float32, n: int32):
    i = clpy.get_global_id(0)
    if i < n:
        y[i] = a * x[i] + y[i]


@pytest.fixture
def reg(cl_device: Any, monkeypatch: Any) -> Any:
    """The register pipeline on the test device, from 1 MiB up; its table for the device's
    queue (after the first launch)."""
    for k, v in dict(STAGE_CPU_DEVICES=True, PIPELINE="register", STAGE_MIN=1 << 20).items():
        monkeypatch.setattr(transfers, k, v)
    transfers.clear_pools()
    dev = get_device(cl_device)
    yield dev
    transfers.clear_pools()


def _table(dev: Any) -> registered.Registered:
    entries = [st for _, st in transfers._STAGING.values() if isinstance(st, registered.Registered)]
    assert len(entries) == 1, transfers._STAGING
    return entries[0]


def _launch(dev: Any, x: np.ndarray, y: np.ndarray, a: float) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the repeated-upload hint
        axpy[x.size](x, y, np.float32(a), np.int32(x.size), device=dev)


def _slots_counted(monkeypatch: Any) -> list[int]:
    """The sizes of the pinned end slots the register path takes."""
    sizes: list[int] = []
    real = registered.Registered._slot

    def counted(self: Any, n: int) -> Any:
        sizes.append(n)
        return real(self, n)

    monkeypatch.setattr(registered.Registered, "_slot", counted)
    return sizes


def _spans(t: registered.Registered) -> list[tuple[int, int]]:
    return sorted((a, a + n) for a, n in t._bufs)


def _inside(a: np.ndarray, spans: list[tuple[int, int]]) -> bool:
    lo = a.ctypes.data
    return any(s <= lo and lo + a.nbytes <= e for s, e in spans)


def test_values_ends_and_host_changes(reg: Any, monkeypatch: Any) -> None:
    """Arrays that start and end mid-page: the pages they touch are registered, their bytes
    copied at their offset (no ends: nothing else registered shares their pages)."""
    slots = _slots_counted(monkeypatch)
    n = 3 << 18  # 3 MiB of float32
    pad = 2 * registered.PAGE  # whatever malloc puts next to them shares no page with them
    base = np.arange(n + 7 + pad, dtype=np.float32)
    x = base[3 : 3 + n]  # starts 12 bytes past the allocation: unaligned on both sides
    y = np.ones(n + 2 * pad, np.float32)[pad : pad + n]
    y[:] = 1
    _launch(reg, x, y, 2.0)
    np.testing.assert_array_equal(y, 2 * x + 1)
    t = _table(reg)
    spans = _spans(t)
    assert len(spans) == 2 and all(s % registered.PAGE == 0 for s, _ in spans)
    assert _inside(x, spans) and _inside(y, spans) and not slots
    held = t.held
    x[:] = -1  # the host changes both arrays between launches: the next one sees it
    y[:] = 5
    _launch(reg, x, y, 3.0)
    np.testing.assert_array_equal(y, np.full(n, 2, np.float32))
    assert t.held == held and len(t._bufs) == 2  # the same registrations, reused
    x[0], x[-1], x[n // 2] = 10, 20, 30  # the first and last bytes and the middle
    _launch(reg, x, y, 1.0)
    assert (y[0], y[-1], y[n // 2]) == (12, 22, 32) and y[1] == 1


def test_neighbours_sharing_pages(reg: Any, monkeypatch: Any) -> None:
    """Arrays laid out one after the other (malloc's heap): registrations never share a page,
    so the second array's first page (the first one's last) is left out of its registration
    and its bytes there go through the first array's registration, both ways; once that is
    gone (its array freed), through a pinned slot. The bytes between the arrays (another
    object's), changed by the host between launches, survive the downloads (the maps cover
    the arrays' own bytes only)."""
    slots = _slots_counted(monkeypatch)
    n = (1 << 18) + 5  # 1 MiB + 20 bytes of float32
    block = np.zeros(2 * n + 64, np.float32)
    x = block[3 : 3 + n]
    gap = block[3 + n : 13 + n]  # 40 bytes of something else between the arrays
    y = block[13 + n : 13 + 2 * n]
    x[:] = np.arange(n, dtype=np.float32)
    y[:] = 1
    gap[:] = 7
    for k, a in enumerate((2.0, 3.0)):
        _launch(reg, x, y, a)
        gap[:] = 9 + k  # changed between launches
    np.testing.assert_array_equal(y, 5 * x + 1)
    np.testing.assert_array_equal(gap, 10)
    t = _table(reg)
    spans = _spans(t)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), spans  # no page shared
    assert _inside(x, spans) and not _inside(y, spans) and not slots
    t._forget(next(k for k in t._bufs if _inside(x, [(k[0], k[0] + k[1])])))  # x "freed"
    y[0], y[-1] = 100, 200
    z = np.ones(n, np.float32)
    _launch(reg, z, y, 1.0)  # y's head now through a slot, in and out
    assert (y[0], y[1], y[-1]) == (101, 5 * x[1] + 2, 201) and len(slots) == 2
    np.testing.assert_array_equal(gap, 10)


def test_read_only_input_and_small_arrays(reg: Any) -> None:
    n = 1 << 19
    x = np.linspace(0, 1, n, dtype=np.float32)
    x.flags.writeable = False
    y = np.zeros(n, np.float32)
    _launch(reg, x, y, 4.0)
    np.testing.assert_array_equal(y, 4 * x)
    small_x, small_y = np.ones(1000, np.float32), np.zeros(1000, np.float32)
    _launch(reg, small_x, small_y, 1.0)  # below STAGE_MIN: direct, not registered
    assert (small_y == 1).all()
    assert all(key[1] >= registered.REGISTER_MIN for key in _table(reg)._bufs)


def test_bound_and_clear(reg: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(registered, "REGISTER_BYTES", 5 << 20)
    arrays = [np.full(1 << 19, k, np.float32) for k in range(4)]  # 2 MiB each
    y = np.zeros(1 << 19, np.float32)
    for x in arrays:
        _launch(reg, x, y, 1.0)
    assert (y == sum(range(4))).all()
    t = _table(reg)
    assert t.held <= 5 << 20 and len(t._bufs) <= 2
    clpy.clear_caches()
    assert t.held == 0 and not t._bufs and not transfers._STAGING


def test_download_into_registered_memory(reg: Any) -> None:
    """A device array read back into a NumPy array through the same path."""
    n = 1 << 20
    x = np.arange(n, dtype=np.float32)
    d = clpy.to_device(x, device=reg)
    out = np.empty(n + 3, np.float32)[3:]
    d.get(out=out)
    np.testing.assert_array_equal(out, x)
    assert len(_table(reg)._bufs) == 2  # x's upload and out's download, each registered


def test_overlapping_views_replace_each_other(reg: Any) -> None:
    """Two views of one array whose interiors overlap are never registered at once (the API
    leaves commands on buffers over overlapping host memory undefined)."""
    n = 1 << 20
    big = np.arange(2 * n, dtype=np.float32)
    y = np.zeros(n, np.float32)
    for start in (0, 1024, n // 2, 0):
        y[:] = 0
        _launch(reg, big[start : start + n], y, 1.0)
        np.testing.assert_array_equal(y, big[start : start + n])
        keys = sorted(_table(reg)._bufs)
        assert all(a[0] + a[1] <= b[0] for a, b in zip(keys, keys[1:])), keys


def test_a_registration_does_not_keep_its_array_alive(reg: Any) -> None:
    """The table holds no reference to the arrays: freeing one drops its registration (the
    buffer over its memory is released before NumPy frees the memory), and a view keeps its
    base's registration as long as the view lives."""
    import gc
    import weakref

    n = 1 << 20
    x = np.arange(n, dtype=np.float32)
    y = np.zeros(n, np.float32)
    _launch(reg, x, y, 1.0)
    t = _table(reg)
    assert len(t._bufs) == 2
    alive = weakref.ref(x)
    del x
    gc.collect()
    assert alive() is None  # not kept by its registration
    assert len(t._bufs) == 1 and t.held == next(iter(t._bufs))[1]
    base = np.arange(n + 1024, dtype=np.float32)
    view = base[512 : 512 + n]
    del base
    _launch(reg, view, y, 1.0)
    np.testing.assert_array_equal(y, view + np.arange(n, dtype=np.float32))
    assert len(t._bufs) == 2
    del view  # the last reference to the owner's memory
    gc.collect()
    assert len(t._bufs) == 1
    x2 = np.full(n, 3, np.float32)  # new arrays (maybe at a freed address) register afresh
    _launch(reg, x2, y, 1.0)
    assert len(t._bufs) == 2


def test_default_pipeline_by_vendor() -> None:
    """Registered host memory on NVIDIA (measured there), the pinned pair elsewhere."""

    class Plat:
        def __init__(self, name: str) -> None:
            self.name = name

    class Dev:
        def __init__(self, name: str) -> None:
            self.platform = Plat(name)

    assert transfers.default_pipeline(Dev("NVIDIA CUDA")) == "register"
    assert transfers.default_pipeline(Dev("Portable Computing Language")) == "pair"


@clpy.kernel
def add_rows(
    a: Global[float32], b: Global[float32], c: Global[float32], d: Global[float32], n: int32
):
    i = clpy.get_global_id(0)
    if i < n:
        b[i] = a[i] + b[i]
        d[i] = c[i] * 2.0


def test_ends_through_pinned_slots_and_one_finish(reg: Any, monkeypatch: Any) -> None:
    """A waiting launch enqueues its registered uploads and downloads without a finish each
    (``sync=False``) and finishes once; the unaligned ends go through pinned slots, and a
    download's ends reach the array at that finish. With 3 slots, the fourth end of the
    launch finishes the queue first (every slot in flight)."""
    monkeypatch.setattr(registered, "ENDS_SLOTS", 3)
    # no registration covers the shared pages (as once the neighbours' arrays are freed)
    monkeypatch.setattr(registered.Registered, "_covering", lambda *_: None)
    n = (1 << 19) + 3  # 2 MiB + 12 bytes of float32
    block = np.arange(4 * n + 9, dtype=np.float32)  # one after the other: b, c and d share
    a, b, c, d = (block[1 + k * n : 1 + (k + 1) * n] for k in range(4))  # their first page
    a0, b0, c0 = a.copy(), b.copy(), c.copy()
    finishes = []
    real = registered.Registered.finish

    def counted(self: Any) -> None:
        finishes.append(self.slots.used)
        real(self)

    monkeypatch.setattr(registered.Registered, "finish", counted)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        add_rows[n](a, b, c, d, np.int32(n), device=reg)
    np.testing.assert_array_equal(b, a0 + b0)  # the ends too: first and last elements
    np.testing.assert_array_equal(d, c0 * 2)
    np.testing.assert_array_equal(a, a0)
    assert finishes and finishes[0] == 3 and finishes[-1] <= 3, finishes
    t = _table(reg)
    assert t.slots.used == 0 and not t.slots.landing


def _counting_ring(monkeypatch: Any) -> list[str]:
    """Count the pinned-staging transfers (``transfers.Ring``) the register path hands on."""
    calls: list[str] = []
    up, down = transfers.Ring.upload, transfers.Ring.download

    def upload(self: Any, *a: Any) -> None:
        calls.append("up")
        up(self, *a)

    def download(self: Any, *a: Any) -> None:
        calls.append("down")
        down(self, *a)

    monkeypatch.setattr(transfers.Ring, "upload", upload)
    monkeypatch.setattr(transfers.Ring, "download", download)
    return calls


def test_arrays_too_large_to_register_go_through_pinned_staging(
    reg: Any, cl_device: Any, monkeypatch: Any
) -> None:
    """The table stays within REGISTER_DEVICE_FRACTION of the device's memory (on NVIDIA a
    registration has a device copy: an 8 GiB to_device took 16.5 GiB of an H100, a 45 GiB one
    failed); an array whose interior alone is larger is staged, and registers nothing."""
    mem = int(cl_device.global_mem_size)
    monkeypatch.setattr(registered, "REGISTER_DEVICE_FRACTION", (3 << 20) / mem)
    calls = _counting_ring(monkeypatch)
    small = np.full(1 << 19, 2, np.float32)  # 2 MiB: registered
    big = np.arange(1 << 20, dtype=np.float32)  # 4 MiB: staged
    y = np.zeros(1 << 19, np.float32)
    _launch(reg, small, y, 1.0)
    t = _table(reg)
    assert t.limit <= 3 << 20 and len(t._bufs) == 1 and not calls  # one 2 MiB fits
    yb = np.ones(1 << 20, np.float32)
    _launch(reg, big, yb, 2.0)
    np.testing.assert_array_equal(yb, 2 * big + 1)
    assert calls == ["up", "up", "down"]  # x in, y in, y out, all staged
    assert all(k[1] <= 3 << 20 for k in t._bufs)


def _fail_first_map(monkeypatch: Any) -> list[int]:
    """The next map of a registration fails for want of memory (MEM_OBJECT_ALLOCATION_FAILURE,
    as NVIDIA's device copy does); the list says whether it happened."""
    import pyopencl as cl

    real = registered.Registered._map
    failed: list[int] = []

    def failing(self: Any, *a: Any, **kw: Any) -> None:
        if not failed:
            failed.append(1)
            raise cl.MemoryError("clEnqueueMapBuffer", cl.status_code.MEM_OBJECT_ALLOCATION_FAILURE)
        real(self, *a, **kw)

    monkeypatch.setattr(registered.Registered, "_map", failing)
    return failed


def test_out_of_memory_while_registered_drops_the_table_and_stages(
    reg: Any, monkeypatch: Any
) -> None:
    """A registered transfer that fails for want of memory (MEM_OBJECT_ALLOCATION_FAILURE on
    the device copy) drops every registration and is done again through pinned staging: the
    launch succeeds with the right values; later launches register again."""

    x = np.arange(1 << 19, dtype=np.float32)
    y = np.ones(1 << 19, np.float32)
    _launch(reg, x, y, 1.0)
    t = _table(reg)
    assert len(t._bufs) == 2
    calls = _counting_ring(monkeypatch)
    failed = _fail_first_map(monkeypatch)
    x2 = np.full(1 << 19, 3, np.float32)
    _launch(reg, x2, y, 2.0)
    np.testing.assert_array_equal(y, 1 + x + 2 * x2)
    assert failed and calls[0] == "up"  # the failed upload, staged
    _launch(reg, x2, y, 1.0)
    np.testing.assert_array_equal(y, 1 + x + 3 * x2)
    assert len(t._bufs) >= 1  # registering again


def test_out_of_memory_while_binding_stages(bound: Any, monkeypatch: Any) -> None:
    """The same when the registration to be bound runs out of memory: the array is staged
    (not registered again in the same breath), the launch's results are right."""

    dev, stats = bound
    n = 1 << 19
    x, y = _apart(n, 2.0), _apart(n, 1.0)
    calls = _counting_ring(monkeypatch)
    failed = _fail_first_map(monkeypatch)
    _launch(dev, x, y, 1.0)
    np.testing.assert_array_equal(y, 3)
    assert failed and calls == ["up"] and stats["bound"] == 1  # x staged, y bound
    _launch(dev, x, y, 1.0)
    np.testing.assert_array_equal(y, 5)
    assert stats["bound"] == 3 and _table(dev)._starved is None


def test_other_errors_are_not_taken_for_out_of_memory() -> None:
    import pyopencl as cl

    assert registered.out_of_memory(cl, cl.MemoryError("x", cl.status_code.OUT_OF_RESOURCES))
    e = cl.LogicError("x", cl.status_code.INVALID_VALUE)
    assert not registered.out_of_memory(cl, e)


def test_registered_from_one_mib_staged_from_stage_min(cl_device: Any, monkeypatch: Any) -> None:
    """Registered memory pays from 1 MiB (REGISTER_FROM: a 1 MiB launch 148 µs registered
    against 596 µs copied directly on the H100), pinned staging only from STAGE_MIN."""
    monkeypatch.setattr(transfers, "STAGE_CPU_DEVICES", True)
    dev = get_device(cl_device)
    x = np.full(1 << 19, 2, np.float32)  # 2 MiB
    for pipe, staged in (("register", True), ("ring", False)):
        monkeypatch.setattr(transfers, "PIPELINE", pipe)
        transfers.clear_pools()
        q = dev.queue
        assert (transfers.staging_of(_cl(), q, x) is not None) is staged, pipe
        assert transfers.staging_of(_cl(), q, x[: (1 << 18) - 8]) is None  # < 1 MiB: direct
        y = np.zeros_like(x)
        _launch(dev, x, y, 1.0)
        np.testing.assert_array_equal(y, x)
    transfers.clear_pools()


def _cl() -> Any:
    import pyopencl

    return pyopencl


def test_large_arrays_registered_on_the_second_transfer(reg: Any, monkeypatch: Any) -> None:
    """From FIRST_STAGE_MIN bytes an array's first transfer each way goes through pinned
    staging (pinning costs more than it saves once: ``clpy.to_device`` of a new array,
    ``get()``), its second registers it; a new array at a freed one's address is new (its
    owner is another object). Smaller arrays register at once."""
    import gc

    monkeypatch.setattr(registered, "FIRST_STAGE_MIN", 2 << 20)
    calls = _counting_ring(monkeypatch)
    n = 1 << 19  # 2 MiB
    x = np.full(n, 2, np.float32)
    y = np.zeros(n, np.float32)
    _launch(reg, x, y, 1.0)
    t = _table(reg)
    assert not t._bufs and len(t._seen) == 3  # x in, y in, y out: staged, remembered
    assert calls == ["up", "up", "down"]
    _launch(reg, x, y, 1.0)
    np.testing.assert_array_equal(y, 2 * x)
    assert len(t._bufs) == 2 and len(calls) == 3  # registered now (y out too: its memory)
    d = clpy.to_device(np.arange(n, dtype=np.float32), device=reg)  # a one-off upload
    got = d.get()
    np.testing.assert_array_equal(got, np.arange(n, dtype=np.float32))
    assert len(t._bufs) == 2 and calls[3:] == ["up", "down"]
    del got
    gc.collect()
    out = np.empty(n, np.float32)  # may reuse the freed memory: still a first transfer
    d.get(out=out)
    np.testing.assert_array_equal(out, np.arange(n, dtype=np.float32))
    assert len(t._bufs) == 2 and calls[5:] == ["down"]
    small = np.ones((1 << 18) + 8, np.float32)  # 1 MiB + 32 bytes: registered at once
    ys = np.zeros_like(small)
    _launch(reg, small, ys, 1.0)
    np.testing.assert_array_equal(ys, small)
    assert len(calls) == 6 and len(t._bufs) >= 3  # not staged (one may share a neighbour's)


@pytest.fixture
def bound(reg: Any, monkeypatch: Any) -> Any:
    """``reg`` with registrations bound as kernel arguments on PoCL too (its memory is the
    host's: BIND_UNIFIED), counting the arrays bound and the device copies made."""
    monkeypatch.setattr(registered, "BIND_UNIFIED", True)
    stats = {"bound": 0, "copies": 0}
    bind, d2d = registered.Registered.bind, registered.Registered._d2d

    def counted_bind(self: Any, host: np.ndarray) -> Any:
        buf = bind(self, host)
        stats["bound"] += buf is not None
        return buf

    def counted_d2d(self: Any, *a: Any) -> None:
        stats["copies"] += 1
        d2d(self, *a)

    monkeypatch.setattr(registered.Registered, "bind", counted_bind)
    monkeypatch.setattr(registered.Registered, "_d2d", counted_d2d)
    return reg, stats


def _apart(n: int, fill: float) -> np.ndarray:
    """``n`` float32 with pages of their own (padding on both sides)."""
    pad = 2 * registered.PAGE
    return np.full(n + 2 * pad, fill, np.float32)[pad : pad + n]


def test_bound_arrays_are_the_kernels_buffers(bound: Any) -> None:
    """An array whose registration starts at its first byte and covers it whole is the
    kernel's buffer itself: no device copy in or out; the host's changes between launches
    are seen; the launch ends with nothing in flight."""
    dev, stats = bound
    n = (1 << 19) + 3
    x, y = _apart(n, 2.0), _apart(n, 1.0)
    _launch(dev, x, y, 1.0)
    np.testing.assert_array_equal(y, 3)
    assert stats == {"bound": 2, "copies": 0}
    x[:] = 5
    x[-1] = 7
    _launch(dev, x, y, 2.0)
    assert (y[:-1] == 13).all() and y[-1] == 17
    assert stats == {"bound": 4, "copies": 0}
    t = _table(dev)
    assert not t._inflight and not t._doomed


def test_what_is_not_bound_is_copied(bound: Any) -> None:
    """Not bound, and copied as before: an array whose first page its neighbour's
    registration covers; a launch that does not wait; one array for two parameters is bound
    once; a second view of memory bound already by the launch; a read-only array."""
    dev, stats = bound
    n = (1 << 18) + 5
    block = np.zeros(2 * n + 64, np.float32)
    x, y = block[3 : 3 + n], block[13 + n : 13 + 2 * n]
    x[:] = 1
    _launch(dev, x, y, 1.0)  # x bound; y's first page is x's registration's: copied
    np.testing.assert_array_equal(y, 1)
    assert stats["bound"] == 1 and stats["copies"] >= 2  # y in and out (and its head)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        h = axpy[n](x, y, np.float32(1), np.int32(n), device=dev, wait=False)
        h.wait()
    np.testing.assert_array_equal(y, 2)
    assert stats["bound"] == 1  # not for an asynchronous launch
    z = _apart(n, 3.0)
    _launch(dev, z, z, 1.0)  # y = z: one array for both parameters, one buffer
    np.testing.assert_array_equal(z, 6)
    assert stats["bound"] == 2
    big = _apart(2 * n, 1.0)
    big[n:] = 4
    _launch(dev, big[:n], big[: n + 7][:n], 2.0)  # two views, the same first byte
    np.testing.assert_array_equal(big[:n], 3)
    assert stats["bound"] == 3  # the first; the second is copied from the same memory
    ro = _apart(n, 1.0)
    ro.flags.writeable = False  # never bound: its registration is read-only
    z2 = _apart(n, 0.0)
    _launch(dev, ro, z2, 1.0)
    np.testing.assert_array_equal(z2, 1)
    assert stats["bound"] == 4  # z2 only
    assert not _table(dev)._inflight


def test_a_bound_registration_dropped_mid_launch_stays_valid(bound: Any, monkeypatch: Any) -> None:
    """Registrations dropped while a launch has them bound (the table's limit, running out
    of memory) are released only when the launch ends; the results arrive all the same."""
    dev, stats = bound
    monkeypatch.setattr(registered, "REGISTER_BYTES", 3 << 20)  # room for one of them
    n = (1 << 19) + 3
    x, y = _apart(n, 2.0), _apart(n, 1.0)
    _launch(dev, x, y, 1.0)
    t = _table(dev)
    np.testing.assert_array_equal(y, 3)
    assert stats["bound"] == 2 and len(t._bufs) == 1  # x's dropped (y made room), kept alive
    assert not t._doomed and not t._inflight  # ... until the launch ended


def test_bound_launches_from_two_threads(bound: Any) -> None:
    """Launches from two threads bind their own arrays on one queue: each launch's end
    releases only what it bound, and every result is right."""
    import threading

    dev, stats = bound
    n = (1 << 18) + 1
    errors: list[BaseException] = []

    def work(fill: float) -> None:
        try:
            x, y = _apart(n, fill), _apart(n, 0.0)
            for k in range(1, 9):
                _launch(dev, x, y, 1.0)
                assert y[0] == y[-1] == k * fill, (y[0], k, fill)
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(f,)) for f in (1.0, 2.0)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert stats["bound"] == 32
    t = _table(dev)
    assert not t._inflight and not t._doomed
