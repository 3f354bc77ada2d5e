"""The real-program suite (benchmarks/programs) at its "small" size: every program's clpy port
on the simulator with every checker on and on the OpenCL test device (PoCL) with NumPy
arguments, and its hand-written original kernels through their pyopencl host, all against
the program's NumPy reference."""

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


def _case(name: str) -> tuple[Any, Any, Any]:
    m = load(name)
    if name not in _CACHE:
        inp = m.make_inputs("small", 0)
        _CACHE[name] = (inp, m.numpy_reference(inp))
    inp, ref = _CACHE[name]
    return m, inp, ref


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_on_simulator_with_checks(name: str) -> None:
    m, inp, ref = _case(name)
    with clpy.sim.config(checks=True):
        out = m.run_clpy(inp, "sim", resident=True)
    check(name, "sim", out, ref, m.TOL)


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_on_opencl(name: str, cl_device: Any) -> None:
    m, inp, ref = _case(name)
    check(name, "OpenCL, NumPy arguments", m.run_clpy(inp, cl_device, resident=False), ref,
          m.TOL)


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
