"""Rounding functions with a NaN guard, for a device that gets them wrong.

PoCL 3.0 gives garbage (a different value each build) for ``ceil``, ``floor``, ``trunc`` and
``round`` of a NaN its compiler can see, e.g. ``ceil(as_float(0xFFFFFFFFu))`` (clpy.fuzz seed
800109; ``rint``, ``fabs`` and a NaN known only at run time are right). Where the device's quirks
list them (``Target.info["lower_builtins"]``, clpy/runtime/quirks.py) the call becomes a helper
that returns a NaN argument itself, as the spec's functions do (OpenCL C 2.0 §6.13.2, C99
F.9.6)::

    float clpy_ceil_float(float x) { return isnan(x) ? x : ceil(x); }

Vectors use ``select(ceil(x), x, isnan(x))``. The argument is evaluated once (a function).
"""

from __future__ import annotations

from clpy.emit.c_exprs import ExprEmitter
from clpy.emit.helper_calls import call_helper
from clpy.emit.targets import Target
from clpy.ir.nodes import CallBuiltin
from clpy.types.core import Type, VectorType

KIND = "nan_guard:"  # helper kinds: "nan_guard:<function>" with the argument type


def lower_nan_guard(ex: ExprEmitter, call: CallBuiltin, tgt: Target) -> str:
    return call_helper(ex, KIND, call)


def nan_guard_helper_source(kind: str, t: Type) -> str:
    name = kind[len(KIND) :]
    tn = t.cl_name
    body = (
        f"select({name}(x), x, isnan(x))"
        if isinstance(t, VectorType)
        else (f"isnan(x) ? x : {name}(x)")
    )
    why = "    // a NaN argument is the result (PoCL folds a constant NaN into garbage)\n"
    return f"{tn} clpy_{name}_{tn}({tn} x) {{\n{why}    return {body};\n}}"
