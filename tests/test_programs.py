"""The real-program suite (benchmarks/programs) at its "small" size: every program's clpy port
on the simulator with every checker on and on the OpenCL test device (PoCL) with NumPy
arguments, and its hand-written original kernels through their pyopencl host, all against
the program's NumPy reference. The simulator and the device agree bit for bit (these programs
use only operations whose results the spec pins: README "Floats give the same bits
everywhere")."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import clpy  # noqa: E402
from benchmarks.programs import PROGRAMS, load  # noqa: E402
from benchmarks.programs.common import Mismatch, check  # noqa: E402

_CACHE: dict[str, tuple[Any, Any]] = {}
_SIM: dict[str, Any] = {}


def _case(name: str) -> tuple[Any, Any, Any]:
    m = load(name)
    if name not in _CACHE:
        inp = m.make_inputs("small", 0)
        _CACHE[name] = (inp, m.numpy_reference(inp))
    inp, ref = _CACHE[name]
    return m, inp, ref


def _sim(name: str) -> Any:
    if name not in _SIM:
        m, inp, _ = _case(name)
        with clpy.sim.config(checks=True):
            _SIM[name] = m.run_clpy(inp, "sim", resident=True)
    return _SIM[name]


def _bits(out: Any) -> list[bytes]:
    return [np.asarray(a).tobytes() for a in (out if isinstance(out, tuple) else (out,))]


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_on_simulator_with_checks(name: str) -> None:
    m, inp, ref = _case(name)
    check(name, "sim", _sim(name), ref, m.TOL)


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_on_opencl(name: str, cl_device: Any) -> None:
    m, inp, ref = _case(name)
    out = m.run_clpy(inp, cl_device, resident=False)
    check(name, "OpenCL, NumPy arguments", out, ref, m.TOL)
    if getattr(m, "BITWISE", True):
        assert _bits(out) == _bits(_sim(name)), f"{name}: the device and the simulator differ"


@pytest.mark.parametrize("name", PROGRAMS)
def test_original_kernels_on_opencl(name: str, cl_context: Any, cl_queue: Any) -> None:
    m, inp, ref = _case(name)
    out = m.run_original(inp, cl_context, cl_queue)
    cl_queue.finish()
    check(name, "original", out, ref, m.TOL)


def test_programs_describe_themselves() -> None:
    assert len(PROGRAMS) >= 10
    for name in PROGRAMS:
        m = load(name)
        assert m.NAME == name and m.ORIGIN and m.KIND
        assert set(m.SIZES) >= {"small", "bench", "gpu"}
        assert (Path(m.__file__).parent / "cl" / m.CL_FILE).is_file()


def test_check_reports_a_mismatch() -> None:
    with pytest.raises(Mismatch, match=r"hotspot \[x\] output 0: 1 of 4 elements differ"):
        check("hotspot", "x", np.array([1.0, 2, 3, 4]), np.array([1.0, 2, 3, 5]), {})


# A barrier taken out of a real program: the simulator's race checker must name the array.
_BARRIER = "clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)"
_SEEDED = [
    ("backprop", f"WIDTH + tx]\n        {_BARRIER}\n        power_two",
     "WIDTH + tx]\n        power_two", "wm"),
    ("nw", "            )\n        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)\n    # lower-right",
     "            )\n    # lower-right", "score"),
    ("lud", "offset + tx]\n    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)\n    s = float32(0.0)",
     "offset + tx]\n    s = float32(0.0)", "peri_col"),
    ("hotspot", "temp_t[ty][tx]\n        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)\n    if computed",
     "temp_t[ty][tx]\n    if computed", "temp_on"),
]


@pytest.mark.parametrize("name, good, bad, array", _SEEDED, ids=[s[0] for s in _SEEDED])
def test_missing_barrier_in_a_program_is_reported(
    name: str, good: str, bad: str, array: str, tmp_path: Path
) -> None:
    import importlib.util

    src = Path(load(name).__file__).read_text()
    assert src.count(good) == 1, f"{name}: the seeded-bug anchor moved"
    path = tmp_path / f"seeded_{name}.py"
    path.write_text(src.replace(good, bad))
    spec = importlib.util.spec_from_file_location(f"seeded_{name}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with clpy.sim.config(checks=True), pytest.raises(clpy.sim.SimulationError) as err:
        mod.run_clpy(mod.make_inputs("small", 0), "sim", resident=True)
    assert err.value.report.kind == "data-race"
    assert f"`{array}`" in str(err.value)


def test_check_refuses_a_reference_that_blew_up() -> None:
    with pytest.raises(Mismatch, match="reference itself has 1 non-finite"):
        check("hotspot", "x", np.array([np.nan, 1.0]), np.array([np.nan, 1.0]), {})


def test_kernel_diag_builds_run(cl_context: Any) -> None:
    """benchmarks/programs/kernel_diag.py: the host-buffer and L2-flush builds run and pass
    the program's check (one round, small size), with the buffers' addresses recorded; the
    hosts are restored afterwards."""
    import pyopencl as cl

    from benchmarks.programs import common, kdiag_hosts, kernel_diag

    dev = cl_context.devices[0]
    queue = cl.CommandQueue(
        cl_context, dev, properties=cl.command_queue_properties.PROFILING_ENABLE
    )
    saved = (common.Host.put, common.Host.__call__, common.OrigHost.buf)
    undo = [kdiag_hosts.record_names(), kdiag_hosts.patch_buffers()]
    try:
        res = kernel_diag.diagnose(
            load("pathfinder"), cl_context, queue, 1, "small",
            ["orig_clpyhost_*", "clpy_pageable", "orig_staged", "orig_zerofill", "*flush"],
            shuffle=True,
        )
    finally:
        for u in reversed(undo):
            u()
    assert (common.Host.put, common.Host.__call__, common.OrigHost.buf) == saved
    builds = [k for k, v in res.items() if isinstance(v, dict) and "kernels" in v]
    assert {"orig", "orig_b", "orig_clpyhost_fresh", "orig_clpyhost_pooled",
            "orig_staged", "clpy_flush", "orig_clpyhost_pageable_flush"} <= set(builds)
    assert not [k for k, v in res.items() if isinstance(v, dict) and "error" in v]
    addrs = res["orig_clpyhost_pageable"]["addresses"][0]["dynproc_kernel"]
    assert len(addrs) == 3 and len(set(addrs)) == 3  # wall, src, results
    assert res["rounds_done"] == 1


@pytest.mark.parametrize("name", PROGRAMS)
def test_clpy_kernels_fit_the_original_hosts(name: str, cl_context: Any, cl_queue: Any) -> None:
    """benchmarks/programs/kdiag_sources.py ORIG_SIGNATURE: every kernel of every program has
    a mapping of clpy's parameters onto the original's (the GPU table's "in original host"
    column), and the original host runs clpy's emitted kernels put into its .cl (small size,
    the result checked)."""
    import re

    import pyopencl as cl

    from benchmarks.programs import common, kdiag_sources

    m = load(name)
    table = kdiag_sources.ORIG_SIGNATURE[name]
    src = kdiag_sources.orig_signature(m, {})
    assert src is not None
    for cname, (oname, _) in table.items():
        assert re.search(rf"void {oname}_handwritten\(", src), (cname, oname)
        assert len(re.findall(rf"__kernel void {oname}\(", src)) == 1, (cname, oname)
    emitted = {k.function_name for k in cl.Program(cl_context, src).build().all_kernels()}
    assert {o for o, _ in table.values()} <= emitted
    inp = m.make_inputs("small", 0)
    with common.original_programs(common.source_instead(src)):
        out = m.run_original(inp, cl_context, cl_queue, None)
        cl_queue.finish()
    check(name, "clpy kernels, original host", out, m.numpy_reference(inp), m.TOL)
