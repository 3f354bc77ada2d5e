"""A pytest plugin (``-p tests.test_sim_native_checks_plugin``) that makes every simulator
launch of the tests it runs a comparison of the two engines with the test's own settings
(checkers on, as by default, or as the test configures them): the launch runs on the NumPy
engine and on ``engine="auto"`` (the native engine with its detectors, sim/native/checks.py),
on copies of the same arguments; arrays, the exception (type and text: every report) and the
warnings must be identical. The ``auto`` run's arrays, exception and warnings go back to the
test. Each kernel's engine (or why it fell back) and every difference are written as JSON to
``$CLPY_NATIVE_CHECKS_OUT`` (tests/test_sim_native_checks.py). No tests here."""

from __future__ import annotations

import io
import json
import os
import warnings
from contextlib import redirect_stdout
from typing import Any

import numpy as np

# kernels: engine or why not; quiet: launches where a detector fired and the NumPy engine then
# reported nothing (a false alarm, by kernel)
_RESULTS: dict[str, Any] = {
    "kernels": {},
    "mismatches": [],
    "launches": 0,
    "errors": 0,
    "quiet": {},
}


def _copies(args: Any) -> list[Any]:
    """Copies of the arguments that overlap in memory as the arguments do (views of one
    array: views of one copy)."""
    roots: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    out: list[Any] = []
    for a in args:
        if not isinstance(a, np.ndarray):
            out.append(a)
            continue
        root = a
        while isinstance(root.base, np.ndarray):
            root = root.base
        got = roots.get(id(root))
        if got is None:
            got = roots[id(root)] = (root, root.copy())
        r, c = got
        off = a.ctypes.data - r.ctypes.data
        out.append(np.ndarray(a.shape, a.dtype, buffer=c, offset=off, strides=a.strides))
    return out


def _run(orig: Any, engine: str, fn: Any, gs: Any, ls: Any, args: Any, **kw: Any) -> Any:
    """(exception or None, [(category, text)], warnings) of one run."""
    import clpy_sim

    exc = None
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        with clpy_sim.config(engine=engine):
            try:
                orig(fn, gs, ls, args, **kw)
            except Exception as e:
                exc = e
    return exc, [(w.category.__name__, str(w.message)) for w in got], got


def pytest_configure(config: Any) -> None:
    import importlib

    import clpy_sim
    from clpy_sim.native.runner import why_not

    current = importlib.import_module("clpy_sim.config").current
    orig = clpy_sim.launch
    glob = globals()

    def dual(fn: Any, gs: Any, ls: Any, args: Any, offset: Any = None, params: Any = None) -> None:
        cfg = current()
        if cfg.engine_name() == "numpy" or not cfg.checks:
            orig(fn, gs, ls, args, offset=offset, params=params)
            return
        ref = _copies(args)
        reg = dict(glob.get("__warningregistry__", {}))  # (warn_once: once per line)
        with redirect_stdout(io.StringIO()):
            e1, w1, _ = _run(orig, "numpy", fn, gs, ls, ref, offset=offset, params=params)
        glob["__warningregistry__"] = reg
        e2, w2, raw = _run(orig, "auto", fn, gs, ls, args, offset=offset, params=params)
        _RESULTS["launches"] += 1
        key = f"{fn.name} ({fn.loc})"
        why = why_not(fn)
        prev = _RESULTS["kernels"].get(key, "native")
        _RESULTS["kernels"][key] = "native" if why is None and prev == "native" else (why or prev)
        if e1 is not None or w1:
            _RESULTS["errors"] += 1
        elif why is not None and why.startswith("a detector"):
            _RESULTS["quiet"][key] = why
        if (type(e1), str(e1)) != (type(e2), str(e2)):
            _RESULTS["mismatches"].append(f"{key}: exception {e1!r} vs {e2!r}")
        if w1 != w2:
            _RESULTS["mismatches"].append(f"{key}: warnings {w1} vs {w2}")
        for k, (a, b) in enumerate(zip(ref, args)):
            if isinstance(a, np.ndarray) and a.tobytes() != b.tobytes():
                _RESULTS["mismatches"].append(f"{key}: argument {k}")
        for w in raw:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        if e2 is not None:
            raise e2

    clpy_sim.launch = dual


def pytest_sessionfinish(session: Any, exitstatus: Any) -> None:
    out = os.environ.get("CLPY_NATIVE_CHECKS_OUT")
    if out:
        with open(out, "w") as f:
            json.dump(_RESULTS, f, indent=1, sort_keys=True)
