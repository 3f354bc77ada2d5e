"""The checkers on the native engine (sim/native/checks.py, checked_run.py): with checks on, a
launch runs natively with detectors; where one fires the NumPy engine runs it again and
reports. Every seeded bug and checker test gives the NumPy engine's report, exception and
warnings with ``engine="auto"``; clean kernels (the differential corpus, fuzzer kernels) give
its bytes and mostly run natively; thread counts agree; a detector broken on purpose is
caught."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import clpy
import clpy_sim
from clpy import Global, float32, int32
from clpy_sim.native import checks, runner
from tests.test_sim_native import needs_cc

ROOT = Path(__file__).resolve().parent.parent
BUGS = [
    "tests/test_sim_bugs.py",
    "tests/test_sim_reports.py",
    "tests/test_sim_checker_tripvec.py",
    "tests/test_sim_race_aliasing.py",
    "tests/test_sim_race_memo.py",
    "tests/test_sim_thread_warnings.py",
    "tests/test_sim_checker_speed.py",
    "tests/test_sim_race_speed.py",
    "tests/test_sim_threads.py",
]
CLEAN = [
    "tests/test_sim_diff.py",
    "tests/test_sim_diff_more.py",
    "tests/test_sim_diff_builtins.py",
    "tests/test_sim_semantics.py",
]
DESELECT = [  # (their warnings' site is the plugin's frame, not the test's)
    "tests/test_sim_reports.py::test_warn_mode_warns_once_per_kind_and_line_at_the_launch_line",
    "tests/test_sim_threads.py::test_warn_mode_is_thread_independent",
]
NATIVE_FLOOR = 0.7  # of the clean corpus's kernels (47 of 57 on 2026-11-23)
FUZZ_SEEDS = 40


def _plugin_run(tmp: Path, files: list[str]) -> tuple[dict[str, Any], Any]:
    out = tmp / "checks.json"
    env = dict(os.environ, CLPY_NATIVE_CHECKS_OUT=str(out), CLPY_SIM_NATIVE_STRICT="1")
    env.pop("CLPY_SIM_ENGINE", None)
    desel = [x for d in DESELECT for x in ("--deselect", d)]
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-o", "addopts=", "-p", "no:cacheprovider",
         "-p", "tests.test_sim_native_checks_plugin", *files, *desel],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert out.exists(), r.stdout[-3000:] + r.stderr[-3000:]
    return json.loads(out.read_text()), r


@needs_cc
def test_seeded_bugs_report_as_the_numpy_engine(tmp_path: Path) -> None:
    res, r = _plugin_run(tmp_path, BUGS)
    assert not res["mismatches"], res["mismatches"]
    # (measured 2026-11-24: 787 launches, 405 reporting; of 70 kernels, 40 last handed to the
    # NumPy engine by a detector, 28 native)
    assert res["errors"] >= 300, res  # (launches that reported or warned)
    kernels = res["kernels"]
    fired = [v for v in kernels.values() if v.startswith("a detector")]
    assert len(fired) >= 30, kernels
    assert sum(v == "native" for v in kernels.values()) >= 20, kernels
    assert r.returncode == 0, r.stdout[-3000:]


@needs_cc
def test_clean_corpus_with_checks_on_runs_natively(tmp_path: Path) -> None:
    res, r = _plugin_run(tmp_path, CLEAN)
    assert not res["mismatches"], res["mismatches"]
    kernels = res["kernels"]
    native = sum(v == "native" for v in kernels.values())
    fallback = {k: v for k, v in kernels.items() if v != "native"}
    assert native / max(len(kernels), 1) >= NATIVE_FLOOR, fallback
    assert not any(v.startswith("a detector") for v in kernels.values()), fallback
    assert r.returncode == 0, r.stdout[-3000:]


@needs_cc
def test_fuzzer_kernels_with_checks_on() -> None:
    from clpy.fuzz import features as F
    from clpy.fuzz.generator import generate as fuzz
    from clpy.fuzz.runner import load, make_inputs, run_on

    feats = F.parse("all,-struct,-printf,-collective,-subgroup,-reduction")
    native, bad = 0, []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(FUZZ_SEEDS):
            prog = load(fuzz(seed, feats), Path(tmp))
            inputs = make_inputs(prog, seed)
            a = run_on(prog, "sim", inputs, {"checks": True, "engine": "numpy"})
            b = run_on(prog, "sim", inputs, {"checks": True, "engine": "auto"})
            native += runner.why_not(prog.kernel) is None
            same = str(a.error) == str(b.error) and a.prints == b.prints
            if same and a.outputs is not None and b.outputs is not None:
                same = all(a.outputs[k].tobytes() == b.outputs[k].tobytes() for k in a.outputs)
            if not same:
                bad.append(seed)
    assert not bad, f"seeds whose outputs or reports differ: {bad}"
    assert native >= FUZZ_SEEDS // 2, f"only {native} of {FUZZ_SEEDS} fuzzer kernels native"


@clpy.kernel
def k_tile_race(x: Global[float32], y: Global[float32], shift: int32):
    t = clpy.local_array(float32, 16)
    lid = clpy.get_local_id(0)
    gid = clpy.get_global_id(0)
    t[lid] = x[gid]
    clpy.barrier()
    acc = 0.0
    for k in range(4):
        acc += t[(lid + k) % 16]
    clpy.barrier()
    t[(lid + shift) % 16] = acc  # a race when shift != 0 (another work-item reads it)
    y[gid] = acc + t[lid]


def _launch(k: Any, args: list[Any], gs: int = 256, **cfg: Any) -> tuple[str | None, Any]:
    with clpy_sim.config(**cfg):
        try:
            k[(gs,), (16,)](*args, device="sim")
        except clpy_sim.SimulationError as e:
            return str(e), runner.why_not(k)
    return None, runner.why_not(k)


@needs_cc
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_threads_agree(threads: int) -> None:
    x = np.arange(256, dtype=np.float32)
    outs = []
    for eng in ("numpy", "auto"):
        y = np.zeros(256, np.float32)
        err, why = _launch(k_tile_race, [x, y, 0], threads=threads, engine=eng)
        assert err is None
        outs.append(y.tobytes())
        y2 = np.zeros(256, np.float32)
        err2, why2 = _launch(k_tile_race, [x, y2, 3], threads=threads, engine=eng)
        assert err2 is not None and "data-race" in err2
        outs.append(err2)
    assert outs[:2] == outs[2:]
    assert why is None  # the clean launch ran natively


@needs_cc
def test_a_broken_detector_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the race detector's status bit zeroed the racy launch keeps its native result:
    no report, where the NumPy engine reports."""
    x = np.arange(256, dtype=np.float32)
    err, _ = _launch(k_tile_race, [x, np.zeros(256, np.float32), 3], engine="auto")
    assert err is not None
    broken = checks.HEADER.replace("#define CLPY_CK_RACE 16", "#define CLPY_CK_RACE 0")
    assert broken != checks.HEADER
    monkeypatch.setattr(checks, "HEADER", broken)
    from clpy_sim.native import checked_run

    monkeypatch.setattr(checked_run, "_CACHE", type(checked_run._CACHE)())
    err, why = _launch(k_tile_race, [x, np.zeros(256, np.float32), 3], engine="auto")
    assert err is None and why is None  # the broken detector misses the race


