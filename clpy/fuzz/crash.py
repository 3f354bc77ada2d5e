"""Shrinking a kernel that kills its process (a driver or compiler crash).

Such a kernel cannot be evaluated in the shrinking process itself, so each candidate runs in
a child: ``python -m clpy.fuzz.crash PROGRAM.pkl SEED DEVICE ...`` loads the pickled program,
runs it on each device (as ``clpy.fuzz.runner.run_on`` does) and exits 0 if it survived; a
child killed by a signal means the candidate still crashes. Used by
``clpy.fuzz.campaign.write_crash`` for a kernel whose worker died twice.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

from clpy.fuzz.mutants import MUTANTS
from clpy.fuzz.nodes import Program
from clpy.fuzz.runner import load, make_inputs, run_on
from clpy.fuzz.shrink import Shrinker


def dies(program: Program, seed: int, devices: list[str], timeout_s: float = 120.0) -> bool:
    """Whether running ``program`` kills a child process (a signal, not an exception)."""
    with tempfile.TemporaryDirectory(prefix="clpy-fuzz-crash-") as d:
        path = Path(d) / "program.pkl"
        path.write_bytes(pickle.dumps(program))
        cmd = [sys.executable, "-m", "clpy.fuzz.crash", str(path), str(seed), *devices]
        try:
            r = subprocess.run(cmd, capture_output=True, timeout=timeout_s, cwd=d)
        except subprocess.TimeoutExpired:
            return False  # a hang is not the same failure
        return r.returncode < 0


def shrink_crash(program: Program, seed: int, devices: list[str], budget_s: float) -> Program:
    """The smallest program (delta debugging, clpy.fuzz.shrink) that still kills a child."""
    return Shrinker(lambda p: dies(p, seed, devices), budget_s=budget_s).shrink(program)


def main(argv: list[str]) -> int:
    program = pickle.loads(Path(argv[0]).read_bytes())
    seed = int(argv[1])
    folder = Path(argv[0]).parent
    loaded = load(program, folder)
    inputs = make_inputs(loaded, seed)
    for device in argv[2:]:
        dev_loaded = load(program, folder, MUTANTS[device]) if device in MUTANTS else loaded
        run_on(dev_loaded, device, inputs)  # errors are outcomes; only a crash ends it
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
