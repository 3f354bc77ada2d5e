"""clpy.algorithms (issue 13) against NumPy: every algorithm x operator x dtype, sizes 0, 1,
primes and (on OpenCL only: the simulator is slow there) 2^20 + 3; NumPy, DeviceArray and
pyopencl inputs. Each scan scheme with its tuning forced: tests/test_algorithms_scans.py."""

from __future__ import annotations

import os

import numpy as np
import pytest

import clpy
import clpy.algorithms as alg
from clpy import float2, float32, int32
from clpy.algorithms._core import element_type, resolve_op

SMALL = [0, 1, 2, 61, 257, 1031]
BIG = 2**20 + 3
OPS = ["+", "-", "*", "&", "|", "^", "&&", "||", "min", "max"]
DTYPES = [np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64, np.float32, np.float64]
REF = {
    "+": np.add, "-": np.add, "*": np.multiply, "&": np.bitwise_and, "|": np.bitwise_or,
    "^": np.bitwise_xor, "min": np.minimum, "max": np.maximum,
}


@pytest.fixture(params=["sim", "cl"])
def dev(request):
    if request.param == "sim":
        return "sim"
    d = request.getfixturevalue("cl_device")
    return clpy.get_device(d)


def _is_cl(dev):
    return dev != "sim"


def _sizes(dev):
    return SMALL + ([BIG] if _is_cl(dev) else [])


def _ok(op, dt):
    return not (op in ("&", "|", "^") and np.dtype(dt).kind == "f")


def _data(n, dt, op, seed=0):
    rng = np.random.default_rng(seed)
    if op == "*":  # products of small odd/even values: exact in ints, bounded in floats
        v = rng.choice([-1, 1, 1, 1], n) if np.dtype(dt).kind != "u" else np.ones(n)
        return v.astype(dt)
    if np.dtype(dt).kind == "f":
        return rng.integers(-8, 9, n).astype(dt)  # exact sums: order does not matter
    info = np.iinfo(dt)
    return rng.integers(max(info.min, -100), min(info.max, 100), n, endpoint=True).astype(dt)


def _ref_accumulate(op, x):
    if op in ("&&", "||"):
        f = np.logical_and if op == "&&" else np.logical_or
        return f.accumulate(x != 0).astype(x.dtype)
    return REF[op].accumulate(x, dtype=x.dtype)


def _identity(op, dt):
    return resolve_op(op, element_type(np.dtype(dt), (1,), op)).host_identity(
        element_type(np.dtype(dt), (1,), op))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dt", DTYPES)
def test_reduce_and_scan(dev, op, dt):
    if not _ok(op, dt):
        pytest.skip("bitwise operators take integers")
    for n in _sizes(dev):
        x = _data(n, dt, op, n)
        got = alg.reduce(x, op, device=dev)
        want = _ref_accumulate(op, x)[-1] if n else _identity(op, dt)
        assert got.dtype == np.dtype(dt) and got == want, (n, got, want)
        if n == BIG and op not in ("+", "min"):
            continue  # the big size: reduce all, scan two operators
        y = alg.scan(x, op, device=dev)
        np.testing.assert_array_equal(y, _ref_accumulate(op, x), err_msg=f"n={n}")
        ye = alg.scan(x, op, inclusive=False, device=dev)
        if n:
            want_e = np.concatenate([[_identity(op, dt)], _ref_accumulate(op, x)[:-1]])
            np.testing.assert_array_equal(ye, want_e.astype(dt), err_msg=f"n={n}")
        else:
            assert ye.shape == (0,)


def test_float_sum_tolerance(dev):
    x = np.random.default_rng(1).random(BIG if _is_cl(dev) else 4099, dtype=np.float32)
    np.testing.assert_allclose(alg.reduce(x, "+", device=dev), x.sum(dtype=np.float64),
                               rtol=1e-5)
    np.testing.assert_allclose(alg.scan(x, device=dev), np.cumsum(x, dtype=np.float64),
                               rtol=1e-4)


