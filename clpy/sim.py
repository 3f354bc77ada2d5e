"""``clpy.sim``: settings and errors of clpy's NumPy simulator (the top-level ``sim`` package).

This module is a thin, lazy forwarder: ``import clpy`` never imports the simulator; the first
attribute access here does. ``clpy.sim.config(checks=..., on_error=..., atomic_order=...,
sub_group_size=..., engine=...)``, ``clpy.sim.SimulationError``, ``clpy.sim.launch``,
``clpy.sim.why_not(kernel)`` (why a launch ran on the NumPy engine, not the native one) ...
"""

from __future__ import annotations

import importlib
from typing import Any

_NAMES = (
    "launch",
    "config",
    "current",
    "SimConfig",
    "CHECKS",
    "SimulationError",
    "SimulationWarning",
    "Report",
)


# the native engine's (sim/native/runner.py): why a kernel ran on the NumPy engine, and the
# error engine="native" raises
_NATIVE = ("why_not", "NativeUnavailable")


def __getattr__(name: str) -> Any:
    if name in _NAMES:
        return getattr(importlib.import_module("clpy_sim"), name)
    if name in _NATIVE:
        return getattr(importlib.import_module("clpy_sim.native.runner"), name)
    raise AttributeError(f"module 'clpy.sim' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(_NAMES + _NATIVE)


__all__ = list(_NAMES + _NATIVE)
