"""Oclgrind as an independent cross-check of the simulator's checkers.

Each seeded bug of tests/test_sim_bugs.py is emitted as OpenCL C and run on Oclgrind (a
second OpenCL implementation that checks bounds, races, barrier divergence and uninitialised
values; see tests/oclgrind_kernels.py for how it is driven). For every buggy kernel Oclgrind
must report a finding of the same kind as the simulator, at the same Python line (the emitted
code carries ``#line`` directives), and for its fixed twin neither reports anything and both
compute the same arrays.

Not cross-checked, because Oclgrind 21.10 has no checker for the class:
- ``div_zero``, ``mod_zero``: integer division by zero. Oclgrind runs both kernels without a
  report (the interpreter just produces a value).
- ``spin``: a loop without progress. Oclgrind has no progress check; the kernel would hang
  until the child process timed out.
- ``failing_assert``: clpy lowers ``assert`` to a ``printf`` on OpenCL devices; there is
  nothing for Oclgrind to check.

Oclgrind must be installed (``scripts/install_oclgrind.sh``); without it these tests skip,
or fail when ``CI=true``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import clpy
import tests.test_sim_bugs as B
from clpy_sim import SimulationError
from tests.oclgrind_kernels import (
    DIVERGENT_BARRIER_C,
    RETURN_BEFORE_BARRIER_C,
    Finding,
    list_platforms,
    parse_log,
    require_icd,
    run_on_oclgrind,
    uniform_ww,
    uniform_ww_fixed,
)
from tests.test_sim_util import TARGET, run_sim

GSIZE, LSIZE = (B.N,), (B.L,)


@dataclass(frozen=True)
class Case:
    buggy: Any
    fixed: Any
    kind: str  # the simulator's kind, and the kind Oclgrind must report
    space: str | None  # the memory Oclgrind names (None: not compared)
    make: Any
    c_source: str | None = None  # hand-written OpenCL C where clpy refuses to emit the bug


def _cases() -> list[Case]:
    by_name = {c[0].__name__: c for c in B.BUGS}

    def case(name: str, space: str | None, c_source: str | None = None) -> Case:
        buggy, fixed, kind, make, _ = by_name[name]
        return Case(buggy, fixed, kind, space, make, c_source)

    return [
        case("oob_read", "global"),
        case("oob_write", "global"),
        case("oob_local", "local"),
        case("oob_private", "private"),
        case("oob_in_func", "global"),
        case("oob_pointer_arith", "global"),
        case("local_ww_race", "local"),
        case("local_rw_race", "local"),
        case("global_race", "global"),
        case("group_race", "global"),
        case("tree_no_barrier", "local"),
        case("missing_first_barrier", "local"),
        case("divergent_barrier", None, DIVERGENT_BARRIER_C),
        case("return_before_barrier", None, RETURN_BEFORE_BARRIER_C),
        # Oclgrind reports the uninitialised value where it lands (a store to global memory);
        # the simulator reports the read of local memory. Same line either way.
        case("uninit_local", None),
    ]


CASES = _cases()


@pytest.fixture(scope="module")
def icd() -> str:
    return require_icd()


def _source(case: Case) -> str:
    if case.c_source is not None:
        return case.c_source.format(line=B.bug_line(case.buggy),
                                    file=os.path.abspath(B.__file__))
    return _emit(case.buggy)


def _emit(kernel: Any) -> str:
    # The simulator rounds every operation; keep Oclgrind's compiler from fusing into fma.
    return ("#pragma OPENCL FP_CONTRACT OFF\n"
            + kernel.specialize().source_for(TARGET))


def _bug_line(case: Case) -> int:
    return B.bug_line(B.load_at if case.buggy is B.oob_in_func else case.buggy)


def _matching(findings: tuple[Finding, ...], case: Case) -> list[Finding]:
    return [f for f in findings if f.kind == case.kind
            and (case.space is None or f.space == case.space)]


@pytest.mark.parametrize("case", CASES, ids=[c.buggy.__name__ for c in CASES])
def test_buggy_kernel_both_report(icd: str, case: Case) -> None:
    with pytest.raises(SimulationError) as info:
        run_sim(case.buggy.specialize().function, GSIZE, LSIZE, case.make())
    r = info.value.report
    assert r.kind == case.kind, str(r)

    og = run_on_oclgrind(icd, _source(case), case.buggy.__name__, GSIZE, LSIZE, case.make())
    hits = _matching(og.findings, case)
    assert hits, f"Oclgrind reported no {case.kind} ({case.space}):\n{og.log}"
    assert {f.kernel for f in hits} == {case.buggy.__name__}
    other = og.kinds() - {case.kind, "out-of-bounds", "uninitialized-read"}
    assert not other, f"unexpected Oclgrind findings {other}:\n{og.log}"
    # Same Python line: Oclgrind reads the emitted #line directives.
    lines = {ln for f in hits for ln in f.lines}
    assert r.loc.line == _bug_line(case) and r.loc.line in lines, og.log[:3000]
    assert any(p.endswith("test_sim_bugs.py") for f in hits for p in f.files)
    # Same work-items: the simulator's first report (for a race: the pair) is among
    # Oclgrind's, which reports every (work-item, address) it caught.
    if case.kind == "barrier-divergence":
        assert _xyz(r.group_id) in {g for f in hits for g in f.groups}
    elif case.kind == "data-race" and r.other_global_id is not None:
        pair = {_xyz(r.global_id), _xyz(r.other_global_id)}
        assert any(set(f.global_ids) == pair for f in hits), (str(r), og.log[:3000])
    else:
        assert _xyz(r.global_id) in {g for f in hits for g in f.global_ids}


def _xyz(ids: tuple[int, ...] | None) -> tuple[int, ...]:
    assert ids is not None
    return tuple(ids) + (0,) * (3 - len(ids))


@pytest.mark.parametrize("case", CASES, ids=[c.fixed.__name__ for c in CASES])
def test_fixed_twin_clean_on_both(icd: str, case: Case) -> None:
    args = case.make()
    want = run_sim(case.fixed.specialize().function, GSIZE, LSIZE, args, checks=True)
    og = run_on_oclgrind(icd, _emit(case.fixed), case.fixed.__name__, GSIZE, LSIZE, args)
    assert og.findings == (), og.log
    for got, exp in zip(og.outputs, want):
        if isinstance(exp, np.ndarray):
            np.testing.assert_allclose(got, exp, rtol=1e-6)


@pytest.mark.parametrize("kernel", [B.divergent_barrier, B.return_before_barrier])
def test_emitter_rejects_divergent_barrier(kernel: Any) -> None:
    # A third opinion on the same bug: clpy's static uniformity check (a warning: the host
    # could make such a condition uniform; the simulator and Oclgrind catch it at run time).
    fresh = clpy.kernel(kernel.py_function)
    with pytest.warns(clpy.UniformityWarning, match="varies with the work-item id"):
        fresh.specialize().source_for(TARGET)


def test_uniform_write_race_only_with_uniform_writes(icd: str) -> None:
    """Every work-item stores 1.0 to tmp[0]: a race by the spec (unordered writes), which the
    simulator reports and Oclgrind suppresses unless OCLGRIND_UNIFORM_WRITES is set."""
    args = [np.ones(B.N, np.float32), np.zeros(B.N, np.float32)]
    with pytest.raises(SimulationError) as info:
        run_sim(uniform_ww.specialize().function, GSIZE, LSIZE, args)
    assert info.value.report.kind == "data-race"
    assert info.value.report.loc.line == B.bug_line(uniform_ww)
    src = _emit(uniform_ww)
    assert run_on_oclgrind(icd, src, "uniform_ww", GSIZE, LSIZE, args).findings == ()
    og = run_on_oclgrind(icd, src, "uniform_ww", GSIZE, LSIZE, args,
                         env={"OCLGRIND_UNIFORM_WRITES": "1"})
    hits = [f for f in og.findings if f.kind == "data-race" and f.space == "local"]
    assert hits and B.bug_line(uniform_ww) in hits[0].lines
    fixed = run_on_oclgrind(icd, _emit(uniform_ww_fixed), "uniform_ww_fixed", GSIZE, LSIZE,
                            args, env={"OCLGRIND_UNIFORM_WRITES": "1"})
    assert fixed.findings == ()
    np.testing.assert_array_equal(fixed.outputs[1], args[0] + 1.0)


def test_pocl_still_found_beside_oclgrind(icd: str) -> None:
    both = list_platforms(icd, vendors_dir=True)
    assert "Oclgrind" in both and "Portable Computing Language" in both, both
    # What the rest of the suite sees (install_oclgrind.sh registers nothing system-wide).
    assert "Portable Computing Language" in list_platforms(icd, vendors_dir=False)


_SAMPLE = """
Oclgrind - OpenCL runtime error detected
\tFunction: clGetDeviceInfo
\tError:    CL_INVALID_VALUE
\tFor argument 'param_name'

