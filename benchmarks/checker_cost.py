"""What the simulator's checkers cost on the real programs: each program end to end (every
launch, device-resident data, as ``python -m benchmarks.programs --mode sim`` runs it) with
checks off and on, CPU time of the process, rounds interleaved, minimum per setting.

``--baseline REV`` also times checks on with the checkers' shadow modules (``sim/races.py``,
``sim/races_global.py``) and trip vectorization's (``sim/tripvec.py``, ``sim/tripframe.py``,
``sim/tripshadow.py``, those the revision has) as they were at git revision ``REV``, loaded
beside today's and swapped in for its rounds (each setting with its own compiled plans), the
rest of the simulator unchanged: before/after in one run.
``--profile FILE`` writes a cProfile of one checked run per program (``pstats`` format).

    python -m benchmarks.checker_cost --programs gramschmidt,lud --rounds 3 --baseline HEAD
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import subprocess
import sys
import time
import types
import weakref
from pathlib import Path
from typing import Any

import numpy as np

import clpy
from benchmarks.programs import load

_ROOT = Path(__file__).resolve().parent.parent
_SWAP = [("memory", "LocalShadow", "races"), ("memory", "GlobalShadow", "races_global")]
_SWAP += [(m, "GlobalShadow", "races_global") for m in ("aliases", "images", "enqueue")]
# the modules a baseline replaces, each after those it imports
_MODULES = ("races", "races_global", "tripframe", "tripshadow", "tripvec")


def _baseline(rev: str) -> dict[str, types.ModuleType]:
    """``_MODULES`` as they were at ``rev`` (those it has), as modules of their own."""
    srcs: dict[str, str] = {}
    for name in _MODULES:
        got = subprocess.run(
            ["git", "show", f"{rev}:sim/{name}.py"], cwd=_ROOT, capture_output=True, text=True
        )
        if got.returncode == 0:
            srcs[name] = got.stdout
    mods: dict[str, types.ModuleType] = {}
    for name, src in srcs.items():
        for other in srcs:
            src = src.replace(f"clpy_sim.{other}", f"clpy_sim._base_{other}")
            src = src.replace(f"import {other}\n", f"import _base_{other} as {other}\n")
        full = f"clpy_sim._base_{name}"
        mod = types.ModuleType(full)
        mod.__file__ = f"<{rev}:sim/{name}.py>"
        sys.modules[full] = mod
        exec(compile(src, mod.__file__, "exec"), mod.__dict__)
        mods[name] = mod
    return mods


def _use(mods: dict[str, Any], plans: Any) -> None:
    """Make the simulator create its shadows from ``mods`` (``races``, ``races_global``) and
    compile loops with ``mods["tripvec"]`` (where given), with the compiled plans ``plans``."""
    for where, attr, name in _SWAP:
        m = importlib.import_module(f"clpy_sim.{where}")
        if hasattr(m, attr):
            setattr(m, attr, getattr(mods[name], attr))
    stmts = importlib.import_module("clpy_sim.stmts")
    if "tripvec" in mods:
        stmts.tripvec = mods["tripvec"]  # type: ignore[attr-defined]
    importlib.import_module("clpy_sim.plan")._PLANS = plans


def _run(m: Any, inp: Any, checks: bool, threads: int) -> tuple[float, Any]:
    with clpy.sim.config(checks=checks, threads=threads):
        t0 = time.process_time()
        out = m.run_clpy(inp, "sim", resident=True)
        return time.process_time() - t0, out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--programs", default="gramschmidt,backprop,bitonic,lud,nw")
    ap.add_argument("--size", default="bench")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1, help="simulator threads (default 1)")
    ap.add_argument("--baseline", metavar="REV", help="also time the checkers of git REV")
    ap.add_argument("--profile", metavar="FILE", help="cProfile of one checked run per program")
    a = ap.parse_args(argv)
    today = {n: importlib.import_module(f"clpy_sim.{n}") for n in _MODULES}
    base = _baseline(a.baseline) if a.baseline else None
    settings = ["off", "on"] + (["base"] if base else [])
    plans = {s: weakref.WeakKeyDictionary() for s in settings}  # (compiled per setting)
    ok = True
    print(f"CPU seconds, min of {a.rounds} (size {a.size})")
    for name in a.programs.split(","):
        m = load(name)
        inp = m.make_inputs(a.size, a.seed)
        ref_out = None
        best: dict[str, float] = {s: float("inf") for s in settings}
        for s in settings:  # warm-up (kernel builds, caches); results compared
            _use(base if s == "base" and base else today, plans[s])
            _, out = _run(m, inp, s != "off", a.threads)
            if ref_out is None:
                ref_out = out
            elif not _same(out, ref_out):
                print(f"{name}: results differ ({s})", flush=True)
                ok = False
        for k in range(a.rounds):
            for s in settings if k % 2 == 0 else settings[::-1]:  # (no order favoured)
                _use(base if s == "base" and base else today, plans[s])
                t, _ = _run(m, inp, s != "off", a.threads)
                best[s] = min(best[s], t)
        _use(today, plans["on"])
        if a.profile:
            pr = cProfile.Profile()
            with clpy.sim.config(checks=True, threads=a.threads):
                pr.enable()
                m.run_clpy(inp, "sim", resident=True)
                pr.disable()
            pr.dump_stats(f"{a.profile}.{name}")
        line = f"{name:12s} off {best['off'] * 1e3:8.1f} ms  on {best['on'] * 1e3:8.1f} ms"
        line += f" ({best['on'] / best['off']:.2f}x)"
        if base:
            b = best["base"]
            line += f"  baseline on {b * 1e3:8.1f} ms ({b / best['off']:.2f}x)"
        print(line, flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