@needs_cc
def test_detection_restores_the_buffers() -> None:
    """A launch the detectors hand back runs on the NumPy engine from the original inputs:
    the arrays it leaves (up to its report) are the NumPy engine's."""
    fn = k_tile_race.specialize(x=Global[float32], y=Global[float32], shift=int32).function
    x = np.arange(256, dtype=np.float32)
    got = []
    for eng in ("numpy", "auto"):
        y = np.full(256, 7.0, np.float32)
        with clpy_sim.config(engine=eng), pytest.raises(clpy_sim.SimulationError) as info:
            clpy_sim.launch(fn, (256,), (16,), [x, y, 5])
        got.append((y.tobytes(), str(info.value)))
    assert got[0] == got[1]
    assert "races" in (runner.why_not(fn) or "")


@clpy.kernel
def k_handoff(flag: Global[int32], out: Global[int32]):
    lid = clpy.get_local_id(0)
    n = 0
    while flag[lid] == 0:  # set by the previous work-item's atomic, after its loop
        n += 0
    clpy.atomic_add(flag, lid + 1, 1)
    out[lid] = n


@needs_cc
def test_spin_on_atomics_runs_on_numpy() -> None:
    """Natively each work-item finds its flag set by the one before: the NumPy engine's
    lockstep run spins (no progress). Such a loop is not run natively."""
    got = []
    for eng in ("numpy", "auto"):
        flag = np.zeros(17, np.int32)
        flag[0] = 1
        with clpy_sim.config(engine=eng), pytest.raises(clpy_sim.SimulationError) as info:
            k_handoff[(16,), (16,)](flag, np.zeros(16, np.int32), device="sim")
        got.append(str(info.value))
    assert got[0] == got[1] and "no-progress" in got[0]
    assert "while loop that reads memory in a kernel with atomics" in (
        runner.why_not(k_handoff) or ""
    )


