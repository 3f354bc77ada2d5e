"""A pytest plugin (``-p tests.test_sim_native_plugin``) that makes every simulator launch of
the tests it runs a comparison of the two engines: the launch runs on the NumPy engine and on
the native engine (``engine="auto"``), both with every checker off, on copies of the same
arguments; the native engine's arrays go back to the test. Each kernel's engine (or why it
fell back) and every difference are written as JSON to ``$CLPY_NATIVE_CORPUS_OUT`` at the end
(tests/test_sim_native_corpus.py runs the differential corpus under it). No tests here."""

from __future__ import annotations

import io
import json
import os
from contextlib import redirect_stdout
from typing import Any

import numpy as np

_RESULTS: dict[str, Any] = {"kernels": {}, "mismatches": [], "launches": 0}


def _copy(a: Any) -> Any:
    return a.copy() if isinstance(a, np.ndarray) else a


def pytest_configure(config: Any) -> None:
    import clpy_sim
    from clpy_sim.native.runner import why_not

    orig = clpy_sim.launch

    def dual(fn: Any, gs: Any, ls: Any, args: Any, offset: Any = None, params: Any = None) -> None:
        ref = [_copy(a) for a in args]
        try:
            # (the reference run's printf output is not the test's)
            with clpy_sim.config(checks=False, engine="numpy"), redirect_stdout(io.StringIO()):
                orig(fn, gs, ls, ref, offset=offset, params=params)
        except Exception:
            orig(fn, gs, ls, args, offset=offset, params=params)  # (a test of an error)
            return
        with clpy_sim.config(checks=False, engine="auto"):
            orig(fn, gs, ls, args, offset=offset, params=params)
        _RESULTS["launches"] += 1
        key = f"{fn.name} ({fn.loc})"
        why = why_not(fn)
        prev = _RESULTS["kernels"].get(key, "native")
        _RESULTS["kernels"][key] = "native" if why is None and prev == "native" else (why or prev)
        for k, (a, b) in enumerate(zip(ref, args)):
            if isinstance(a, np.ndarray) and a.tobytes() != b.tobytes():
                _RESULTS["mismatches"].append(f"{key}: argument {k}")

    clpy_sim.launch = dual


def pytest_sessionfinish(session: Any, exitstatus: Any) -> None:
    out = os.environ.get("CLPY_NATIVE_CORPUS_OUT")
    if out:
        with open(out, "w") as f:
            json.dump(_RESULTS, f, indent=1, sort_keys=True)