@pytest.mark.parametrize("op", ["+", "max", "*"])
def test_vectors(dev, op):
    rng = np.random.default_rng(2)
    for n in (0, 1, 257):
        x = rng.integers(-3, 4, (n, 4)).astype(np.float32)
        if op == "*":
            x = np.sign(x) + (x == 0)
        r = alg.reduce(x, op, device=dev)
        ufunc = REF[op]
        want = ufunc.reduce(x, axis=0) if n else np.full(4, _identity(op, np.float32))
        np.testing.assert_array_equal(r, want)
        np.testing.assert_array_equal(alg.scan(x, op, device=dev), ufunc.accumulate(x, axis=0))


@clpy.struct
class MinMax:
    lo: float32
    hi: float32


@clpy.reduction(identity=MinMax(np.inf, -np.inf))
def minmax(a: MinMax, b: MinMax) -> MinMax:
    return MinMax(min(a.lo, b.lo), max(a.hi, b.hi))


@clpy.reduction(identity=(1.0, 0.0))
def cmul(a: float2, b: float2) -> float2:
    return float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x)


@clpy.struct
class Affine:  # x -> a * x + b; composition is associative, not commutative
    a: int32
    b: int32


@clpy.reduction(identity=Affine(1, 0))
def compose(f: Affine, g: Affine) -> Affine:  # first f, then g
    return Affine(g.a * f.a, g.a * f.b + g.b)


def test_user_reductions(dev):
    rng = np.random.default_rng(3)
    for n in _sizes(dev)[:6] + ([BIG] if _is_cl(dev) else []):
        v = rng.integers(-50, 50, n).astype(np.float32)
        s = np.zeros(n, MinMax.dtype)
        s["lo"], s["hi"] = v, v
        r = alg.reduce(s, minmax, device=dev)
        assert (r["lo"], r["hi"]) == ((v.min(), v.max()) if n else (np.inf, -np.inf))
        f = np.zeros(n, Affine.dtype)
        f["a"] = rng.choice([-1, 1, 2], n)
        f["b"] = rng.integers(-3, 4, n)
        y = alg.scan(f, compose, device=dev)  # order matters: a non-commutative scan
        a, b = np.int32(1), np.int32(0)
        want_a, want_b = np.empty(n, np.int32), np.empty(n, np.int32)
        with np.errstate(over="ignore"):
            for i in range(min(n, 3000)):
                a, b = np.int32(f["a"][i] * a), np.int32(f["a"][i] * b + f["b"][i])
                want_a[i], want_b[i] = a, b
        m = min(n, 3000)
        np.testing.assert_array_equal(y["a"][:m], want_a[:m])
        np.testing.assert_array_equal(y["b"][:m], want_b[:m])
    ang = rng.uniform(-0.3, 0.3, 300)
    c = np.stack([np.cos(ang), np.sin(ang)], 1).astype(np.float32)
    z = alg.scan(c, cmul, device=dev)
    np.testing.assert_allclose(z[:, 0] + 1j * z[:, 1], np.exp(1j * np.cumsum(ang)), atol=1e-4)


@pytest.mark.parametrize("dt", [np.int8, np.int32, np.uint32, np.int64, np.float32,
                                np.float64])
def test_argmin_argmax(dev, dt):
    for n in [1, 2, 61, 1031] + ([BIG] if _is_cl(dev) else []):
        x = _data(n, dt, "+", n + 7)  # many ties: the first index wins
        assert alg.argmax(x, device=dev) == np.argmax(x)
        assert alg.argmin(x, device=dev) == np.argmin(x)
    if np.dtype(dt).kind == "f":
        x = np.array([1, np.nan, 5, np.nan], dt)
        assert alg.argmax(x, device=dev) == 1 and alg.argmin(x, device=dev) == 1
    with pytest.raises(ValueError, match="empty"):
        alg.argmax(np.zeros(0, dt), device=dev)


