"""``clpy.sim.config(split_lanes=...)``: with every checker off, a launch with fewer batches
than threads is cut into one batch per thread (sim/parallel.py ``split``). The cut then
depends on the thread count, so it is taken only where nothing can depend on it: each case
here runs as one batch on one thread and split on two threads, and compares every output bit
for bit (the differential corpus, integer atomics in work-item order); launches that must not
be split (a checker on, shuffled atomics, float atomics) are not.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest

import clpy
import clpy_sim as sim
from clpy import Global, float32, int32
from clpy_sim.parallel import split
from tests import test_atomics as ta
from tests.test_sim_threads import CORPUS, _copy, _same_bits

# the NumPy engine's own machinery (checks off would otherwise run natively)
pytestmark = pytest.mark.usefixtures("numpy_engine")

_LAUNCH = sys.modules["clpy_sim.launch"]


@pytest.fixture
def batches(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """(batches, threads) of every parallel launch."""
    seen: list[tuple[int, int]] = []
    real = _LAUNCH.run_batches

    def spy(count: int, threads: int, run: Any, step: Any) -> None:
        seen.append((count, threads))
        real(count, threads, run, step)

    monkeypatch.setattr(_LAUNCH, "run_batches", spy)
    return seen


def test_split_rule() -> None:
    # (groups, W, per_batch, threads, split_lanes) -> groups per batch
    assert split(64, 256, 512, 2, 0) == 512  # never
    assert split(64, 256, 512, 1, 1024) == 512  # one thread
    assert split(64, 256, 512, 2, 1024) == 32  # 16384 lanes: two batches of 8192
    assert split(64, 256, 512, 16, 1024) == 4  # 16 batches of 1024 lanes
    assert split(64, 256, 512, 16, 4096) == 16  # at least 4096 lanes each: 4 batches
    assert split(64, 256, 512, 2, 16384) == 512  # 16384 lanes < 2 * 16384: one batch
    assert split(3, 256, 512, 16, 1) == 1  # no more batches than groups
    assert split(64, 256, 16, 2, 1) == 16  # already 4 batches by max_lanes
    assert split(64, 256, 32, 4, 1) == 16  # 2 batches by max_lanes, 4 threads: 4


def test_config_split_lanes(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="split_lanes"):
        sim.config(split_lanes=-1)
    monkeypatch.setenv("CLPY_SIM_SPLIT_LANES", "4096")
    assert sim.current().split_lane_count() == 4096
    with sim.config(split_lanes=0):
        assert sim.current().split_lane_count() == 0
    monkeypatch.setenv("CLPY_SIM_SPLIT_LANES", "x")
    with pytest.raises(ValueError, match="CLPY_SIM_SPLIT_LANES"):
        sim.current().split_lane_count()


def _run(fn: Any, g: Any, l_: Any, args: list[Any], **cfg: Any) -> list[Any]:
    out = _copy(args)
    with sim.config(checks=False, max_lanes=1 << 20, **cfg):
        sim.launch(fn, g, l_, out)
    return out


def _one_and_split(fn: Any, g: Any, l_: Any, args: list[Any], **cfg: Any) -> list[Any]:
    lanes = int(np.prod(l_))
    one = _run(fn, g, l_, args, threads=1, **cfg)
    cut = _run(fn, g, l_, args, threads=2, split_lanes=lanes, **cfg)
    _same_bits(one, cut)
    return one


@pytest.mark.parametrize("case", CORPUS, ids=[c[0] for c in CORPUS])
def test_corpus_split_equals_one_batch(case: Any) -> None:
    _, kern, g, l_, make = case
    _one_and_split(kern.specialize().function, g, l_, make())


def test_atomics_split(batches: list[tuple[int, int]]) -> None:
    x = np.random.default_rng(2).integers(0, 10_000, 8192).astype(np.uint32)
    out = _one_and_split(ta.histogram.ir, (8192,), (128,), [x, np.zeros(256, np.int32)])
    np.testing.assert_array_equal(out[1], np.bincount(x % 256, minlength=256))
    assert batches == [(2, 2)]  # (the threads=1 run: one batch, no pool)
    batches.clear()
    out = _one_and_split(ta.global_histogram.ir, (8192,), (256,), [x, np.zeros(64, np.uint32)])
    np.testing.assert_array_equal(out[1], np.bincount(x % 64, minlength=64))
    assert batches == [(2, 2)]


@clpy.kernel
def _fsum(x: Global[float32], s: Global[float32], c: Global[int32]):
    i = clpy.get_global_id(0)
    clpy.atomic_add(s, i % 300, x[i])  # float atomics on 300 addresses: a log-step scan
    clpy.atomic_inc(c)


def test_not_split(batches: list[tuple[int, int]]) -> None:
    x = np.random.default_rng(1).random(64 * 64, dtype=np.float32)
    args = [x, np.zeros(300, np.float32), np.zeros(1, np.int32)]
    fn = _fsum.specialize().function
    _one_and_split(fn, (x.size,), (64,), args)  # float atomics: not batch-free
    assert batches == []
    fn = ta.histogram.ir
    xi = np.random.default_rng(2).integers(0, 10_000, 8192).astype(np.uint32)
    for cfg in ({"checks": True}, {"atomic_order": "shuffled"}, {"on_error": "warn"}):
        with sim.config(threads=2, split_lanes=128, max_lanes=1 << 20, **cfg):
            sim.launch(fn, (8192,), (128,), [xi, np.zeros(256, np.int32)])
    assert batches == []
