"""The race checkers' cheaper set-up (sim/races_global.py, sim/shadow_pool.py): shadow arrays
reused by the next launch on the thread (``POOL``) and the lanes' packed records computed per
group plus per local id (``_packed``) report exactly as fresh arrays and the work-item ids did:
every report (kind, message, lines, work-items, element, count) and the arrays after the run,
for kernels run several times in a row (later launches take the arrays an earlier one dirtied)
and interleaved with other kernels, and for the seeded bugs; and a barrier after reads alone
leaves local memory's writer records, all zero then, as they are, and a barrier after writes
clears only the written columns (sim/races.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import clpy
import clpy_sim as sim
from clpy_sim import SimulationError, plan, races, shadow_pool
from clpy_sim.races import LocalShadow
from clpy_sim.races_global import GlobalShadow
from clpy_sim.state import frame_wids
from tests.test_sim_bugs import BUGS, L, N
from tests.test_sim_checker_speed import CASES, IDS, _run


@pytest.fixture
def fresh() -> Iterator[None]:
    plan._PLANS.clear()
    yield
    shadow_pool.POOL = True
    races.MEMO = races.FAST = True


def _runs(order: list[int], on_error: str, monkeypatch: Any) -> list[Any]:
    return [_run(*CASES[c], on_error, monkeypatch) for c in order]


# (the general paths too: the cheaper ones skip the writer records until the launch's first
# write, so they would not see stale records there)
@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("on_error", ["raise", "warn"])
@pytest.mark.parametrize("case", range(len(CASES)), ids=IDS)
def test_reused_shadows_report_as_fresh_ones(
    fresh: None, monkeypatch: Any, case: int, on_error: str, fast: bool
) -> None:
    races.MEMO = races.FAST = fast
    got = []
    for pool in (True, False):
        shadow_pool.POOL = pool
        got.append(_runs([case] * 3, on_error, monkeypatch))
    assert got[0] == got[1]
    assert got[0][0] == got[0][2]  # (the third launch took the arrays the second dirtied)


@pytest.mark.parametrize("fast", [True, False])
def test_interleaved_kernels_report_as_fresh_shadows(
    fresh: None, monkeypatch: Any, fast: bool
) -> None:
    races.MEMO = races.FAST = fast
    order = [c for c in range(len(CASES)) for _ in range(2)] + list(range(len(CASES)))[::-1]
    got = []
    for pool in (True, False):
        shadow_pool.POOL = pool
        got.append(_runs(order, "warn", monkeypatch))
    assert got[0] == got[1]


def _bug_reports(kernel: Any, args: list[Any]) -> Any:
    out = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        with sim.config(checks=True, threads=1):
            sim.launch(kernel.specialize().function, (N,), (L,), out)
    except SimulationError as e:
        return [str(r) for r in e.reports], [np.asarray(a).tobytes() for a in out]
    return [], [np.asarray(a).tobytes() for a in out]


@pytest.mark.parametrize("fast", [True, False])
def test_seeded_bugs_report_as_with_fresh_shadows(fresh: None, fast: bool) -> None:
    races.MEMO = races.FAST = fast
    got = []
    for pool in (True, False):
        shadow_pool.POOL = pool
        got.append(
            [_bug_reports(k, make()) for buggy, fixed, _, make, _ in BUGS for k in (buggy, fixed)]
        )
    assert got[0] == got[1]


def test_packed_records_are_the_work_item_ids(fresh: None, monkeypatch: Any) -> None:
    # every frame the cases check (root frames and the sub-frames of branches)
    real = GlobalShadow._ids
    seen = []

    def ids(self: GlobalShadow, fr: Any) -> Any:
        me_hi, grp1, ep, mine = real(self, fr)
        b = fr.batch
        gs = np.asarray(fr.gslot)
        want_hi = (frame_wids(fr) + 1) << 24
        assert np.array_equal(mine, want_hi | b.epoch[gs])
        assert mine.shape == fr.shape and mine.dtype == np.int64
        assert np.array_equal(me_hi >> 24, want_hi >> 24)
        assert np.array_equal(grp1, gs + (b.gfirst + 1))
        assert np.array_equal(np.broadcast_to(ep, gs.shape), b.epoch[gs])
        seen.append(fr.shape)
        return me_hi, grp1, ep, mine

    monkeypatch.setattr(GlobalShadow, "_ids", ids)
    for c in range(len(CASES)):
        _run(*CASES[c], "warn", monkeypatch)
    assert len(set(seen)) > 1


def test_barrier_after_reads_only_finds_the_writers_cleared(fresh: None, monkeypatch: Any) -> None:
    # a barrier of every group leaves the writer records as they are when nothing was
    # written since the last one cleared them (LocalShadow.reset): they are all zero then;
    # else it clears the written columns, outside which they are zero
    real = LocalShadow.reset
    skipped = []
    narrow = []

    def reset(self: LocalShadow, rows: Any) -> None:
        if isinstance(rows, slice) and self.read_ and not self.wrote:
            assert not self.w_own.any()
            skipped.append(rows)
        if isinstance(rows, slice) and self.wrote:
            assert not self.w_own[:, : self.wlo].any() and not self.w_own[:, self.whi :].any()
            if self.whi - self.wlo < self.w_own.shape[1]:
                narrow.append(rows)
        real(self, rows)
        if isinstance(rows, slice):
            assert not self.w_own.any()

    monkeypatch.setattr(LocalShadow, "reset", reset)
    for c in range(len(CASES)):
        _run(*CASES[c], "warn", monkeypatch)
    for buggy, fixed, _, make, _ in BUGS:
        _bug_reports(buggy, make())
        _bug_reports(fixed, make())
    assert skipped and narrow


def test_pool_reuses_arrays_of_the_launch_before_and_lets_others_go(fresh: None) -> None:
    class Run:  # (a launch, as the pool sees it: compared by identity)
        pass

    first, second = Run(), Run()
    a = shadow_pool.take(first, 100)  # type: ignore[arg-type]
    shadow_pool.take(first, 50)  # type: ignore[arg-type]
    a.w[3:9] = 7
    a.wrote(3, 9)
    a.r[[1, 90]] = 5
    a.nidx[1] = 2
    a.idx[1].append(np.array([1, 90]))
    again = shadow_pool.take(second, 100)  # type: ignore[arg-type]
    assert again is a and not a.w.any() and not a.r.any()
    shadow_pool.take(second, 70)  # type: ignore[arg-type]  # (the 50 is let go)
    assert not any(shadow_pool._LOCAL.pool.free.values())


def test_clear_caches_lets_go_of_the_kept_shadows() -> None:
    """A thread keeps its last checked launch's global shadow arrays for the next launch;
    ``clpy.clear_caches()`` lets every thread's pool go of them."""
    import gc
    import weakref

    @clpy.kernel
    def bump(x: clpy.Global[clpy.float32]):
        i = clpy.get_global_id(0)
        x[i] = x[i] + 1.0

    x = np.zeros(1 << 12, np.float32)
    bump[x.size, 64](x, device="sim")
    pools = list(shadow_pool._POOLS)
    kept = [weakref.ref(a.w) for p in pools for a in p.used]
    assert kept, "the checked launch kept its shadows"
    clpy.clear_caches()
    gc.collect()
    assert all(r() is None for r in kept)
    bump[x.size, 64](x, device="sim")  # and the next launch still checks and computes
    assert (x == 2).all()
