"""Race reports name both accesses and both work-items; ``on_error="warn"`` warns once per
kind and line over all launches, at the user's launch line (issue 12)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import clpy
from clpy import Global, float32, int32
from clpy_sim import SimulationError, SimulationWarning

T = 8


@clpy.kernel
def sgemm_missing_barrier(a: Global[float32], b: Global[float32], c: Global[float32],
                          n: int32):
    tx = clpy.get_local_id(0)
    ty = clpy.get_local_id(1)
    col = clpy.get_global_id(0)
    row = clpy.get_global_id(1)
    ta = clpy.local_array(float32, (T, T))
    tb = clpy.local_array(float32, (T, T))
    acc = float32(0)
    for t0 in range(0, n, T):
        ta[ty][tx] = a[row * n + t0 + tx]
        tb[ty][tx] = b[(t0 + ty) * n + col]
        clpy.barrier()
        for k in range(T):
            acc += ta[ty][k] * tb[k][tx]
        # BUG: no barrier before the next tile overwrites ta and tb
    c[row * n + col] = acc


@clpy.kernel
def count_all(x: Global[int32]):
    x[0] += 1  # BUG: not atomic


@clpy.kernel
def cross_group(x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    y[i] = x[i]
    y[(i + 16) % 64] = 2.0 * x[i]  # BUG: another work-group's element


def _line(k: object, text: str) -> int:
    src, first = __import__("inspect").getsourcelines(k.py_function)  # type: ignore[attr-defined]
    return first + next(j for j, s in enumerate(src) if text in s)


def _report(k: object, g: object, loc: object, *args: object) -> object:
    with pytest.raises(SimulationError) as e:
        k[g, loc](*args, device="sim")  # type: ignore[index]
    return e.value.report


def test_missing_barrier_in_tiled_sgemm_names_the_other_access() -> None:
    n = 32
    a = np.ones((n, n), np.float32)
    r = _report(sgemm_missing_barrier, (n, n), (T, T), a, a, np.zeros((n, n), np.float32), n)
    assert r.kind == "data-race"
    assert r.line == _line(sgemm_missing_barrier, "ta[ty][tx] = a[")
    assert r.other_line == _line(sgemm_missing_barrier, "acc += ta[ty][k]")
    assert r.global_id is not None and r.other_global_id is not None
    assert r.other_global_id != r.global_id
    # both in work-group (0, 0): the reader of ta[0][0] has local row 0
    assert r.other_global_id[1] == 0 and r.group_id == (0, 0)
    assert "conflicting access by work-item" in str(r.render())


def test_non_atomic_increment_names_both_work_items() -> None:
    x = np.zeros(1, np.int32)
    r = _report(count_all, 64, 16, x)
    assert r.kind == "data-race" and r.global_id == (0,)
    assert r.other_global_id is not None and r.other_global_id != (0,)
    assert r.line == r.other_line == _line(count_all, "x[0] += 1")
    assert x[0] == 0  # a failed launch leaves the caller's array untouched


def test_race_between_work_groups_names_both() -> None:
    x = np.arange(64, dtype=np.float32)
    r = _report(cross_group, 64, 16, x, np.zeros(64, np.float32))
    assert r.kind == "data-race"
    assert "in different work-groups" in r.message
    assert r.other_global_id is not None and r.other_loc is not None
    assert r.group_id != (r.other_global_id[0] // 16,)


def test_warn_mode_warns_once_per_kind_and_line_at_the_launch_line() -> None:
    with warnings.catch_warnings(record=True) as seen, clpy.sim.config(on_error="warn"):
        warnings.simplefilter("default")
        for _ in range(4):
            count_all[64, 16](np.zeros(1, np.int32), device="sim")  # the launch line
    mine = [w for w in seen if issubclass(w.category, SimulationWarning)]
    assert len(mine) == 1
    assert mine[0].filename == __file__
    src = open(__file__).read().splitlines()
    assert "count_all[64, 16](np.zeros(1, np.int32)" in src[mine[0].lineno - 1]
    assert "x[0] += 1" in str(mine[0].message)
