"""Values the compiled plan creates itself, shared by the statement compiler, the call sites
of device functions (``sim/plan.py``) and user-defined reductions (``sim/collectives.py``).

``RET`` is the frame-environment key where ``return v`` leaves ``v`` for the caller; a struct
lives in a frame as a dict of its fields' lane values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from clpy_sim import ops

Value = Any
RET = "<return value>"


def struct_zero(t: Any) -> dict[str, Value]:
    """The zero value of a struct type (nested structs are nested dicts)."""
    out: dict[str, Value] = {}
    for name, ft in t.fields:
        out[name] = struct_zero(ft) if hasattr(ft, "fields") else ops.zeros(ft)
    return out


def full(a: Value, shape: tuple[int, ...]) -> Value:
    """``a`` broadcast to ``shape`` (a read-only view), or ``a`` itself when it has that shape
    already (``np.broadcast_to`` costs ~10 µs even then)."""
    if type(a) is np.ndarray and a.shape == shape:
        return a
    return np.broadcast_to(a, shape)


def same_contents(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal arrays, NaN equal to NaN (a store that leaves memory as it was); structured
    arrays compare field by field."""
    try:
        return bool(np.array_equal(a, b, equal_nan=True))
    except TypeError:  # structured elements: no NaN test
        return bool(np.array_equal(a, b))
