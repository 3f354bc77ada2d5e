"""The simulator gives the same results and the same checker reports on any number of threads.

Every launch here is cut into many batches (``max_lanes`` = one or two work-groups), so with
``threads=4`` the batches really run on the pool; each case runs with ``threads=1`` and
``threads=4`` and compares every output bit for bit, and every report field for field. The
kernels are the differential corpus (tests/test_sim_diff*.py), the atomics of
tests/test_atomics.py in both order modes, and every seeded bug of tests/test_sim_bugs.py.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

import numpy as np
import pytest

import clpy
import clpy_sim as sim
from clpy import Global, float32, int32
from clpy_sim import SimulationError
from tests import test_atomics as ta
from tests import test_sim_bugs as tb
from tests.test_sim_diff import CASES as DIFF_CASES
from tests.test_sim_diff_builtins import CASES as BUILTIN_CASES
from tests.test_sim_diff_builtins import N as BUILTIN_N
from tests.test_sim_diff_more import CASES as MORE_CASES

# the NumPy engine's own machinery (checks off would otherwise run natively)
pytestmark = pytest.mark.usefixtures("numpy_engine")

THREADS = 4


def _copy(args: list[Any]) -> list[Any]:
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def _outcome(fn: Any, g: Any, l_: Any, args: list[Any], **cfg: Any) -> tuple[list[Any], Any]:
    """(arguments after the launch, the reports as tuples, or None)."""
    out = _copy(args)
    try:
        with sim.config(**cfg):
            sim.launch(fn, g, l_, out)
    except SimulationError as e:
        return out, [_report(r) for r in e.reports]
    return out, None


def _report(r: Any) -> tuple[Any, ...]:
    return (
        r.kind,
        r.message,
        r.loc,
        r.global_id,
        r.local_id,
        r.group_id,
        r.memory,
        r.index,
        r.other_loc,
        r.other_global_id,
        r.count,
    )


def _same_bits(a: list[Any], b: list[Any]) -> None:
    for x, y in zip(a, b):
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape
            assert x.tobytes() == y.tobytes()


def _both(fn: Any, g: Any, l_: Any, args: list[Any], **cfg: Any) -> tuple[list[Any], Any]:
    one = _outcome(fn, g, l_, args, threads=1, **cfg)
    many = _outcome(fn, g, l_, args, threads=THREADS, **cfg)
    _same_bits(one[0], many[0])
    assert one[1] == many[1]
    return one


def _lanes(l_: tuple[int, ...]) -> int:
    return int(np.prod(l_))


CORPUS = (
    [(c[0], c[1], c[2], c[3], c[4]) for c in DIFF_CASES]
    + [(c[0], c[1], c[2], c[3], c[4]) for c in MORE_CASES]
    + [(c[0], c[1], (BUILTIN_N,), (32,), c[3]) for c in BUILTIN_CASES]
)


@pytest.mark.parametrize("checks", [False, True], ids=["checks_off", "checks_on"])
@pytest.mark.parametrize("case", CORPUS, ids=[c[0] for c in CORPUS])
def test_corpus_is_thread_independent(case: Any, checks: bool) -> None:
    _, kern, g, l_, make = case
    fn = kern.specialize().function
    out, reports = _both(fn, g, l_, make(), checks=checks, max_lanes=_lanes(l_))
    assert reports is None


@pytest.mark.parametrize("order", ["work-item", "shuffled"])
def test_atomics_are_thread_independent(order: str) -> None:
    n = 512
    cfg = {"atomic_order": order, "seed": 3, "max_lanes": 64}
    out, rep = _both(ta.counters.ir, (n,), (64,), ta._counter_args(n), **cfg)
    assert rep is None
    ta._check_counters(out, n, exact_order=order == "work-item")
    x = np.random.default_rng(2).integers(0, 10_000, 8192).astype(np.uint32)
    out, rep = _both(ta.histogram.ir, (8192,), (128,), [x, np.zeros(256, np.int32)], **cfg)
    np.testing.assert_array_equal(out[1], np.bincount(x % 256, minlength=256))
    out, _ = _both(ta.global_histogram.ir, (8192,), (256,), [x, np.zeros(64, np.uint32)], **cfg)
    np.testing.assert_array_equal(out[1], np.bincount(x % 64, minlength=64))
    xs = (np.arange(192) % 7 * 0.5).astype(np.float32)
    _both(
        ta.cas_loop_add.ir,
        (192,),
        (64,),
        [np.zeros(1, np.int32), np.zeros(1, np.float32), xs],
        **cfg,
    )
    out, _ = _both(
        ta.ticket_writes.ir, (128,), (32,), [np.zeros(1, np.int32), np.zeros(128, np.int32)], **cfg
    )
    assert sorted(out[1]) == list(range(128))


@clpy.kernel
def last_ticket_sum(
    x: Global[float32], part: Global[float32], ticket: Global[int32], total: Global[float32]
):
    """One-launch reduction: each group writes its part; the group that takes the last
    ticket adds them all up (after its atomic, every earlier group has finished)."""
    g = clpy.get_group_id(0)
    s = clpy.work_group_reduce_add(x[clpy.get_global_id(0)])
    if clpy.get_local_id(0) == 0:
        part[g] = s
        t = clpy.atomic_inc(ticket)
        if t == clpy.get_num_groups(0) - 1:
            acc = float32(0)
            for k in range(clpy.get_num_groups(0)):
                acc += part[k]
            total[0] = acc


def test_last_ticket_reduction_sees_every_part() -> None:
    x = np.random.default_rng(5).random(64 * 32, np.float32)
    args = [x, np.zeros(32, np.float32), np.zeros(1, np.int32), np.zeros(1, np.float32)]
    # the parts are read by another work-group: a race by the letter (no fence in the
    # simulator's model), so only the bounds checker is on
    out, rep = _both(last_ticket_sum.ir, (x.size,), (64,), args, checks={"bounds"}, max_lanes=64)
    assert rep is None
    assert out[3][0] == pytest.approx(float(x.sum()), rel=1e-5)


@pytest.mark.parametrize("case", tb.BUGS, ids=[c[0].__name__ for c in tb.BUGS])
@pytest.mark.parametrize("per_batch", [1, 2])
def test_seeded_bug_reports_are_thread_independent(case: Any, per_batch: int) -> None:
    buggy, fixed, kind, make, _ = case
    args = make()
    cfg = {"max_lanes": per_batch * tb.L}
    _, rep = _both(buggy.specialize().function, (tb.N,), (tb.L,), args, **cfg)
    assert rep is not None and rep[0][0] == kind
    _, rep = _both(fixed.specialize().function, (tb.N,), (tb.L,), args, **cfg)
    assert rep is None


def test_cross_batch_race_report_is_the_sequential_one() -> None:
    x = tb.f32()
    _, rep = _both(
        tb.neighbour_across_groups.ir,
        (tb.N,),
        (tb.L,),
        [x, np.zeros(tb.N, np.float32)],
        max_lanes=tb.L,
    )
    assert rep is not None and rep[0][0] == "data-race" and "different work-groups" in rep[0][1]


def test_warn_mode_is_thread_independent() -> None:
    def run(threads: int) -> list[str]:
        globals().pop("__warningregistry__", None)  # once per line over all launches
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _outcome(
                tb.group_race.ir,
                (tb.N,),
                (tb.L,),
                tb._fl(),
                on_error="warn",
                max_lanes=tb.L,
                threads=threads,
            )
        return [str(w.message) for w in caught]

    assert run(1) == run(THREADS) and run(1)


def test_batches_run_on_the_pool(monkeypatch: Any) -> None:
    sl = importlib.import_module("clpy_sim.launch")  # the package's `launch` is the function
    calls: list[int] = []
    real = sl.run_batches

    def spy(count: int, threads: int, *a: Any) -> None:
        calls.append(threads)
        real(count, threads, *a)

    monkeypatch.setattr(sl, "run_batches", spy)
    x = np.arange(1024, dtype=np.float32)
    y = np.zeros(1024, np.float32)
    kern = DIFF_CASES[0][1]  # saxpy
    with sim.config(threads=3, max_lanes=64):
        sim.launch(kern.specialize().function, (1024,), (64,), [np.float32(2), x, y])
    assert calls == [3]
    np.testing.assert_array_equal(y, 2 * x)
    with sim.config(threads=1, max_lanes=64):
        sim.launch(kern.specialize().function, (1024,), (64,), [np.float32(2), x, y])
    assert calls == [3]


def test_threads_setting(monkeypatch: Any) -> None:
    with pytest.raises(ValueError, match="threads"):
        sim.config(threads=0)
    monkeypatch.setenv("CLPY_SIM_THREADS", "3")
    assert sim.current().thread_count() == 3
    with sim.config(threads=2) as cfg:
        assert cfg.thread_count() == 2
    monkeypatch.setenv("CLPY_SIM_THREADS", "zero")
    with pytest.raises(ValueError, match="CLPY_SIM_THREADS"):
        sim.current().thread_count()
    monkeypatch.delenv("CLPY_SIM_THREADS")
    assert sim.current().thread_count() >= 1


@pytest.mark.parametrize("checks", [False, True], ids=["checks_off", "checks_on"])
def test_async_copies_are_thread_independent(checks: bool) -> None:
    from tests.test_async_copy import scatter_back

    groups = 16
    a = np.arange(16 * groups, dtype=np.float32)
    out, rep = _both(
        scatter_back.specialize(a=Global[float32], out=Global[float32], groups=int32).function,
        (16 * groups,),
        (16,),
        [a, np.zeros(16 * groups, np.float32), np.int32(groups)],
        checks=checks,
        max_lanes=16,
    )
    assert rep is None
    np.testing.assert_array_equal(out[1], (2 * a).reshape(groups, 16).T.ravel())


@clpy.kernel
def race_in_group_1(x: Global[float32], y: Global[float32]):
    lid = clpy.get_local_id(0)
    tmp = clpy.local_array(float32, 32)
    tmp[lid] = x[clpy.get_global_id(0)]
    if clpy.get_group_id(0) == 1:
        tmp[0] = x[lid]  # a write/write race, in work-group 1 only
    clpy.barrier()
    y[clpy.get_global_id(0)] = tmp[lid]


def test_sampled_checkers_watch_every_kth_batch() -> None:
    fn = race_in_group_1.specialize().function
    args = tb._fl()
    _, rep = _both(fn, (tb.N,), (tb.L,), args, max_lanes=tb.L)
    assert rep is not None and rep[0][0] == "data-race" and rep[0][5] == (1,)
    # batches 0 and 2 watched: the race in work-group 1 goes unseen, on any thread count
    out, rep = _both(fn, (tb.N,), (tb.L,), args, max_lanes=tb.L, sample=2)
    assert rep is None
    ref, _ = _outcome(fn, (tb.N,), (tb.L,), args, checks=False)
    _same_bits(out, ref)  # sampling changes what is checked, never the results
    _, rep = _both(fn, (tb.N,), (tb.L,), args, max_lanes=2 * tb.L, sample=2)
    assert rep is not None  # work-groups 0 and 1 form batch 0
