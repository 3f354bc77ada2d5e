"""The real-program suite: whole OpenCL programs ported from public benchmark suites and SDK
samples, each a clpy port plus a hand-written OpenCL C kernel file in the original's style
(``cl/``), checked against NumPy. ``python -m benchmarks.programs --help``."""

from __future__ import annotations

import importlib
from types import ModuleType

PROGRAMS = [
    "hotspot",
    "nw",
    "lud",
    "pathfinder",
    "backprop",
    "stencil3d",
    "sgemm",
    "spmv",
    "histo",
    "nbody",
    "bitonic",
    "convsep",
    "gramschmidt",
    "srad",
]


def load(name: str) -> ModuleType:
    """The program module ``name`` (one of ``PROGRAMS``)."""
    if name not in PROGRAMS:
        raise ValueError(f"unknown program {name!r}; programs: {', '.join(PROGRAMS)}")
    return importlib.import_module(f"benchmarks.programs.{name}")
