"""``clpy emit --header``: the generated C header compiles as C11 and C++17 with warnings as
errors, its structs have OpenCL's layout (checked against ``Particle.dtype`` by a compiled C
program), its static assertions catch a wrong layout, and every emitted ``.cl`` builds on
PoCL with the header's build options."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from clpy.cli import main
from clpy.cli.load import load_module
from clpy.header import c_string

ROOT = Path(__file__).resolve().parent.parent
PARTICLES = ROOT / "tests" / "cli_kernels" / "particles.py"
CC = shutil.which("cc") or shutil.which("gcc")
CXX = shutil.which("c++") or shutil.which("g++")
needs_cc = pytest.mark.skipif(
    (CC is None or CXX is None) and os.environ.get("CI", "").lower() != "true",
    reason="no C/C++ compiler",
)


def _emit(out: Path, *extra: str) -> tuple[str, str]:
    assert main(["emit", str(PARTICLES), "-o", str(out), "--header", *extra]) == 0
    return (out / "particles.cl").read_text(), (out / "particles.h").read_text()


def _compile_run(src: str, folder: Path, cxx: bool) -> str:
    name = "probe.cpp" if cxx else "probe.c"
    (folder / name).write_text(src)
    exe = folder / ("probe_cxx" if cxx else "probe_c")
    cmd = [CXX, "-std=c++17"] if cxx else [CC, "-std=c11", "-pedantic"]
    res = subprocess.run(
        [*cmd, "-Wall", "-Wextra", "-Werror", f"-I{folder}", str(folder / name), "-o", str(exe)],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr
    return subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout


def _probe(structs: dict[str, list[str]]) -> str:
    lines = ['#include "particles.h"', "#include <stdio.h>", "int main(void) {"]
    for name, fields in structs.items():
        lines.append(
            f'    printf("{name} size %zu align %zu\\n", sizeof({name}), '
            f"(size_t)CLPY_ALIGNOF({name}));"
        )
        for f in fields:
            lines.append(f'    printf("{name}.{f} %zu\\n", offsetof({name}, {f}));')
    lines += [
        '    printf("source %zu\\n", sizeof particles_cl_source - 1);',
        '    printf("args %d %d %d\\n", ADVANCE_ARG_P, ADVANCE_ARG_DT, ADVANCE_NUM_ARGS);',
        '    printf("options %s\\n", PARTICLES_BUILD_OPTIONS);',
        "    return 0;",
        "}",
    ]
    return "\n".join(lines) + "\n"


@needs_cc
@pytest.mark.parametrize("cxx", [False, True], ids=["c11", "c++17"])
def test_header_layout_matches_dtype(tmp_path: Path, cxx: bool) -> None:
    source, header = _emit(tmp_path, "--embed")
    mod = load_module(str(PARTICLES))
    particle = mod.module.Particle
    cell = mod.module.Cell
    structs = {st.name: [n for n, _ in st.fields] for st in (particle, cell)}
    out = _compile_run(_probe(structs), tmp_path, cxx)
    got = dict(line.rsplit(" ", 1) for line in out.splitlines() if " size " not in line)
    for st in (particle, cell):
        dt = st.dtype
        m = re.search(rf"^{st.name} size (\d+) align (\d+)$", out, re.M)
        assert m is not None, out
        assert int(m.group(1)) == dt.itemsize == st.size
        assert int(m.group(2)) == st.align
        for fname in dt.names:
            assert int(got[f"{st.name}.{fname}"]) == dt.fields[fname][1], fname
    # the embedded program is byte for byte the .cl file
    assert int(got["source"]) == len(source.encode())
    assert "args 0 1 3" in out
    assert "options -cl-std=CL2.0" in out
    assert header.count("#include") == 2  # stddef.h and stdint.h only


@needs_cc
def test_static_asserts_catch_a_wrong_layout(tmp_path: Path) -> None:
    _, header = _emit(tmp_path)
    bad = header.replace("offsetof(Particle, energy) == 48", "offsetof(Particle, energy) == 44")
    assert bad != header
    (tmp_path / "particles.h").write_text(bad)
    (tmp_path / "probe.c").write_text('#include "particles.h"\nint main(void) { return 0; }\n')
    res = subprocess.run(
        [CC, "-std=c11", "-Wall", "-Werror", f"-I{tmp_path}", str(tmp_path / "probe.c")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert res.returncode != 0
    assert "Particle must have the OpenCL layout" in res.stderr


def test_header_describes_parameters(tmp_path: Path) -> None:
    _, header = _emit(tmp_path)
    block = header[header.index("/* kernel block_sum") :]
    block = block[: block.index("*/")]
    assert re.search(r"0\s+x\s+__global const float\* x\s+__global\s+read only", block)
    assert re.search(r"1\s+out\s+__global float\* out\s+__global\s+written", block)
    assert re.search(r"2\s+scratch\s+__local float\* scratch\s+__local\s+scratch", block)
    assert "count * sizeof(cl_float)" in block
    assert re.search(r"3\s+n\s+int n\s+value\s+by value", block)
    assert "#define BLOCK_SUM_ARG_SCRATCH 2" in header
    assert "#define ADVANCE_ARG_DT 1" in header
    assert '#define PARTICLES_EXTENSIONS "cl_khr_fp64"' in header  # Particle.energy: double
    assert "#ifndef CLPY_PARTICLES_H" in header and header.rstrip().endswith("*/")


def test_header_build_options_follow_target(tmp_path: Path) -> None:
    _, header = _emit(tmp_path, "--target", "opencl-c-1.2")
    assert '#define PARTICLES_BUILD_OPTIONS "-cl-std=CL1.2"' in header


def test_c_string_escapes() -> None:
    lines = c_string('a "q" \\ ??= é\n\tb')
    assert lines == ['    "a \\"q\\" \\\\ \\?\\?= \\303\\251\\n"', '    "\\tb"']


@pytest.mark.parametrize("target", ["opencl-c-1.2", "opencl-c-2.0", "opencl-c-3.0", "device"])
def test_emitted_program_builds_on_pocl(tmp_path: Path, cl_device: object, target: str) -> None:
    import pyopencl as cl

    import clpy

    if target == "device":
        dev = next(d for d in clpy.devices() if getattr(d, "cl_device", None) == cl_device)
        extra = ["--device", dev.name]
    else:
        extra = ["--target", target]
    source, header = _emit(tmp_path, *extra)
    options = re.search(r'_BUILD_OPTIONS "([^"]*)"', header)
    assert options is not None
    ctx = cl.Context([cl_device])
    prg = cl.Program(ctx, source).build(options.group(1))
    names = sorted(k.function_name for k in prg.all_kernels())
    assert names == ["advance", "block_sum", "cell_mass"]


def test_generic_kernel_with_sig_builds_on_pocl(tmp_path: Path, cl_device: object) -> None:
    import pyopencl as cl

    argv = ["emit", str(PARTICLES), "-k", "scale", "--sig", "x=Global[float64], a=float64"]
    assert main([*argv, "-o", str(tmp_path), "--header"]) == 0
    source = (tmp_path / "particles.cl").read_text()
    assert "__kernel void scale(__global double* x, double a)" in source
    prg = cl.Program(cl.Context([cl_device]), source).build("-cl-std=CL2.0")
    assert [k.function_name for k in prg.all_kernels()] == ["scale"]
    header = (tmp_path / "particles.h").read_text()
    assert "#define SCALE_ARG_A 1" in header and "Particle" not in header


def test_python_dash_m_runs(tmp_path: Path) -> None:
    res = subprocess.run(
        [sys.executable, "-m", "clpy", "emit", str(PARTICLES), "-o", str(tmp_path), "--header"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert res.returncode == 0, res.stderr
    assert "skipping kernel scale" in res.stderr
    text = (tmp_path / "particles.cl").read_text()
    assert '#line 33 "tests/cli_kernels/particles.py"' in text
