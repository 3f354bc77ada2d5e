"""Seeded-bug corpus: each buggy kernel is caught with the right kind of report at the right
line (marked ``# BUG`` in the source), and its fixed twin runs clean with every check on."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

import clpy
import clpy_sim as sim
from clpy import Global, float32, int32, uint32
from clpy_sim import SimulationError

N = 128
L = 32


def bug_line(kernel: Any, marker: str = "# BUG") -> int:
    fn = kernel.py_function if hasattr(kernel, "py_function") else kernel
    lines, start = inspect.getsourcelines(fn)
    for k, text in enumerate(lines):
        if marker in text:
            return start + k
    raise AssertionError(f"no {marker} marker in {fn.__name__}")


# ----------------------------------------------------------------------------- kernels

@clpy.kernel
def oob_read(x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    y[i] = x[i + 1] - x[i]  # BUG


@clpy.kernel
def oob_read_fixed(x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    if i + 1 < clpy.get_global_size(0):
        y[i] = x[i + 1] - x[i]


@clpy.kernel
def oob_write(x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    y[i + 1] = x[i]  # BUG


@clpy.kernel
def oob_write_fixed(x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    y[(i + 1) % clpy.get_global_size(0)] = x[i]


@clpy.kernel
def oob_local(x: Global[float32], y: Global[float32]):
    lid = clpy.get_local_id(0)
    tmp = clpy.local_array(float32, 32)
    tmp[lid] = x[clpy.get_global_id(0)]
    clpy.barrier()
    y[clpy.get_global_id(0)] = tmp[lid + 1]  # BUG


@clpy.kernel
def oob_local_fixed(x: Global[float32], y: Global[float32]):
    lid = clpy.get_local_id(0)
    tmp = clpy.local_array(float32, 32)
    tmp[lid] = x[clpy.get_global_id(0)]
    clpy.barrier()
    y[clpy.get_global_id(0)] = tmp[(lid + 1) % 32]


@clpy.kernel
def oob_private(x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    a = clpy.private_array(float32, 4)
    for k in range(5):
        a[k] = x[i] * k  # BUG
    y[i] = a[0] + a[3]


@clpy.kernel
def oob_private_fixed(x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    a = clpy.private_array(float32, 4)
    for k in range(4):
        a[k] = x[i] * k
    y[i] = a[0] + a[3]


@clpy.func
def load_at(p: Global[float32], k: int32) -> float32:
    return p[k]  # BUG


@clpy.kernel
def oob_in_func(x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    y[i] = load_at(x, i * 2)


@clpy.kernel
def oob_in_func_fixed(x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    y[i] = load_at(x, i // 2)


@clpy.kernel
def local_ww_race(x: Global[float32], y: Global[float32]):
    tmp = clpy.local_array(float32, 32)
    tmp[0] = x[clpy.get_global_id(0)]  # BUG
    clpy.barrier()
    y[clpy.get_global_id(0)] = tmp[0]


@clpy.kernel
def local_ww_race_fixed(x: Global[float32], y: Global[float32]):
    tmp = clpy.local_array(float32, 32)
    if clpy.get_local_id(0) == 0:
        tmp[0] = x[clpy.get_global_id(0)]
    clpy.barrier()
    y[clpy.get_global_id(0)] = tmp[0]


@clpy.kernel
def local_rw_race(x: Global[float32], y: Global[float32]):
    lid = clpy.get_local_id(0)
    tmp = clpy.local_array(float32, 33)
    tmp[lid] = x[clpy.get_global_id(0)]
    if lid == 0:
        tmp[32] = 0.0
    clpy.barrier()
    tmp[lid] = tmp[lid + 1]  # BUG
    clpy.barrier()
    y[clpy.get_global_id(0)] = tmp[lid]


@clpy.kernel
def local_rw_race_fixed(x: Global[float32], y: Global[float32]):
    lid = clpy.get_local_id(0)
    tmp = clpy.local_array(float32, 33)
    tmp[lid] = x[clpy.get_global_id(0)]
    if lid == 0:
        tmp[32] = 0.0
    clpy.barrier()
    v = tmp[lid + 1]
    clpy.barrier()
    tmp[lid] = v
    clpy.barrier()
    y[clpy.get_global_id(0)] = tmp[lid]


@clpy.kernel
def global_race(x: Global[float32], total: Global[float32]):
    i = clpy.get_global_id(0)
    total[0] += x[i]  # BUG


@clpy.kernel
def global_race_fixed(x: Global[float32], total: Global[float32]):
    i = clpy.get_global_id(0)
    total[i] += x[i]


@clpy.kernel
def group_race(x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    y[clpy.get_local_id(0)] = x[i] * 2.0  # BUG


@clpy.kernel
def group_race_fixed(x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    y[i] = x[i] * 2.0


@clpy.kernel
def tree_no_barrier(x: Global[float32], out: Global[float32]):
    lid = clpy.get_local_id(0)
    tmp = clpy.local_array(float32, 32)
    tmp[lid] = x[clpy.get_global_id(0)]
    clpy.barrier()
    s = 16
    while s > 0:
        if lid < s:
            tmp[lid] += tmp[lid + s]  # BUG
        s //= 2
    if lid == 0:
        out[clpy.get_group_id(0)] = tmp[0]


@clpy.kernel
def tree_no_barrier_fixed(x: Global[float32], out: Global[float32]):
    lid = clpy.get_local_id(0)
    tmp = clpy.local_array(float32, 32)
    tmp[lid] = x[clpy.get_global_id(0)]
    clpy.barrier()
    s = 16
    while s > 0:
        if lid < s:
            tmp[lid] += tmp[lid + s]
        clpy.barrier()
        s //= 2
    if lid == 0:
        out[clpy.get_group_id(0)] = tmp[0]


@clpy.kernel
def missing_first_barrier(x: Global[float32], y: Global[float32]):
    lid = clpy.get_local_id(0)
    tmp = clpy.local_array(float32, 32)
    tmp[lid] = x[clpy.get_global_id(0)]
    y[clpy.get_global_id(0)] = tmp[31 - lid]  # BUG


@clpy.kernel
def missing_first_barrier_fixed(x: Global[float32], y: Global[float32]):
    lid = clpy.get_local_id(0)
    tmp = clpy.local_array(float32, 32)
    tmp[lid] = x[clpy.get_global_id(0)]
    clpy.barrier()
    y[clpy.get_global_id(0)] = tmp[31 - lid]


@clpy.kernel
def divergent_barrier(x: Global[float32], y: Global[float32]):
    lid = clpy.get_local_id(0)
    v = x[clpy.get_global_id(0)]
    if lid < 16:
        clpy.barrier()  # BUG
        v = v * 2.0
    y[clpy.get_global_id(0)] = v


@clpy.kernel
def divergent_barrier_fixed(x: Global[float32], y: Global[float32]):
    lid = clpy.get_local_id(0)
    v = x[clpy.get_global_id(0)]
    clpy.barrier()
    if lid < 16:
        v = v * 2.0
    y[clpy.get_global_id(0)] = v


@clpy.kernel
def return_before_barrier(x: Global[float32], y: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    tmp = clpy.local_array(float32, 32)
    if i >= n:
        return
    tmp[clpy.get_local_id(0)] = x[i]
    clpy.barrier()  # BUG
    y[i] = tmp[0]


@clpy.kernel
def return_before_barrier_fixed(x: Global[float32], y: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    tmp = clpy.local_array(float32, 32)
    tmp[clpy.get_local_id(0)] = x[i] if i < n else 0.0
    clpy.barrier()
    if i < n:
        y[i] = tmp[0]


@clpy.kernel
def uninit_local(x: Global[float32], y: Global[float32]):
    lid = clpy.get_local_id(0)
    tmp = clpy.local_array(float32, 32)
    if lid < 16:
        tmp[lid] = x[clpy.get_global_id(0)]
    clpy.barrier()
    y[clpy.get_global_id(0)] = tmp[lid]  # BUG


@clpy.kernel
def uninit_local_fixed(x: Global[float32], y: Global[float32]):
    lid = clpy.get_local_id(0)
    tmp = clpy.local_array(float32, 32)
    tmp[lid] = x[clpy.get_global_id(0)] if lid < 16 else 0.0
    clpy.barrier()
    y[clpy.get_global_id(0)] = tmp[lid]


@clpy.kernel
def div_zero(x: Global[int32], d: Global[int32], y: Global[int32]):
    i = clpy.get_global_id(0)
    y[i] = x[i] // d[i]  # BUG


@clpy.kernel
def div_zero_fixed(x: Global[int32], d: Global[int32], y: Global[int32]):
    i = clpy.get_global_id(0)
    y[i] = x[i] // d[i] if d[i] != 0 else 0


@clpy.kernel
def mod_zero(x: Global[uint32], y: Global[uint32], k: uint32):
    i = clpy.get_global_id(0)
    y[i] = x[i] % (k - i % 8)  # BUG


@clpy.kernel
def mod_zero_fixed(x: Global[uint32], y: Global[uint32], k: uint32):
    i = clpy.get_global_id(0)
    y[i] = x[i] % (k + 1 - i % 8)


@clpy.kernel
def spin(flag: Global[int32], y: Global[int32]):
    i = clpy.get_global_id(0)
    while flag[0] == 0:  # BUG
        pass
    y[i] = flag[0]


@clpy.kernel
def spin_fixed(flag: Global[int32], y: Global[int32]):
    i = clpy.get_global_id(0)
    tries = 0
    while flag[0] == 0 and tries < 100:
        tries += 1
    y[i] = tries


@clpy.kernel
def failing_assert(x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    assert x[i] >= 0.0, "negative input"  # BUG
    y[i] = clpy.sqrt(x[i])


@clpy.kernel
def failing_assert_fixed(x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    assert x[i] >= -1.0, "negative input"
    y[i] = clpy.sqrt(clpy.fabs(x[i]))


@clpy.kernel
def oob_pointer_arith(x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    tail = x + 64
    y[i] = tail[i]  # BUG


@clpy.kernel
def oob_pointer_arith_fixed(x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    tail = x + 64
    y[i] = tail[i % 64]


# ----------------------------------------------------------------------------- corpus


def f32(lo: float = -1, hi: float = 1) -> np.ndarray:
    return np.random.default_rng(3).uniform(lo, hi, N).astype(np.float32)


def i32(lo: int, hi: int) -> np.ndarray:
    return np.random.default_rng(4).integers(lo, hi, N).astype(np.int32)


def _fl() -> list[Any]:
    return [f32(), np.zeros(N, np.float32)]


def _div() -> list[Any]:
    d = i32(1, 6) * np.where(i32(0, 2) == 0, -1, 1).astype(np.int32)
    d[37] = 0
    return [i32(-1000, 1000), d, np.zeros(N, np.int32)]


def _div_fixed() -> list[Any]:
    return _div()


BUGS: list[tuple[Any, Any, str, Any, tuple[int, ...] | None]] = [
    # (buggy, fixed, kind, args, expected global id of the report)
    (oob_read, oob_read_fixed, "out-of-bounds", _fl, (N - 1,)),
    (oob_write, oob_write_fixed, "out-of-bounds", _fl, (N - 1,)),
    (oob_local, oob_local_fixed, "out-of-bounds", _fl, (L - 1,)),
    (oob_private, oob_private_fixed, "out-of-bounds", _fl, (0,)),
    (oob_in_func, oob_in_func_fixed, "out-of-bounds", _fl, (N // 2,)),
    (oob_pointer_arith, oob_pointer_arith_fixed, "out-of-bounds", _fl, (64,)),
    (local_ww_race, local_ww_race_fixed, "data-race", _fl, None),
    (local_rw_race, local_rw_race_fixed, "data-race", _fl, None),
    (global_race, global_race_fixed, "data-race", lambda: [f32(), np.zeros(N, np.float32)],
     None),
    (group_race, group_race_fixed, "data-race", _fl, None),
    (tree_no_barrier, tree_no_barrier_fixed, "data-race",
     lambda: [f32(), np.zeros(N // L, np.float32)], None),
    (missing_first_barrier, missing_first_barrier_fixed, "data-race", _fl, None),
    (divergent_barrier, divergent_barrier_fixed, "barrier-divergence", _fl, (0,)),
    (return_before_barrier, return_before_barrier_fixed, "barrier-divergence",
     lambda: [f32(), np.zeros(N, np.float32), np.int32(N - 10)], (N - L,)),
    (uninit_local, uninit_local_fixed, "uninitialized-read", _fl, (16,)),
    (div_zero, div_zero_fixed, "division-by-zero", _div, (37,)),
    (mod_zero, mod_zero_fixed, "division-by-zero",
     lambda: [i32(0, 1000).astype(np.uint32), np.zeros(N, np.uint32), np.uint32(7)], (7,)),
    (spin, spin_fixed, "no-progress", lambda: [np.zeros(1, np.int32), np.zeros(N, np.int32)],
     (0,)),
    (failing_assert, failing_assert_fixed, "assertion", lambda: [f32(), np.zeros(N, np.float32)],
     None),
]


def _run(kernel: Any, args: list[Any], **cfg: Any) -> list[Any]:
    out = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with sim.config(**cfg):
        sim.launch(kernel.specialize().function, (N,), (L,), out)
    return out


@pytest.mark.parametrize("case", BUGS, ids=[c[0].__name__ for c in BUGS])
def test_bug_is_caught(case: Any) -> None:
    buggy, _, kind, make, gid = case
    with pytest.raises(SimulationError) as info:
        _run(buggy, make())
    r = info.value.report
    assert r.kind == kind, info.value
    assert r.loc.line == bug_line(buggy if buggy is not oob_in_func else load_at), str(r)
    assert r.loc.file.endswith("test_sim_bugs.py")
    if gid is not None:
        assert r.global_id == gid, str(r)
    assert r.local_id is not None and r.group_id is not None


@pytest.mark.parametrize("case", BUGS, ids=[c[1].__name__ for c in BUGS])
def test_fixed_twin_runs_clean(case: Any) -> None:
    _, fixed, _, make, _ = case
    _run(fixed, make(), checks=True)


def test_race_report_names_both_lines() -> None:
    with pytest.raises(SimulationError) as info:
        _run(tree_no_barrier, [f32(), np.zeros(N // L, np.float32)])
    r = info.value.report
    assert r.other_loc is not None and r.other_loc.line == bug_line(tree_no_barrier)
    assert r.memory == "tmp" and r.index is not None and r.other_global_id is not None
    text = str(info.value)
    assert "data race" in text and "tmp[" in text and "conflicting access" in text


def test_local_rw_race_report_is_read_write() -> None:
    with pytest.raises(SimulationError) as info:
        _run(local_rw_race, _fl())
    assert "write/read" in info.value.report.message or "read/write" in \
        info.value.report.message


def test_group_race_is_between_groups() -> None:
    with pytest.raises(SimulationError) as info:
        _run(group_race, _fl())
    assert "different work-groups" in info.value.report.message


def test_warn_mode_reports_and_continues() -> None:
    with pytest.warns(sim.SimulationWarning, match="out-of-bounds"):
        out = _run(oob_read, _fl(), on_error="warn")
    x = _fl()[0]
    np.testing.assert_allclose(out[1][:-1], x[1:] - x[:-1])


def test_checks_off_runs_buggy_kernel_without_report() -> None:
    _run(global_race, [f32(), np.zeros(N, np.float32)], checks=False)
    _run(divergent_barrier, _fl(), checks=False)


def test_selected_checks_only() -> None:
    _run(global_race, [f32(), np.zeros(N, np.float32)], checks={"bounds"})
    with pytest.raises(SimulationError):
        _run(oob_read, _fl(), checks={"bounds"})


def test_error_leaves_no_partial_printf(capsys: Any) -> None:
    with pytest.raises(SimulationError):
        _run(div_zero, _div())
    assert capsys.readouterr().out == ""


def test_clpy_sim_forwarder() -> None:
    assert clpy.sim.SimulationError is SimulationError
    with clpy.sim.config(checks=False) as cfg:
        assert cfg.checks == frozenset()
    assert sim.current().checks == sim.CHECKS


@clpy.kernel
def neighbour_in_group(x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    y[i] = x[i] * 2.0
    clpy.barrier()
    x[i] = y[i ^ 1]  # same work-group, after a barrier: ordered


@clpy.kernel
def neighbour_across_groups(x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    y[i] = x[i] * 2.0
    clpy.barrier()
    x[i] = y[(i + 32) % 128]  # BUG: another work-group's element; barriers do not order groups


def test_global_memory_ordering_follows_work_groups() -> None:
    x = f32()
    out = _run(neighbour_in_group, [x, np.zeros(N, np.float32)])
    np.testing.assert_allclose(out[0], (x * 2)[np.arange(N) ^ 1])
    with pytest.raises(SimulationError) as info:
        _run(neighbour_across_groups, [x, np.zeros(N, np.float32)])
    r = info.value.report
    assert r.kind == "data-race" and r.line == bug_line(neighbour_across_groups)
    assert "different work-groups" in r.message