@pytest.mark.parametrize("dt", [np.uint8, np.int32, np.int64, np.float32, np.float64])
def test_histogram(dev, dt):
    rng = np.random.default_rng(4)
    for n in _sizes(dev):
        if np.dtype(dt).kind == "f":
            x = (rng.standard_normal(n) * 3).astype(dt)
            x[: n // 7] = np.round(x[: n // 7])  # values on bin edges
            for bins, rng_ in ((256, (-4, 4)), (17, None), (5000, (-8.0, 8.0))):
                x = x.copy()
                if rng_ is not None and n > 3:
                    x[1], x[2] = np.nan, np.inf  # not counted
                elif n > 3:  # NumPy's default range rejects them
                    x[1], x[2] = 0.5, -0.5
                got = alg.histogram(x, bins, range=rng_, device=dev)
                want = np.histogram(x, bins, range=rng_)[0]
                np.testing.assert_array_equal(got, want, err_msg=f"n={n} bins={bins}")
        else:
            x = rng.integers(0, 256 if dt is np.uint8 else 300, n).astype(dt)
            got = alg.histogram(x, 256, range=(0, 256), device=dev)
            np.testing.assert_array_equal(got, np.histogram(x, 256, range=(0, 256))[0])
            got = alg.histogram(x, 10, device=dev)
            np.testing.assert_array_equal(got, np.histogram(x, 10)[0])


@pytest.mark.parametrize("op", ["+", "max", "*"])
def test_segmented_reduce(dev, op):
    rng = np.random.default_rng(5)
    x = rng.integers(-3, 4, 1000).astype(np.int32)
    offs = np.array([0, 0, 1, 100, 100, 513, 1000])
    got = alg.segmented_reduce(x, offs, op, device=dev)
    ident = _identity(op, np.int32)
    want = [REF[op].reduce(x[a:b]) if b > a else ident for a, b in zip(offs[:-1], offs[1:])]
    np.testing.assert_array_equal(got, want)
    assert alg.segmented_reduce(x, np.array([0]), op, device=dev).shape == (0,)
    with pytest.raises(ValueError, match="offsets"):
        alg.segmented_reduce(x, np.array([0, 5, 2]), op, device=dev)


@pytest.mark.parametrize("dt", [np.uint8, np.int16, np.int32, np.uint32, np.int64,
                                np.float32, np.float64])
def test_sort(dev, dt):
    rng = np.random.default_rng(6)
    for n in [0, 1, 61, 1031] + ([BIG] if _is_cl(dev) else []):
        if np.dtype(dt).kind == "f":
            k = rng.integers(-20, 20, n).astype(dt) * dt(0.5)
            if n > 4:
                k[:4] = [np.nan, -0.0, np.inf, -np.inf]
        else:
            info = np.iinfo(dt)
            k = rng.integers(max(info.min, -1000), min(info.max, 1000), n).astype(dt)
        v = np.arange(n, dtype=np.int64)
        gk, gv = alg.sort(k, v, device=dev)
        order = np.argsort(k, kind="stable")
        np.testing.assert_array_equal(gk, k[order])
        np.testing.assert_array_equal(gv, v[order])  # stable: equal keys keep their order


def test_struct_payload_sort(dev):
    k = np.array([3, 1, 2, 1], np.int32)
    v = np.zeros(4, MinMax.dtype)
    v["lo"] = [30, 10, 20, 11]
    _, gv = alg.sort(k, v, device=dev)
    np.testing.assert_array_equal(gv["lo"], [10, 11, 20, 30])


def test_device_arrays_stay_on_device(dev):
    x = np.arange(1, 1000, dtype=np.int32)
    d = clpy.to_device(x, device=dev)
    y = alg.scan(d)
    assert isinstance(y, clpy.DeviceArray) and y.device is d.device
    np.testing.assert_array_equal(y.get(), np.cumsum(x))
    h = alg.histogram(d, 4, range=(0, 1000))
    assert isinstance(h, clpy.DeviceArray)
    np.testing.assert_array_equal(h.get(), np.histogram(x, 4, range=(0, 1000))[0])
    assert alg.reduce(d, "max") == 999
    alg.scan(d, out=d)  # in place
    np.testing.assert_array_equal(d.get(), np.cumsum(x))


def test_pyopencl_arrays(cl_device):
    import pyopencl.array as cla

    dev = clpy.get_device(cl_device)
    x = np.arange(BIG, dtype=np.float32) % 7
    a = cla.to_device(dev.queue, x)
    y = alg.scan(a, "max")
    assert isinstance(y, cla.Array)
    np.testing.assert_array_equal(y.get(), np.maximum.accumulate(x))
    assert alg.reduce(a, "+") == x.sum()
    k, v = alg.sort(a, cla.to_device(dev.queue, np.arange(BIG, dtype=np.int32)))
    assert isinstance(k, cla.Array)
    np.testing.assert_array_equal(v.get(), np.argsort(x, kind="stable"))


def test_queue_caches_are_bounded(cl_device):
    """The algorithms' per-queue caches (scratch arrays, counters, prepared launches, the
    scan's look-back state) are kept for at most MAX_QUEUES queues, so the queues a caller
    dropped go with them; results stay right for queues dropped and prepared again, and
    after clear_queue_caches()."""
    import pyopencl as cl
    import pyopencl.array as cla

    from clpy.algorithms import _core

    dev = clpy.get_device(cl_device)
    x = _data(1031, np.int32, "+", 7)
    queues = [cl.CommandQueue(dev.context) for _ in range(_core.MAX_QUEUES + 3)]
    for q in queues + queues[:2]:  # the first two again, after they were dropped
        a = cla.to_device(q, x)
        assert alg.reduce(a, "+") == x.sum() and alg.argmax(a) == np.argmax(x)
        np.testing.assert_array_equal(alg.scan(a).get(), np.cumsum(x, dtype=np.int32))
        assert len(_core._QUEUES) <= _core.MAX_QUEUES
        assert len(_core._QUEUE_PLACES) <= _core.MAX_QUEUES
    held = {id(c.queue) for c in _core._QUEUES.values()}
    assert id(queues[2]) not in held and id(queues[0]) in held
    _core.clear_queue_caches()
    assert not _core._QUEUES
    assert alg.reduce(x, "+", device=dev) == x.sum()
    assert _core._QUEUES
    clpy.clear_caches()  # clears the algorithms' caches too (runtime.api.on_clear_caches)
    assert not _core._QUEUES and not _core._QUEUE_PLACES
    assert alg.reduce(x, "+", device=dev) == x.sum()


@pytest.mark.parametrize("path", ["read", "wait", "poll", "map"])
@pytest.mark.parametrize("bound,pinned", [(True, True), (False, False)])
def test_reduce_result_paths(cl_device, path, bound, pinned, monkeypatch):
    """Every way a reduction is launched (bound or through the launcher) and its result
    comes back (reductions.RESULT_PATH, page-locked or not) gives the result, call after
    call, with the input buffer changing between calls."""
    import pyopencl.array as cla

    from clpy.algorithms import reductions

    monkeypatch.setattr(reductions, "RESULT_PATH", path)
    monkeypatch.setattr(reductions, "BOUND_LAUNCH", bound)
    monkeypatch.setattr(reductions, "PINNED_RESULT", pinned)
    dev = clpy.get_device(cl_device)
    for n in (1, 1031, BIG):
        x = _data(n, np.int32, "+", n)
        assert alg.reduce(x, "+", device=dev) == x.sum()
        assert alg.argmax(x, device=dev) == np.argmax(x)
        a, b = cla.to_device(dev.queue, x), cla.to_device(dev.queue, x[::-1] * 2)
        for _ in range(2):  # the second calls take the bound launch
            assert alg.reduce(a, "+") == x.sum() and alg.reduce(b, "+") == 2 * x.sum()
            assert alg.argmax(a) == np.argmax(x)
    c = cla.to_device(dev.queue, np.arange(10, dtype=np.int32))
    assert alg.reduce(c[:9], "+") == 36  # a view at offset 0 binds like its base
    for _ in range(2):  # a view with an offset never reaches the bound kernel
        with pytest.raises(ValueError, match="offset"):
            alg.reduce(c[1:], "+")


def test_errors():
    with pytest.raises(ValueError, match="op: expected one of"):
        alg.reduce(np.ones(3, np.int32), "avg", device="sim")
    with pytest.raises(TypeError, match="needs integers"):
        alg.reduce(np.ones(3, np.float32), "&", device="sim")
    with pytest.raises(TypeError, match="x: an array of structs"):
        alg.reduce(np.zeros(3, MinMax.dtype), "+", device="sim")
    with pytest.raises(ValueError, match="x: expected a 1-d array"):
        alg.scan(np.ones((3, 3), np.int32), device="sim")
    with pytest.raises(TypeError, match="bins"):
        alg.histogram(np.ones(3), 2.5, device="sim")
    with pytest.raises(ValueError, match="values: expected 3"):
        alg.sort(np.ones(3, np.int32), np.ones(4), device="sim")


def test_import_path():
    assert clpy.algorithms is alg and alg.reduce is clpy.algorithms.reduce
    assert os.path.basename(alg.__file__) == "__init__.py"
