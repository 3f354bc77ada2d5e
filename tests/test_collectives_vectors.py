"""Work-group scans of vectors and logical operators on floating lanes: the simulator against
an OpenCL device (regressions: the simulator crashed on an exclusive scan of vectors, and on
``&&``/``||`` scans of float values, spec §1.13.15; OpenMP 5.1 §2.21.5 for the operators)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, float32
from clpy.runtime.devices import RUNTIME


@clpy.kernel
def vscans(x: Global[clpy.int4], inc: Global[clpy.int4], exc: Global[clpy.int4]):
    i = clpy.get_global_id(0)
    inc[i] = clpy.work_group_scan_inclusive(x[i], "+")
    exc[i] = clpy.work_group_scan_exclusive(x[i], "max")


@clpy.kernel
def fvscans(x: Global[clpy.float4], exc: Global[clpy.float4], mul: Global[clpy.float4]):
    i = clpy.get_global_id(0)
    exc[i] = clpy.work_group_scan_exclusive(x[i], "+")
    mul[i] = clpy.work_group_scan_exclusive(x[i], "*")


@clpy.kernel
def logical(x: Global[float32], a: Global[float32], o: Global[float32], r: Global[float32]):
    i = clpy.get_global_id(0)
    a[i] = clpy.work_group_scan_inclusive(x[i], "&&")
    o[i] = clpy.work_group_scan_exclusive(x[i], "||")
    r[i] = clpy.work_group_reduce(x[i], "&&")


def _run(k: Any, dev: str, n: int, local: int, *arrays: np.ndarray) -> list[np.ndarray]:
    outs = [a.copy() for a in arrays]
    k[(n,), (local,)](*outs, device=dev)
    return outs


@pytest.fixture(scope="module")
def cldev(cl_device: Any) -> Any:
    return RUNTIME.find(cl_device)


@pytest.mark.parametrize("local", [8, 16, 64])
def test_vector_scans_match_the_device(cldev: Any, local: int) -> None:
    rng = np.random.default_rng(local)
    n = 4 * local
    x = rng.integers(-50, 50, (n, 4)).astype(np.int32)
    z = np.zeros_like(x)
    sim = _run(vscans, "sim", n, local, x, z, z)
    dev = _run(vscans, cldev, n, local, x, z, z)
    for s, d in zip(sim[1:], dev[1:]):
        np.testing.assert_array_equal(s, d)
    groups = x.reshape(-1, local, 4)
    expect = np.cumsum(groups, axis=1).reshape(-1, 4)
    np.testing.assert_array_equal(sim[1], expect)
    first = sim[2].reshape(-1, local, 4)[:, 0]
    assert (first == np.iinfo(np.int32).min).all()  # the identity of max


def test_float_vector_exclusive_scans_match_the_device(cldev: Any) -> None:
    x = np.tile(np.array([0.5, 1.0, 2.0, -1.0], np.float32), (32, 1)) + np.float32(0.25)
    z = np.zeros_like(x)
    sim = _run(fvscans, "sim", 32, 16, x, z, z)
    dev = _run(fvscans, cldev, 32, 16, x, z, z)
    for s, d in zip(sim[1:], dev[1:]):
        np.testing.assert_allclose(s, d, rtol=1e-6)
    assert (sim[1].reshape(2, 16, 4)[:, 0] == 0).all()  # identities of + and *
    assert (sim[2].reshape(2, 16, 4)[:, 0] == 1).all()


@pytest.mark.parametrize("local", [8, 32])
def test_logical_operators_on_float_lanes_match_the_device(cldev: Any, local: int) -> None:
    rng = np.random.default_rng(7)
    n = 4 * local
    x = np.where(rng.random(n) < 0.8, rng.random(n) + 0.5, 0.0).astype(np.float32)
    x[::local] = 1.5
    z = np.zeros_like(x)
    sim = _run(logical, "sim", n, local, x, z, z, z)
    dev = _run(logical, cldev, n, local, x, z, z, z)
    for s, d in zip(sim[1:], dev[1:]):
        np.testing.assert_array_equal(s, d)
    g = (x.reshape(-1, local) != 0)
    np.testing.assert_array_equal(sim[1].reshape(-1, local), np.logical_and.accumulate(g, 1))
    np.testing.assert_array_equal(sim[3].reshape(-1, local)[:, 0], g.all(1))