Invalid read of size 4 at global memory address 0x2000000000200
\tKernel: oob_read
\tEntity: Global(127,0,0) Local(31,0,0) Group(3,0,0)
\t  %0 = load float, float addrspace(1)* %arrayidx, align 4, !dbg !33, !tbaa !34
\tAt line 35 (column 12) of /w/tests/test_sim_bugs.py:
\t  (source not available)

Read-write data race at local memory address 0x1000000000004
\tKernel: tree
\tFirst entity:  Global(1,0,0) Local(1,0,0) Group(0,0,0)
\tAt line 188 (column 22) of k.py:
\tSecond entity: Global(0,0,0) Local(0,0,0) Group(0,0,0)
\tAt line 188 (column 25) of k.py:

Work-group divergence detected (barrier)
\tKernel:     divergent_barrier
\tWork-group: (2,0,0)
\tOnly 16 out of 32 work-items executed barrier
\tAt line 6 (column 9) of input.cl:
"""


def test_parse_log() -> None:
    fs = parse_log(_SAMPLE)  # the pyopencl device-info probe is dropped
    assert [(f.kind, f.space, f.kernel) for f in fs] == [
        ("out-of-bounds", "global", "oob_read"), ("data-race", "local", "tree"),
        ("barrier-divergence", None, "divergent_barrier")]
    assert fs[0].lines == (35,) and fs[0].files == ("/w/tests/test_sim_bugs.py",)
    assert fs[0].global_ids == ((127, 0, 0),) and fs[0].groups == ((3, 0, 0),)
    assert fs[1].global_ids == ((1, 0, 0), (0, 0, 0)) and fs[1].lines == (188, 188)
    assert fs[2].groups == ((2, 0, 0),) and fs[2].files == ("input.cl",)
