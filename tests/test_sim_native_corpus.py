"""The simulator's differential corpus (tests/test_sim_diff*.py, tests/test_sim_semantics.py)
run with every launch compared between the NumPy engine and the native engine, checks off
(tests/test_sim_native_plugin.py): byte-identical arrays, and a floor on how many of its
kernels run natively so the native engine cannot silently fall back for everything."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.test_sim_native import needs_cc

ROOT = Path(__file__).resolve().parent.parent
CORPUS = [
    "tests/test_sim_diff.py",
    "tests/test_sim_diff_more.py",
    "tests/test_sim_diff_builtins.py",
    "tests/test_sim_semantics.py",
]
NATIVE_FLOOR = 0.5  # of the corpus's kernels (measured 2026-11-23: see the assertion message)


@needs_cc
def test_corpus_native_matches_numpy(tmp_path: Path) -> None:
    out = tmp_path / "corpus.json"
    env = dict(os.environ, CLPY_NATIVE_CORPUS_OUT=str(out), CLPY_SIM_NATIVE_STRICT="1")
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-o", "addopts=", "-p", "no:cacheprovider",
         "-p", "tests.test_sim_native_plugin", *CORPUS],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert out.exists(), r.stdout[-3000:] + r.stderr[-3000:]
    res = json.loads(out.read_text())
    assert not res["mismatches"], res["mismatches"]
    kernels = res["kernels"]
    native = sorted(k for k, v in kernels.items() if v == "native")
    fallback = {k: v for k, v in kernels.items() if v != "native"}
    share = len(native) / max(len(kernels), 1)
    assert share >= NATIVE_FLOOR, (
        f"{len(native)} of {len(kernels)} corpus kernels native; fall-backs: {fallback}"
    )
    assert r.returncode == 0, r.stdout[-3000:]
