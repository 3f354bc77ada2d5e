"""The ``clpy`` command line: emit, check, devices, builtins (run in-process through
``clpy.cli.main``; ``python -m clpy`` is exercised in tests/test_header.py)."""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path

import pytest

from clpy.builtins.registry import REGISTRY
from clpy.cli import main

ROOT = Path(__file__).resolve().parent.parent
PARTICLES = ROOT / "tests" / "cli_kernels" / "particles.py"

BAD = """\
import clpy
from clpy import Global, float32, int32


@clpy.kernel
def ok(x: Global[float32]):
    x[clpy.get_global_id(0)] = 1.0


@clpy.kernel
def broken(x: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    x[i] = undefined_name + 1.0


@clpy.func
def bad_func(a: float32) -> float32:
    return a.xyz


@clpy.kernel
def needs_half(x: Global[float32]):
    x[0] = float32(clpy.half(x[1]) * clpy.half(2.0))
"""


@pytest.mark.parametrize("command", [[], ["emit"], ["check"], ["devices"], ["builtins"]])
def test_help_on_every_command(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main([*command, "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: clpy")


def test_emit_line_directives_are_relative(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["emit", str(PARTICLES), "-o", str(tmp_path), "-k", "advance"]) == 0
    text = (tmp_path / "particles.cl").read_text()
    names = set(re.findall(r'^#line \d+ "([^"]*)"$', text, re.M))
    assert names == {"tests/cli_kernels/particles.py"}
    assert str(ROOT) not in text
    assert "__kernel void advance(" in text and "block_sum" not in text
    assert "float3 kick(float3 v, float dt)" in text  # the device function it calls
    assert "} Particle;" in text and "} Cell;" not in text
    assert not (tmp_path / "particles.h").exists()
    # from another directory the names are relative to it
    monkeypatch.chdir(tmp_path)
    assert main(["emit", str(PARTICLES), "-o", "out", "-k", "advance"]) == 0
    text = (tmp_path / "out" / "particles.cl").read_text()
    (name,) = set(re.findall(r'^#line \d+ "([^"]*)"$', text, re.M))
    assert not os.path.isabs(name) and Path(tmp_path, name).resolve() == PARTICLES


def test_emit_no_line_and_order_of_kernels(tmp_path: Path) -> None:
    argv = ["emit", str(PARTICLES), "-o", str(tmp_path), "--no-line"]
    assert main([*argv, "-k", "cell_mass", "-k", "advance"]) == 0
    text = (tmp_path / "particles.cl").read_text()
    assert "#line" not in text
    assert text.index("void cell_mass(") < text.index("void advance(")
    assert text.index("} Particle;") < text.index("} Cell;")


def test_emit_generic_kernel_is_skipped_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["emit", str(PARTICLES), "-o", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "skipping kernel scale" in err and "--sig" in err
    assert "scale" not in (tmp_path / "particles.cl").read_text()
    # with several kernels, --sig names its kernel
    argv = ["emit", str(PARTICLES), "-o", str(tmp_path), "-k", "advance", "-k", "scale"]
    assert main([*argv, "--sig", "scale: x=Global[int32], a=int32"]) == 0
    assert "void scale(__global int* x, int a)" in (tmp_path / "particles.cl").read_text()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["-k", "nope"], "no kernel named 'nope' (kernels: advance, block_sum, cell_mass, scale)"),
        (["--target", "opencl-c-9"], "--target: unknown target 'opencl-c-9'"),
        (["-k", "scale", "--sig", "x=Global[nothing]"], "x=Global[nothing]: name 'nothing'"),
        (["-k", "scale", "--sig", "y=int32"], "no parameter named 'y'"),
        (["-k", "scale"], "kernel scale has unannotated or constexpr parameters (x, a)"),
        (["--device", "opencl:no-such-platform"], "--device 'opencl:no-such-platform'"),
    ],
)
def test_emit_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(["emit", str(PARTICLES), "-o", str(tmp_path), *argv]) == 2
    err = capsys.readouterr().err
    assert "clpy emit: error: " in err and message in err, err


