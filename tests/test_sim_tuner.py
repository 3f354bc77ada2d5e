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
from tests.test_sim_threads import CORPUS, _outcome, _same_bits

# the NumPy engine's own machinery (checks off would otherwise run natively)
pytestmark = pytest.mark.usefixtures("numpy_engine")

_LAUNCH = sys.modules["clpy_sim.launch"]


def test_tuner_tries_every_way_then_takes_the_fastest() -> None:
    t = Tuner(3)
    ways = []
    for _ in range(6):
        w = t.choose()
        ways.append(w)
        t.record(w, [2.0, 1.0, 3.0][w])  # way 1 fastest
    assert ways == [0, 1, 2, 0, 1, 2]
    later = [t.choose() for _ in range(2 * Tuner.EXPLORE)]
    assert later[Tuner.EXPLORE - 1] != 1 and later[2 * Tuner.EXPLORE - 1] != 1  # exploring
    assert later.count(1) == 2 * Tuner.EXPLORE - 2
    for _ in range(Tuner.KEEP):  # way 1 got slower (load): the least of its last KEEP counts
        t.record(1, 5.0)
    assert t.choose() == 0


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
    """The ways: one thread; the pool; and with the checkers off, batches of 4x max_lanes."""
    monkeypatch.setenv("CLPY_SIM_THREADS", "2")
    x = np.random.default_rng(2).integers(0, 10_000, 8192).astype(np.uint32)
    want = np.bincount(x % 256, minlength=256)
    fn = ta.histogram.ir
    nways = 2 if checks else 3
    with sim.config(checks=checks, max_lanes=1024):
        plan = _LAUNCH.get_plan(fn, sim.current().checks)
        plan.tuners.clear()  # (other tests' launches)
        for k in range(2 * nways + 4):
            h = np.zeros(256, np.int32)
            sim.launch(fn, (8192,), (128,), [x, h])
            np.testing.assert_array_equal(h, want)
            if k == 2 * nways - 1:
                assert len(pooled) == 2  # every way tried twice: the pool twice
        (tuner,) = plan.tuners.values()
        assert min(len(c) for c in tuner.costs) >= Tuner.TRIES
        assert pooled[0] == 8  # 8 batches of 8 groups on the pool
    pooled.clear()
    with sim.config(checks=checks, max_lanes=1024, threads=2):  # explicit: always the pool
        for _ in range(4):
            sim.launch(fn, (8192,), (128,), [x, np.zeros(256, np.int32)])
    assert pooled == [8] * 4


@pytest.mark.parametrize("checks", [False, True], ids=["checks_off", "checks_on"])
@pytest.mark.parametrize("case", CORPUS, ids=[c[0] for c in CORPUS])
def test_corpus_every_way_same_bits(
    monkeypatch: pytest.MonkeyPatch, case: Any, checks: bool
) -> None:
    """Each launch of the differential corpus with the default threads (every way in turn:
    one thread, the pool, 4x bigger batches) gives the bits of batches of one group on one
    thread."""
    monkeypatch.setenv("CLPY_SIM_THREADS", "2")
    _, kern, g, l_, make = case
    fn = kern.specialize().function
    lanes = int(np.prod(l_))
    args = make()
    ref = _outcome(fn, g, l_, args, checks=checks, threads=1, max_lanes=lanes)
    assert ref[1] is None
    with sim.config(checks=checks, max_lanes=lanes):
        _LAUNCH.get_plan(fn, sim.current().checks).tuners.clear()
    for _ in range(6):
        got = _outcome(fn, g, l_, args, checks=checks, max_lanes=lanes)  # (copies of args)
        _same_bits(ref[0], got[0])
        assert got[1] is None
