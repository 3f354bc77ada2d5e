"""clpy.algorithms' scan schemes on the OpenCL device and the simulator (split from
tests/test_algorithms.py, which covers every algorithm x operator x dtype through the public
functions): each single-pass scheme and register-tile variant with its tuning forced, the tile
kernels on the checking simulator, bound launches and the register-cap device variant."""

from __future__ import annotations

import numpy as np
import pytest

import clpy
import clpy.algorithms as alg
import clpy.algorithms.scans as scans
from clpy.algorithms._core import Tuning, as_input, element_type, resolve_op
from clpy.types import catalog as C
from tests.test_algorithms import BIG, OPS, _data, _identity, _ok, _ref_accumulate

SCHEMES = {  # small tiles, so that many tiles wait on each other
    "lookback": dict(scan_wg=64, scan_vecs=1, scan_wgscan="native", scan_lb=4),
    "lookback-serial-2": dict(scan_wg=32, scan_vecs=2, scan_lb=2),
    "lookback-rake-load-reads": dict(scan_wg=32, scan_vecs=2, scan_wgscan="rake", scan_lb=3,
                                     scan_read="load"),
    "lookback-window": dict(scan_wg=64, scan_vecs=1, scan_lb=1, scan_lookback="window"),
    "lookback-window-load": dict(scan_wg=32, scan_vecs=2, scan_read="load",
                                 scan_lookback="window"),
    "reduce-then-scan": {},
}


@pytest.mark.parametrize("scheme", list(SCHEMES))
@pytest.mark.parametrize("dt,op", [(np.int32, "+"), (np.float32, "max"), (np.uint32, "^"),
                                   (np.float32, "+")])
def test_scan_schemes_on_opencl(cl_device, scheme, dt, op):
    """Every scheme on the OpenCL device (the look-back is forced even where the tuning
    would not pick it); lengths that are and are not whole 4-vectors, in place too."""
    dev = clpy.get_device(cl_device)
    lookback = scheme.startswith("lookback")
    tn = Tuning(wg=64, groups=8, items=3, lookback=lookback, vec=4, **SCHEMES[scheme])
    for n in (1, 191, 192, 193, 100003, 100004, BIG):
        x = _data(n, dt, "+", n)
        inp = as_input(x, dev)
        t = element_type(inp.dtype, inp.shape, op)
        o = resolve_op(op, t)
        assert scans.lookback_applies(inp.place, t, tn) == lookback
        for incl in (True, False):
            y = inp.place.empty(inp.shape, inp.dtype)
            scans.scan_on(inp, y, t, o, incl, tn)
            want = _ref_accumulate(op, x)
            if not incl:
                want = np.concatenate([[_identity(op, dt)], want[:-1]]).astype(dt)
            np.testing.assert_array_equal(y.get(), want, err_msg=f"n={n} incl={incl}")
        if n in (100004, BIG):  # in place: x and y one buffer
            scans.scan_on(inp, inp.data, t, o, True, tn)
            np.testing.assert_array_equal(inp.data.get(), _ref_accumulate(op, x))


TILE_VARIANTS = {  # the register tile's options of scan_tiles.py, small tiles
    "window": dict(scan_wg=64, scan_vecs=1, scan_lookback="window"),
    "window-rake-3-vectors": dict(scan_wg=32, scan_vecs=3, scan_wgscan="rake",
                                  scan_lookback="window", scan_read="load"),
    "serial-5-vectors": dict(scan_wg=32, scan_vecs=5, scan_lb=2),
    "rake-window": dict(scan_wg=96, scan_vecs=1, scan_wgscan="rake", scan_lookback="window"),
    "rake-serial": dict(scan_wg=64, scan_vecs=2, scan_wgscan="rake", scan_read="load"),
    "rake-early": dict(scan_wg=64, scan_vecs=1, scan_wgscan="rake", scan_lookback="early"),
    "striped-early": dict(scan_wg=64, scan_layout="striped", scan_lookback="early"),
    "striped-serial": dict(scan_wg=32, scan_layout="striped", scan_read="load"),
}


@pytest.mark.parametrize("variant", list(TILE_VARIANTS))
@pytest.mark.parametrize("dt", [np.int32, np.uint32, np.float32])
def test_scan_tile_variants_every_operator(cl_device, variant, dt, monkeypatch):
    """Each tile variant through the public ``scan`` (its tuning forced), inclusive and
    exclusive ("+"), sizes 0, 1, primes, whole and partial tiles, 2^20 + 3: every operator
    for the first variant (the new look-back and loads) on int32 and float32, three for the
    rest (kernel builds are most of the time)."""
    dev = clpy.get_device(cl_device)
    tn = Tuning(wg=64, groups=8, items=3, lookback=True, vec=4, **TILE_VARIANTS[variant])
    monkeypatch.setattr(scans, "tuning", lambda d: tn)
    every = variant == next(iter(TILE_VARIANTS)) and dt != np.uint32
    for op in OPS if every else ["+", "max", "^"]:
        if not _ok(op, dt):
            continue
        for n in (0, 1, 2, 61, 257, 1031, 100003, *([BIG] if op in ("+", "min") else [])):
            x = _data(n, dt, op, n)
            want = _ref_accumulate(op, x)
            np.testing.assert_array_equal(alg.scan(x, op, device=dev), want,
                                          err_msg=f"{op} n={n}")
            if op != "+":
                continue  # exclusive: one more kernel per operator; "+" stands for them
            want_e = np.concatenate([[_identity(op, dt)], want[:-1]]).astype(dt) if n else want
            np.testing.assert_array_equal(alg.scan(x, op, inclusive=False, device=dev), want_e,
                                          err_msg=f"{op} exclusive n={n}")