@clpy.kernel
def k_far_race(y: Global[float32], z: Global[float32]):
    gid = clpy.get_global_id(0)
    y[gid] = 1.0
    z[gid] = y[(gid + 128) % 256]  # written by a work-item of the other half's groups


@needs_cc
def test_race_across_threads_is_found() -> None:
    """Each thread's chunk of groups has its own shadows: a race between two chunks is found
    when they are compared (clpy_ck_cross)."""
    got = []
    for eng in ("numpy", "auto"):
        err, why = _launch(
            k_far_race,
            [np.zeros(256, np.float32), np.zeros(256, np.float32)],
            engine=eng,
            threads=2,
        )
        got.append(err)
    assert got[0] is not None and got[0] == got[1]
    assert "races" in (why or "")


@clpy.kernel
def k_own(x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    y[i] = x[i] * 2.0
    y[i] += 1.0


@needs_cc
def test_owned_buffers_need_no_shadow() -> None:
    """``y[i]`` with ``i`` the global id everywhere: no race shadow for y (owned.py); its
    indices stay checked with the bounds checker off, since an index out of bounds is element
    0, shared by every work-item (the NumPy engine then reports a race)."""
    from clpy_sim.native.cgen import Geometry
    from clpy_sim.native.checks import CheckSpec, generate_checked

    fn = k_own.specialize(x=Global[float32], y=Global[float32]).function
    spec = CheckSpec(frozenset({"races"}), ("y",))
    assert generate_checked(fn, Geometry(1, (16, 1, 1)), spec)[2] == ()
    assert generate_checked(fn, Geometry(2, (4, 4, 1)), spec)[2] == ("y",)  # (2-D: not gid)
    x = np.arange(256, dtype=np.float32)
    got = []
    for eng in ("numpy", "auto"):
        y = np.zeros(256, np.float32)
        got.append((_launch(k_own, [x, y], engine=eng, checks={"races"})[0], y.tobytes()))
        assert runner.why_not(k_own) is None or eng == "numpy"
        y = np.zeros(200, np.float32)
        got.append((_launch(k_own, [x, y], engine=eng, checks={"races"})[0], y.tobytes()))
    assert got[:2] == got[2:]
    assert got[0][0] is None and "data-race" in (got[1][0] or "")


@needs_cc
@pytest.mark.parametrize("cfg", [{"engine": "native"}, {"sample": 3}, {"checks": {"uninit"}}])
def test_settings_keep_the_numpy_reports(cfg: dict[str, Any]) -> None:
    """``engine="native"`` still gives the NumPy engine's report where a detector fires;
    ``sample`` (the native detectors watch every group) and a single checker as well."""
    x = np.arange(256, dtype=np.float32)
    got = []
    for eng in ("numpy", cfg.get("engine", "auto")):
        kw = {k: v for k, v in cfg.items() if k != "engine"}
        y = np.zeros(256, np.float32)
        got.append((_launch(k_tile_race, [x, y, 3], engine=eng, **kw)[0], y.tobytes()))
        y = np.zeros(256, np.float32)
        got.append((_launch(k_tile_race, [x, y, 0], engine=eng, **kw)[0], y.tobytes()))
    assert got[:2] == got[2:]
    assert got[1][0] is None


@clpy.kernel
def k_wrap(x: Global[float32], y: Global[float32], n: int32, tail: int32):
    t = clpy.local_array(float32, 16)
    lid = clpy.get_local_id(0)
    gid = clpy.get_global_id(0)
    t[lid] = x[gid]
    clpy.barrier()
    acc = 0.0
    for _k in range(n):
        acc += t[(lid + 1) % 16]  # the last trip's write, with no barrier between: a race
        clpy.barrier()
        t[lid] = acc
    if tail == 1:
        clpy.barrier()
    y[gid] = acc + t[(lid + 1) % 16]  # after the last write: a race unless tail == 1


@needs_cc
@pytest.mark.parametrize("n,tail", [(1, 0), (1, 1), (2, 1), (3, 0)])
def test_regions_sharing_an_interval(n: int, tail: int) -> None:
    """A region's reads skip the reader records only when nothing else runs in its barrier
    interval: here a loop's next trip (no barrier at the end of its body) and the code after
    it share intervals with the writes, and every race is reported as the NumPy engine does."""
    x = np.arange(256, dtype=np.float32)
    got = []
    for eng in ("numpy", "auto"):
        y = np.zeros(256, np.float32)
        got.append((_launch(k_wrap, [x, y, n, tail], engine=eng)[0], y.tobytes()))
    assert got[0] == got[1]
    assert (got[0][0] is None) == (n == 1 and tail == 1), got[0][0]
    assert got[0][0] is None or "data-race" in got[0][0]


@clpy.kernel
def k_break(x: Global[float32], y: Global[float32], n: int32):
    t = clpy.local_array(float32, 16)
    u = clpy.local_array(float32, 16)
    lid = clpy.get_local_id(0)
    gid = clpy.get_global_id(0)
    u[lid] = x[gid]
    t[lid] = x[gid]
    clpy.barrier()
    for k in range(4):
        t[lid] = u[(lid + 1) % 16]  # reads u: alone between barriers unless the break skips one
        if k == n:
            break
        clpy.barrier()
    u[lid] = 1.0  # after a break: the same interval as the read of u above, a race
    y[gid] = t[lid]


@needs_cc
@pytest.mark.parametrize("n", [1, 9])
def test_break_joins_intervals(n: int) -> None:
    x = np.arange(256, dtype=np.float32)
    got = []
    for eng in ("numpy", "auto"):
        y = np.zeros(256, np.float32)
        got.append((_launch(k_break, [x, y, n], engine=eng)[0], y.tobytes()))
    assert got[0] == got[1]
    assert (got[0][0] is not None) == (n == 1)


@clpy.kernel
def k_break_after_barrier(x: Global[float32], y: Global[float32], n: int32, shift: int32):
    t = clpy.local_array(float32, 16)
    u = clpy.local_array(float32, 16)
    lid = clpy.get_local_id(0)
    gid = clpy.get_global_id(0)
    u[lid] = x[gid]
    clpy.barrier()
    for k in range(4):
        t[lid] = u[(lid + 1) % 16] + 1.0  # alone between barriers
        clpy.barrier()
        if k == n:
            break  # at an interval's start
        u[lid] = t[(lid + 1) % 16]
        clpy.barrier()
    u[(lid + shift) % 16] = 2.0  # a race with the reads of u above when shift != 0
    y[gid] = t[lid] + u[lid]


@needs_cc
@pytest.mark.parametrize("n,shift", [(1, 0), (1, 1), (9, 0), (9, 3)])
def test_break_after_a_barrier(n: int, shift: int) -> None:
    x = np.arange(256, dtype=np.float32)
    got = []
    for eng in ("numpy", "auto"):
        y = np.zeros(256, np.float32)
        got.append((_launch(k_break_after_barrier, [x, y, n, shift], engine=eng)[0], y.tobytes()))
    assert got[0] == got[1]


@clpy.kernel
def k_half(x: Global[float32], y: Global[float32], part: int32):
    t = clpy.local_array(float32, 16)
    lid = clpy.get_local_id(0)
    gid = clpy.get_global_id(0)
    if lid < part:
        t[lid] = x[gid]
    clpy.barrier()
    y[gid] = t[(lid + 1) % 16]  # alone between barriers: uninitialised unless part == 16


@needs_cc
@pytest.mark.parametrize("part", [16, 15, 0])
def test_uninit_in_a_region_alone(part: int) -> None:
    x = np.arange(256, dtype=np.float32)
    got = []
    for eng in ("numpy", "auto"):
        y = np.zeros(256, np.float32)
        got.append((_launch(k_half, [x, y, part], engine=eng)[0], y.tobytes()))
    assert got[0] == got[1]
    assert (got[0][0] is None) == (part == 16)
