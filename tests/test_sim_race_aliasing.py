"""The global race checker keys its shadow by memory, not by parameter (sim/aliases.py):
two parameters over one array race between work-items like one parameter would (spec
§3.3), and the report names both parameters; disjoint views, read-only sharing, one
work-item's own accesses and barrier-ordered ones stay clean."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

import clpy
import clpy_sim as sim
from clpy import Global, float32, int32
from clpy_sim import SimulationError

N = 128
L = 32


def line_of(kernel: Any, marker: str) -> int:
    lines, start = inspect.getsourcelines(kernel.py_function)
    return start + next(k for k, t in enumerate(lines) if marker in t)


@clpy.kernel
def neighbours(x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    y[i] = x[i] + x[i + 1]  # RACE


@clpy.kernel
def copy_far(x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    y[i] = x[i]  # FAR


@clpy.kernel
def sum_two(x: Global[float32], y: Global[float32], z: Global[float32]):
    i = clpy.get_global_id(0)
    z[i] = x[i] + y[i + 1]


@clpy.kernel
def own_then_read(x: Global[float32], y: Global[float32], z: Global[float32]):
    i = clpy.get_global_id(0)
    y[i] = x[i] * 2.0
    z[i] = x[i]


@clpy.kernel
def shift_after_barrier(x: Global[float32], y: Global[float32], z: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    y[i] = x[i] + 1.0
    clpy.barrier(clpy.CLK_GLOBAL_MEM_FENCE)
    z[i] = x[(i + 1) % n]


@clpy.kernel
def shift_no_barrier(x: Global[float32], y: Global[float32], z: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    y[i] = x[i] + 1.0  # WRITE
    z[i] = x[(i + 1) % n]  # READ


def _launch(kernel: Any, gs: int, ls: int, args: list[Any], **cfg: Any) -> None:
    with sim.config(**cfg):
        sim.launch(kernel.specialize().function, (gs,), (ls,), args)


def test_overlapping_views_race_names_both_parameters() -> None:
    base = np.arange(N + 2, dtype=np.float32)
    with pytest.raises(SimulationError) as info:
        _launch(neighbours, N, L, [base[1 : N + 2], base[0:N]])
    r = info.value.report
    assert r.kind == "data-race" and r.memory == "y" and r.index == 1
    assert r.line == r.other_line == line_of(neighbours, "# RACE")
    assert r.global_id == (1,) and r.other_global_id == (0,)
    assert "`y` (which overlaps `x` in memory)" in r.message
    assert "read through `x`" in r.message and "between the same barriers" in r.message


def test_overlapping_device_array_views_race() -> None:
    dev = clpy.get_device("sim")
    h = np.arange(N + 1, dtype=np.float32)
    d = clpy.to_device(h, device=dev)
    with pytest.raises(SimulationError) as info:
        neighbours[N, L](d[0 : N + 1], d[1 : N + 1], device=dev)  # y[i] is x[i + 1]
    r = info.value.report
    assert r.kind == "data-race" and r.line == line_of(neighbours, "# RACE")
    assert "`x`" in r.message and "`y`" in r.message
    np.testing.assert_array_equal(d.get(), h)


def test_cross_group_race_through_two_parameters() -> None:
    base = np.arange(N + L, dtype=np.float32)
    # work-item i writes base[i] and reads base[i + L]: written by work-item i + L, one
    # work-group further
    with pytest.raises(SimulationError) as info:
        _launch(copy_far, N, L, [base[L : N + L], base[0:N]])
    r = info.value.report
    assert r.kind == "data-race" and r.line == line_of(copy_far, "# FAR")
    assert "different work-groups" in r.message
    assert "`x`" in r.message and "`y`" in r.message


def test_threaded_launch_reports_the_same_race() -> None:
    base = np.arange(N + 2, dtype=np.float32)
    with pytest.raises(SimulationError) as info:
        _launch(neighbours, N, L, [base[1 : N + 2], base[0:N]], threads=2, max_lanes=L)
    r = info.value.report
    assert r.memory == "y" and r.index == 1 and r.global_id == (1,)


def test_disjoint_views_run_clean() -> None:
    base = np.arange(2 * N + 8, dtype=np.float32)
    x, y = base[0 : N + 1], base[N + 8 : 2 * N + 8]
    want = x[:N] + x[1 : N + 1]
    _launch(neighbours, N, L, [x, y], checks=True)
    np.testing.assert_array_equal(y, want)


def test_same_array_twice_read_only_runs_clean() -> None:
    a = np.arange(N + 1, dtype=np.float32)
    z = np.zeros(N, np.float32)
    _launch(sum_two, N, L, [a, a, z], checks=True)
    np.testing.assert_array_equal(z, a[:N] + a[1:])
    z2 = np.zeros(N, np.float32)
    sum_two[N, L](a, a, z2, device="sim")  # through the runtime (one working copy)
    np.testing.assert_array_equal(z2, z)


def test_own_write_then_read_through_other_parameter_runs_clean() -> None:
    a = np.arange(N, dtype=np.float32)
    z = np.zeros(N, np.float32)
    want = a * 2
    _launch(own_then_read, N, L, [a, a, z], checks=True)  # program order in one work-item
    np.testing.assert_array_equal(a, want)
    np.testing.assert_array_equal(z, want)


def test_barrier_orders_accesses_through_two_parameters() -> None:
    base = np.arange(L, dtype=np.float32)
    a, z = base.copy(), np.zeros(L, np.float32)
    _launch(shift_after_barrier, L, L, [a, a, z, np.int32(L)], checks=True)  # one work-group
    np.testing.assert_array_equal(a, base + 1)
    np.testing.assert_array_equal(z, np.roll(base + 1, -1))
    b = base.copy()
    with pytest.raises(SimulationError) as info:
        _launch(shift_no_barrier, L, L, [b, b[:], z, np.int32(L)])
    r = info.value.report
    assert r.kind == "data-race" and {r.line, r.other_line} == {
        line_of(shift_no_barrier, "# WRITE"),
        line_of(shift_no_barrier, "# READ"),
    }