SIM_TILE_VARIANTS = {**TILE_VARIANTS, "serial": dict(scan_wg=32, scan_vecs=2)}


@pytest.mark.parametrize("variant", list(SIM_TILE_VARIANTS))
@pytest.mark.parametrize("order", ["work-item", "shuffled"])
def test_scan_tile_kernels_on_simulator(variant, order):
    """The single-pass tile kernels on the simulator, every check on (races in local memory,
    barrier divergence, bounds), all groups in one batch so that spinning on other groups
    ends (scans.py); "shuffled" atomics hand the tickets out in another order than the
    group ids."""
    tn = Tuning(wg=64, groups=8, items=3, lookback=True, vec=4, **SIM_TILE_VARIANTS[variant])
    for dt, op in ((np.int32, "+"), (np.float32, "max"), (np.uint32, "^")):
        t = element_type(np.dtype(dt), (1,), op)
        o = resolve_op(op, t)
        k = scans.tile_kernel(t, o, C.int_, tn, True, False)
        tile = tn.scan_wg * 4 * (4 if scans._striped(tn, o) else tn.scan_vecs)
        for n in (1, 61, 1031):
            x = _data(n, dt, op, n)
            ntiles = -(-n // tile)
            y = np.zeros_like(x)
            status = np.zeros(ntiles, np.uint64)
            counter = np.zeros(1, np.int32)
            with clpy.sim.config(checks=True, max_lanes=1 << 16, atomic_order=order, seed=n):
                k[(ntiles * tn.scan_wg,), (tn.scan_wg,)](
                    x, y, np.int32(n), o.host_identity(t), status, counter, np.uint32(1),
                    np.int32(ntiles), device="sim")
            np.testing.assert_array_equal(y, _ref_accumulate(op, x), err_msg=f"{op} n={n}")
            assert counter[0] == 0  # reset by the group that took the last ticket


@pytest.mark.parametrize("bound", [True, False])
def test_scan_bound_launch(cl_device, bound, monkeypatch):
    """Repeated register-tile scans of one length take the bound launch (scans.BOUND_SCAN):
    new input and output buffers, epochs and a status array that grows in between (a longer
    scan) all reach the kernel; in place (one buffer) never binds."""
    import pyopencl.array as cla

    monkeypatch.setattr(scans, "BOUND_SCAN", bound)
    dev = clpy.get_device(cl_device)
    tn = Tuning(wg=64, groups=8, items=3, lookback=True, vec=4, scan_wg=32, scan_vecs=1,
                scan_lookback="early")
    monkeypatch.setattr(scans, "tuning", lambda d: tn)
    st = scans._state(as_input(cla.empty(dev.queue, 4, np.int32), None).place)
    st.bound.clear()  # a cache: this test's launches only
    rng = np.random.default_rng(5)
    for n in (4096, 4096, 4096 * 40, 4096, 4096):
        x = rng.integers(-50, 50, n).astype(np.int32)
        a = cla.to_device(dev.queue, x)
        for _ in range(2):
            out = cla.empty_like(a)
            np.testing.assert_array_equal(alg.scan(a, out=out).get(), np.cumsum(x, dtype=np.int32))
        alg.scan(a, out=a)  # in place
        np.testing.assert_array_equal(a.get(), np.cumsum(x, dtype=np.int32))
    assert bool(st.bound) == bound


@pytest.mark.parametrize("bound", [True, False])
def test_scan_register_cap_variant(cl_device, bound, monkeypatch):
    """``scan_maxreg`` launches the tile kernel on a device variant built with one more
    option (NVIDIA's -cl-nv-maxrregcount; here a harmless -D), bound launches included."""
    import pyopencl.array as cla

    monkeypatch.setattr(scans, "MAXREG_OPTION", "-DCLPY_TEST_MAXREG={}")
    monkeypatch.setattr(scans, "BOUND_SCAN", bound)
    dev = clpy.get_device(cl_device)
    tn = Tuning(wg=64, groups=8, items=3, lookback=True, vec=4, scan_wg=32, scan_vecs=2,
                scan_maxreg=40)
    monkeypatch.setattr(scans, "tuning", lambda d: tn)
    x = np.arange(8192, dtype=np.int32) % 7 - 3
    a = cla.to_device(dev.queue, x)
    st = scans._state(as_input(a, None).place)
    st.bound.clear()  # a cache: this test's launches only
    for _ in range(3):
        np.testing.assert_array_equal(alg.scan(a, out=cla.empty_like(a)).get(), np.cumsum(x))
    assert bool(st.bound) == bound
    k = scans.tile_kernel(C.int_, resolve_op("+", C.int_), C.int_, tn, True, True)
    opts = [p.options for p in k.launches.plans.values() if hasattr(p, "options")]
    assert any("-DCLPY_TEST_MAXREG=40" in o for o in opts), opts
