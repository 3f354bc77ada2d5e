"""Threads and processes: one kernel launched from 8 threads at once (simulator and PoCL), the
compile caches under concurrent threads, the on-disk cache (CLPY_CACHE_DIR) under concurrent
processes, and corrupted or truncated cache entries detected and rebuilt, never loaded."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, float32, int32
from clpy.runtime import diskcache
from clpy.runtime.devices import RUNTIME

THREADS = 8


def make_kernel() -> Any:
    """A fresh kernel object (nothing compiled or planned yet)."""

    @clpy.kernel
    def scaled(x: Global[float32], out: Global[float32], a: float32, n: int32):
        i = clpy.get_global_id(0)
        if i < n:
            out[i] = x[i] * a + float32(i)

    return scaled


def hammer(fn: Any) -> list[BaseException]:
    """Run ``fn(t)`` on THREADS threads released together; the exceptions raised."""
    start = threading.Barrier(THREADS)
    errors: list[BaseException] = []

    def body(t: int) -> None:
        try:
            start.wait()
            fn(t)
        except BaseException as e:  # noqa: BLE001 - collected for the assertion
            errors.append(e)

    threads = [threading.Thread(target=body, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return errors


@pytest.mark.parametrize("where", ["sim", "pocl"])
def test_same_kernel_from_eight_threads(where: str, request: pytest.FixtureRequest) -> None:
    device = "sim" if where == "sim" else request.getfixturevalue("cl_device")
    k = make_kernel()
    n = 1000
    results: dict[int, np.ndarray] = {}

    def launch(t: int) -> None:
        x = np.arange(n, dtype=np.float32) + t
        for rep in range(3):
            out = np.zeros(n, np.float32)
            k[(1024,), (64,)](x, out, float(t + rep), n, device=device)
            want = x * np.float32(t + rep) + np.arange(n, dtype=np.float32)
            np.testing.assert_array_equal(out, want)
        results[t] = out

    errors = hammer(launch)
    assert not errors, errors
    assert len(results) == THREADS
    assert len(k._cache) == 1  # one specialization, compiled once


def test_specializations_from_threads_are_shared() -> None:
    k = make_kernel()
    got: list[Any] = []
    errors = hammer(lambda t: got.append(k.specialize()))
    assert not errors, errors
    assert all(s is got[0] for s in got)
    sources = set()
    errors = hammer(lambda t: sources.add(got[0].source_for("opencl-c-1.2")))
    assert not errors and len(sources) == 1


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(diskcache.ENV_VAR, str(tmp_path))
    return tmp_path


def test_source_cache_entry_truncated_is_rewritten(cache_dir: Path) -> None:
    src = "__kernel void k(void) {}\n"
    path = diskcache.record("k", "dev", "-cl-std=CL2.0", src)
    assert path is not None and path.read_text() == src
    path.write_text(src[:7])  # truncated
    assert diskcache.record("k", "dev", "-cl-std=CL2.0", src) == path
    assert path.read_text() == src
    path.write_bytes(b"\xff\xfe garbage")  # not even text
    diskcache.record("k", "dev", "-cl-std=CL2.0", src)
    assert path.read_text() == src


def test_source_cache_from_threads(cache_dir: Path) -> None:
    texts = [f"// variant {i % 3}\n" + "x" * 100_000 for i in range(THREADS)]
    errors = hammer(lambda t: diskcache.record("k", "dev", "", texts[t]))
    assert not errors, errors
    files = sorted((cache_dir / "sources").glob("*.cl"))
    assert len(files) == 3
    assert {f.read_text() for f in files} == set(texts)
    assert not list((cache_dir / "sources").glob("*.tmp"))


def test_binary_cache_entries_are_checked_against_their_seal(tmp_path: Path) -> None:
    root = tmp_path / "binaries"
    for name, data in [("good", b"\x7fELF good"), ("bad", b"\x7fELF bad"), ("new", b"x")]:
        (root / name).mkdir(parents=True)
        (root / name / "binary").write_bytes(data)
        (root / name / "info").write_bytes(b"info")
    diskcache.seal_binaries(str(root))
    (root / "bad" / "binary").write_bytes(b"\x7fELF b")  # truncated after sealing
    (root / "new" / diskcache.SEAL).unlink()  # no seal: a build that died half-way
    assert sorted(diskcache.verify_binaries(str(root))) == ["bad", "new"]
    assert [p.name for p in root.iterdir()] == ["good"]


_CHILD = textwrap.dedent(
    """
    import sys
    import numpy as np
    import clpy
    from clpy import Global, float32, int32

    @clpy.kernel
    def child_kernel(x: Global[float32], n: int32):
        i = clpy.get_global_id(0)
        if i < n:
            x[i] = x[i] * 2.0 + 1.0

    x = np.arange(64, dtype=np.float32)
    child_kernel[(64,)](x, 64, device=sys.argv[1])
    assert np.array_equal(x, np.arange(64, dtype=np.float32) * 2 + 1), x
    print("ok")
    """
)


def _children(script: Path, device: str, env: dict[str, str], count: int) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), device],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(count)
    ]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0 and out.strip() == "ok", err[-3000:]


def test_disk_cache_from_concurrent_processes_and_corrupted_binaries(
    tmp_path: Path, cl_device: Any
) -> None:
    device = RUNTIME.find(cl_device).name
    cache = tmp_path / "cache"
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    env = {**os.environ, diskcache.ENV_VAR: str(cache)}
    _children(script, device, env, 4)  # cold cache, written by 4 processes at once
    sources = list((cache / "sources").glob("child_kernel-*.cl"))
    assert sources and all("child_kernel" in p.read_text() for p in sources)
    texts = {p: p.read_text() for p in sources}
    # Truncate the cached sources and plant a cached binary that does not match its seal
    # (pyopencl keeps binaries itself only for drivers without their own cache; PoCL has one,
    # so there the binary directory holds just what this test puts there).
    for p in sources:
        p.write_text(texts[p][:10])
    bogus = cache / "binaries" / "bogus"
    bogus.mkdir(parents=True, exist_ok=True)
    (bogus / "binary").write_bytes(b"\x7fELF truncated")
    (bogus / "info").write_bytes(b"x")
    (bogus / diskcache.SEAL).write_text("0" * 64)
    _children(script, device, env, 2)
    assert not bogus.exists()  # removed before anything was built or loaded
    assert {p: p.read_text() for p in sources} == texts  # rewritten whole
    for e in (cache / "binaries").iterdir():
        if (e / "binary").is_file():
            assert (e / diskcache.SEAL).read_text() == diskcache._digest(e / "binary")
