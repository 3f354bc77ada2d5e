"""Deliberately wrong devices, to check the fuzzer itself (tests, ``--devices
sim,sim:mutant-xor``): the simulator running each kernel's source after a text transform."""

from __future__ import annotations

from collections.abc import Callable

_KILL_ON_LOAD = "\nimport os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"
MUTANTS: dict[str, Callable[[str], str]] = {
    "sim:mutant-xor": lambda text: text.replace(" ^ ", " | "),
    "sim:mutant-sub": lambda text: text.replace(" - ", " + "),
    # a device whose process dies (a driver crash): the module kills its process on load
    "sim:mutant-crash": lambda text: text + _KILL_ON_LOAD,
}
