"""``python -m build`` makes an sdist and a wheel (the wheel built from the sdist, so the
sdist is complete) that install into a fresh virtual environment and pass a smoke test:
the ``clpy`` console script, a kernel on the simulator, the editor stubs.

No network: the build runs without isolation (setuptools, wheel and build come with the test
extra), the wheel is installed with ``--no-index --no-deps``, and the new environment sees
the test environment's dependencies (numpy, pyopencl) through a path file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

import clpy

ROOT = Path(__file__).resolve().parent.parent
# The simulator's folder sim/ is installed as `clpy_sim` (pyproject.toml package-dir): every
# top-level name in the wheel is clpy's.
TOP_LEVEL = {"clpy", "clpy_sim"}

SMOKE = '''\
import numpy as np

import clpy
from clpy import Global, float32


@clpy.kernel
def saxpy(a: float32, x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    y[i] = a * x[i] + y[i]


x = np.arange(64, dtype=np.float32)
y = np.ones(64, dtype=np.float32)
saxpy[(64,), (16,)](2.0, x, y, device="sim")
assert np.array_equal(y, 2 * np.arange(64, dtype=np.float32) + 1), y
print("smoke ok", clpy.__version__, clpy.__file__)
'''


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if os.environ.get("CI", "").lower() != "true":
        pytest.importorskip("build")
        pytest.importorskip("wheel")
    work = tmp_path_factory.mktemp("pkg")
    src = work / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for pkg in ("clpy", "sim"):
        shutil.copytree(ROOT / pkg, src / pkg, ignore=ignore)
    res = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(work / "dist"), str(src)],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return work


def test_sdist_and_wheel(built: Path) -> None:
    dist = built / "dist"
    version = clpy.__version__
    assert (dist / f"clpy_kernels-{version}.tar.gz").exists() or (
        dist / f"clpy-kernels-{version}.tar.gz"
    ).exists(), sorted(p.name for p in dist.iterdir())
    (wheel,) = dist.glob("*.whl")
    assert wheel.name.startswith(f"clpy_kernels-{version}-py3-none-any")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.startswith("clpy_kernels-")}
    assert tops == TOP_LEVEL, tops
    # every package of the source tree is in the wheel (pyproject.toml lists them by name)
    want = {
        f"{top}/{p.relative_to(ROOT / folder).as_posix()}"
        for folder, top in (("clpy", "clpy"), ("sim", "clpy_sim"))
        for p in (ROOT / folder).rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert want <= set(names), sorted(want - set(names))
    assert "clpy/py.typed" in names and "clpy/__init__.pyi" in names
    assert "clpy/cli/main.py" in names
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(meta).decode()
    assert "Name: clpy-kernels" in text and f"Version: {version}" in text
    assert "License-Expression: MIT" in text
    assert any(n.endswith(".dist-info/LICENSE") or "licenses/LICENSE" in n for n in names)
    entry = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "clpy = clpy.cli:main" in zipfile.ZipFile(wheel).read(entry).decode()


def test_wheel_installs_into_fresh_venv(built: Path) -> None:
    venv = built / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # the test environment's packages (numpy, pyopencl), after the venv's own: its
    # editable clpy is not on this path (path files there are not processed)
    (Path(site) / "test_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    (wheel,) = (built / "dist").glob("*.whl")
    res = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(py), "install", "--no-index", "--no-deps",
         str(wheel)],
        capture_output=True,
        text=True,
    )
    if res.returncode != 0 and "no such option: --python" in res.stderr:  # pip < 22.3
        pytest.fail(res.stderr)
    assert res.returncode == 0, res.stderr
    run_dir = built / "run"
    run_dir.mkdir()
    (run_dir / "smoke.py").write_text(SMOKE)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CLPY_DEVICE")}
    out = subprocess.run(
        [str(py), "smoke.py"], capture_output=True, text=True, cwd=run_dir, env=env
    )
    assert out.returncode == 0, out.stderr
    assert f"smoke ok {clpy.__version__} {site}" in out.stdout
    script = venv / ("Scripts/clpy.exe" if os.name == "nt" else "bin/clpy")
    ver = subprocess.run([str(script), "--version"], capture_output=True, text=True, env=env)
    assert ver.stdout.strip() == f"clpy {clpy.__version__}", ver.stderr
    emit = subprocess.run(
        [str(script), "emit", "smoke.py", "--header", "-o", "out"],
        capture_output=True,
        text=True,
        cwd=run_dir,
        env=env,
    )
    assert emit.returncode == 0, emit.stderr
    assert '#line 9 "smoke.py"' in (run_dir / "out" / "smoke.cl").read_text()
    assert "#define SAXPY_ARG_Y 2" in (run_dir / "out" / "smoke.h").read_text()
    stub = Path(site) / "clpy" / "__init__.pyi"
    assert stub.exists() and (Path(site) / "clpy" / "py.typed").exists()