def test_emit_compile_error_is_located_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bad_kernels.py").write_text(BAD)
    monkeypatch.chdir(tmp_path)
    assert main(["emit", "bad_kernels.py", "-k", "broken"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("bad_kernels.py:13:12: error: ") and "undefined_name" in err[0]
    assert err[1] == "        x[i] = undefined_name + 1.0"
    assert not (tmp_path / "bad_kernels.cl").exists()


ENQUEUE = """\
import clpy
from clpy import Global, int32


@clpy.func
def bump(x: Global[int32], i: int32):
    x[i] += 1


@clpy.kernel
def mark(out: Global[int32], i: int32):
    bump(out, i)


@clpy.kernel
def parent(out: Global[int32]):
    q = clpy.get_default_queue()
    clpy.enqueue_kernel(q, clpy.CLK_ENQUEUE_FLAGS_NO_WAIT, clpy.ndrange_1D(1), mark, out, 3)
    bump(out, 0)
"""


def test_emit_enqueued_child_kernel_once(tmp_path: Path) -> None:
    """A kernel emitted on its own and enqueued by another is one C function (each kernel's
    compile builds its own IR for it), and so is a device function both call."""
    (tmp_path / "enq.py").write_text(ENQUEUE)
    assert main(["emit", str(tmp_path / "enq.py"), "-o", str(tmp_path), "--no-line"]) == 0
    text = (tmp_path / "enq.cl").read_text()
    assert text.count("__kernel void mark(__global int* out, int i) {") == 1
    assert text.count("void bump(") == 1
    assert "mark_" not in text and "bump_" not in text
    assert "^{mark(out, 3);}" in text


def test_emit_missing_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["emit", "no/such/file.py"]) == 2
    assert "no/such/file.py: no such file" in capsys.readouterr().err


def test_check_ok(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(PARTICLES)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "ok: 4 kernel(s) and function(s) for opencl-c-2.0" in captured.err


def test_check_reports_each_error_with_caret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bad_kernels.py").write_text(BAD)
    monkeypatch.chdir(tmp_path)
    assert main(["check", "bad_kernels.py", "--target", "opencl-c-1.2"]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    # the undefined name: file:line:col, the line, a caret under the name
    i = lines.index(next(s for s in lines if s.startswith("bad_kernels.py:13:12: error:")))
    assert "undefined_name" in lines[i]
    assert lines[i + 1] == "        x[i] = undefined_name + 1.0"
    assert lines[i + 2] == "    " + " " * 11 + "^" * len("undefined_name")
    assert re.search(r"^bad_kernels.py:18:\d+: error: .*xyz", out, re.M)
    # half arithmetic is missing from the 1.2 profile
    assert re.search(r"^bad_kernels.py:23:\d+: error: target opencl-c-1.2 lacks half", out, re.M)
    assert "ok(" not in out
    # the same file with the 2.0 profile: two errors left
    assert main(["check", "bad_kernels.py", "-q"]) == 1
    assert len(re.findall(r": error: ", capsys.readouterr().out)) == 2


def test_check_import_failure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "broken_import.py"
    bad.write_text("import clpy\n\nx = 1 / 0\n")
    assert main(["check", str(bad), str(PARTICLES)]) == 1
    out = capsys.readouterr().out
    assert re.search(r"broken_import.py:3: error: ZeroDivisionError", out)


def test_check_builds_on_device(
    tmp_path: Path, cl_device: object, capsys: pytest.CaptureFixture[str]
) -> None:
    import clpy

    dev = next(d for d in clpy.devices() if getattr(d, "cl_device", None) == cl_device)
    assert main(["check", str(PARTICLES), "--device", dev.name]) == 0
    assert f"for {dev.name}" in capsys.readouterr().err


def test_devices(capsys: pytest.CaptureFixture[str], cl_device: object) -> None:
    assert main(["devices"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("sim\n")
    pattern = r"^opencl:.*\n    .*\n    target: OpenCL C \d\.\d \(-cl-std=CL\d\.\d\)$"
    assert re.search(pattern, out, re.M)
    assert "limits: work-group size" in out and "extensions: " in out


def test_builtins(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["builtins", "atomic_fetch_add*"]) == 0
    out = capsys.readouterr().out
    names = re.findall(r"^(\w+)  \[", out, re.M)
    assert names == sorted(n for n in REGISTRY if n.startswith("atomic_fetch_add"))
    assert "atomic_fetch_add_explicit" in names
    assert REGISTRY["atomic_fetch_add"].doc.splitlines()[0] in out
    assert main(["builtins"]) == 0
    assert f"({len(REGISTRY)} built-in(s))" in capsys.readouterr().out
    assert main(["builtins", "sqrt"]) == 0
    out = capsys.readouterr().out
    assert "sqrt(float) -> float" in out.replace("  ", " ") or "sqrt(" in out
    assert main(["builtins", "no_such_thing_*"]) == 1


BAD_FIRST_LINE = textwrap.dedent(BAD).splitlines()[0]
