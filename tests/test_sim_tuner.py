"""With ``threads`` left to its default, a kernel's launches run on the pool or on the calling
thread, whichever was faster (sim/parallel.py ``Tuner``): the first launches try both ways in
turn, later ones take the faster and now and then try the other again. An explicit
``threads=N`` always uses the pool. The results are the same either way.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest

import clpy_sim as sim
from clpy_sim.parallel import Tuner
from tests import test_atomics as ta

_LAUNCH = sys.modules["clpy_sim.launch"]


def test_tuner_tries_both_then_takes_the_faster() -> None:
    t = Tuner()
    ways = []
    for _ in range(4):
        pool = t.choose()
        ways.append(pool)
        t.record(pool, 1.0 if pool else 2.0)  # the pool twice as fast
    assert ways == [True, False, True, False]
    later = [t.choose() for _ in range(2 * Tuner.EXPLORE)]
    assert later.count(False) == 2 and later[Tuner.EXPLORE - 1] is False  # exploring
    t.record(True, 5.0)  # the pool got slower (load): the least of the last KEEP counts
    t.record(True, 5.0)
    t.record(True, 5.0)
    assert t.choose() is False


@pytest.fixture
def pooled(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The batch counts of the launches that ran on the pool."""
    seen: list[int] = []
    real = _LAUNCH.run_batches

    def spy(count: int, threads: int, run: Any, step: Any) -> None:
        seen.append(count)
        real(count, threads, run, step)

    monkeypatch.setattr(_LAUNCH, "run_batches", spy)
    return seen


@pytest.mark.parametrize("checks", [False, True])
def test_default_threads_are_tuned(
    monkeypatch: pytest.MonkeyPatch, pooled: list[int], checks: bool
) -> None:
    monkeypatch.setenv("CLPY_SIM_THREADS", "2")
    x = np.random.default_rng(2).integers(0, 10_000, 8192).astype(np.uint32)
    want = np.bincount(x % 256, minlength=256)
    fn = ta.histogram.ir
    with sim.config(checks=checks, max_lanes=1024):
        _LAUNCH.get_plan(fn, sim.current().checks).tuners.clear()  # (other tests' launches)
        for k in range(6):
            h = np.zeros(256, np.int32)
            sim.launch(fn, (8192,), (128,), [x, h])
            np.testing.assert_array_equal(h, want)
            if k < 4:  # pool, one thread, pool, one thread
                assert len(pooled) == (k + 2) // 2
        assert pooled[0] == 8
    pooled.clear()
    with sim.config(checks=checks, max_lanes=1024, threads=2):  # explicit: always the pool
        for _ in range(4):
            sim.launch(fn, (8192,), (128,), [x, np.zeros(256, np.int32)])
    assert pooled == [8] * 4
