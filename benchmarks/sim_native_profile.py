"""CPU time (``time.process_time``, every thread) of the real programs on the simulator, one
line of JSON per run: for before/after comparisons of the native engine's generated C, run
alternately on two source trees in separate processes (the machine's noise moves wall time
more than CPU time).

    .venv/bin/python benchmarks/sim_native_profile.py --programs hotspot,nw --repeat 5
    git worktree add -f /tmp/old <rev>
    .venv/bin/python benchmarks/sim_native_profile.py --tree /tmp/old --checks
    .venv/bin/python benchmarks/sim_native_profile.py --programs gramschmidt --in-c

``--in-c`` also gives the wall time spent in the native engine's C calls (per kernel, summed
over the timed runs' launches, ctypes call included): the rest of a run is the launches'
Python path, the host program and any NumPy-engine launches.

``--tree DIR`` imports ``clpy`` and the simulator (``clpy_sim``, the directory ``sim``) from
DIR instead of the installed checkout. Each program runs once to compile and check its
output against NumPy, then ``--repeat`` timed runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from typing import Any


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", default=None, help="source tree to import clpy and clpy_sim from")
    ap.add_argument("--programs", default=None, help="comma-separated names (default: all)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--size", default="bench")
    ap.add_argument("--checks", action="store_true", help="every checker on (default: off)")
    ap.add_argument("--threads", type=int, default=None, help="simulator threads (default: auto)")
    ap.add_argument("--in-c", action="store_true", help="also the wall time in the C calls")
    a = ap.parse_args()
    root = os.path.abspath(a.tree or os.path.join(os.path.dirname(__file__), ".."))
    if a.tree:
        alias = tempfile.mkdtemp(prefix="clpy_tree_")
        os.symlink(os.path.join(root, "sim"), os.path.join(alias, "clpy_sim"))
        sys.path[:0] = [alias, root]
    else:
        sys.path.insert(0, root)
    os.environ.setdefault("CLPY_PROGRESS", "0")
    import clpy
    from benchmarks.programs import PROGRAMS, load
    from benchmarks.programs.report import check

    names = a.programs.split(",") if a.programs else list(PROGRAMS)
    in_c: dict[str, float] = {}
    if a.in_c:
        _time_c_calls(in_c)
    cfg: dict[str, object] = {"checks": a.checks}
    if a.threads:
        cfg["threads"] = a.threads
    out: dict[str, list[float]] = {}
    c_s: dict[str, dict[str, float]] = {}
    for name in names:
        m = load(name)
        inp = m.make_inputs(a.size, 0)
        ref = m.numpy_reference(inp)
        with clpy.sim.config(**cfg):  # type: ignore[arg-type]
            check(m.NAME, "sim", m.run_clpy(inp, "sim", resident=True), ref, m.TOL)
            times = []
            in_c.clear()
            for _ in range(a.repeat):
                c0 = time.process_time()
                m.run_clpy(inp, "sim", resident=True)
                times.append(time.process_time() - c0)
        out[name] = times
        if a.in_c:
            c_s[name] = {k: v / a.repeat for k, v in in_c.items()}
    res: dict[str, object] = {"tree": root, "checks": a.checks, "process_time_s": out}
    if a.in_c:
        res["in_c_wall_s_per_run"] = c_s
    print(json.dumps(res))


def _time_c_calls(acc: dict[str, float]) -> None:
    """Wrap the native runner's chunk runners so each C call's wall time adds to
    ``acc[kernel name]`` (the kernel named by its compiled library's source)."""
    from clpy_sim.native import chunks, runner

    def wrap(f: Any) -> Any:
        def timed(lib: Any, *args: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return f(lib, *args)
            finally:
                src = getattr(lib, "source", "")
                i = src.find("kernel ")
                name = src[i + 7 : src.find(" ", i + 7)] if i >= 0 else "?"
                acc[name] = acc.get(name, 0.0) + time.perf_counter() - t0

        return timed

    for mod in (chunks, runner):
        for fn in ("run_short", "run_long"):
            if hasattr(mod, fn):
                setattr(mod, fn, wrap(getattr(mod, fn)))


if __name__ == "__main__":
    main()
