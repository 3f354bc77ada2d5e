"""Per-target lowering of built-in calls.

A built-in whose declaration carries ``attrs["lower"]`` is lowered when the target lacks one of
its ``features``: the hook returns replacement C text (and may register helper code). Built-ins
without a lowering that need a missing feature are reported by ``program._check_target``.
"""

from __future__ import annotations

from collections.abc import Callable

from clpy.emit.c_exprs import ExprEmitter
from clpy.emit.targets import Target
from clpy.builtins.registry import Builtin
from clpy.ir.nodes import CallBuiltin


def call_hook_for(tgt: Target) -> Callable[[ExprEmitter, CallBuiltin], str | None]:
    def hook(ex: ExprEmitter, call: CallBuiltin) -> str | None:
        b = call.builtin
        lower = b.attrs.get("lower")
        if lower is None:
            return None
        if not needs_lowering(b, tgt):
            return None
        text: str = lower(ex, call, tgt)
        return text

    return hook


def needs_lowering(b: Builtin, tgt: Target) -> bool:
    """The target lacks a feature of ``b``, is older than its OpenCL C version, or ``b`` is
    always lowered (reductions with operators OpenCL lacks)."""
    if b.attrs.get("always_lower"):
        return True
    if tgt.version < b.attrs.get("min_version", (0, 0)):
        return True
    return not all(tgt.has(f) for f in b.features)
