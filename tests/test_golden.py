"""Golden tests: the emitter's OpenCL C for one kernel per language feature, compared exactly
with tests/golden/<name>.cl, and every golden source built by a real OpenCL compiler (PoCL).

``pytest tests/test_golden.py --update-golden`` rewrites the files from the current emitter;
review the diff like code.

PoCL here is an OpenCL C 1.2 device that accepts ``-cl-std=CL1.2``, ``CL2.0`` and ``CL3.0``.
It lacks ``cl_khr_fp16`` and the generic address space, so cases that need those only check
their text unless the device has them (``Case.needs``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from golden_kernels import Case, collect  # noqa: E402

GOLDEN_DIR = Path(__file__).parent / "golden"
REPO_ROOT = Path(__file__).resolve().parent.parent
CASES = collect()
STD_FLAGS = {"opencl-c-1.2": "-cl-std=CL1.2", "opencl-c-2.0": "-cl-std=CL2.0",
             "opencl-c-3.0": "-cl-std=CL3.0"}


def emit(c: Case) -> str:
    """The case's source, with absolute paths in ``#line`` made relative to the repository."""
    obj = c.make()
    text: str = obj.source_for(c.target, line_directives=c.line_directives)
    root = re.escape(str(REPO_ROOT) + "/")
    return re.sub(rf'(#line \d+ ")({root})', r"\1", text)


def std_flag(target: str) -> str:
    base = target.split("+", 1)[0]
    return STD_FLAGS[base]


def device_has(device: Any, need: str) -> bool:
    if need.startswith("cl_"):
        return need in device.extensions.split()
    if need == "generic":
        try:
            feats = [f.name for f in device.opencl_c_features]
        except Exception:
            feats = []
        return "__opencl_c_generic_address_space" in feats
    if need == "pipes":
        return bool(getattr(device, "pipe_support", False))
    raise ValueError(need)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden_source(case: Case, request: pytest.FixtureRequest) -> None:
    path = GOLDEN_DIR / f"{case.name}.cl"
    text = emit(case)
    if request.config.getoption("--update-golden"):
        path.write_text(text)
        return
    assert path.exists(), f"{path} is missing: run pytest --update-golden and review it"
    expected = path.read_text()
    assert text == expected, f"{case.name}: emitted source differs from {path.name}"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden_builds_on_device(case: Case, cl_context: Any) -> None:
    import pyopencl as cl

    device = cl_context.devices[0]
    missing = [n for n in case.needs if not device_has(device, n)]
    if missing:
        pytest.skip(f"{device.name} lacks {', '.join(missing)}")
    # The golden text, and what users get by default (with #line directives) if different.
    texts = [emit(case)]
    if not case.line_directives:
        texts.append(case.make().source_for(case.target))
    for text in texts:
        prg = cl.Program(cl_context, text)
        try:
            prg.build(options=[std_flag(case.target)])
        except cl.RuntimeError as e:  # pragma: no cover - the failure message is the point
            pytest.fail(f"{case.name} ({case.target}) does not build:\n{e}\n--- source ---\n"
                        f"{text}")


def test_golden_files_have_cases() -> None:
    """No stale golden file without a case (renamed or deleted kernels)."""
    names = {c.name for c in CASES}
    stale = sorted(p.stem for p in GOLDEN_DIR.glob("*.cl") if p.stem not in names)
    assert not stale, f"golden files without a case: {stale}"
