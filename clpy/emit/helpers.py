"""Small helper functions the emitter adds to a program when the kernel needs them.

Python's ``//`` and ``%`` floor (DESIGN.md "Semantics"); C's truncate. For signed integers and
floats that are not provably non-negative the emitter calls these helpers.
"""

from __future__ import annotations

from clpy.emit.lower_abs import KIND as INT_ABS_KIND
from clpy.emit.lower_abs import int_abs_helper_source
from clpy.emit.lower_add_sat import KIND as ADD_SAT_KIND
from clpy.emit.lower_add_sat import add_sat_helper_source
from clpy.emit.lower_convert import KIND as SAT_KIND
from clpy.emit.lower_convert import sat_helper_source
from clpy.emit.lower_helpers import lowered_helper_source
from clpy.emit.lower_mad_sat import KIND as MAD_SAT_KIND
from clpy.emit.lower_mad_sat import mad_sat_helper_source
from clpy.emit.lower_nan import KIND as NAN_GUARD_KIND
from clpy.emit.lower_nan import nan_guard_helper_source
from clpy.emit.lower_negation import KIND as NEG_KIND
from clpy.emit.lower_negation import negation_helper_source
from clpy.emit.lower_rtz import KIND as RTZ_KIND
from clpy.emit.lower_rtz import rtz_helper_source
from clpy.types.core import ScalarType, Type, VectorType


def helper_source(kind: str, t: Type) -> str:
    if kind.startswith("lower:"):  # collectives and atomics lowered for the target
        return lowered_helper_source(kind, t)
    if kind.startswith(SAT_KIND):  # saturating conversions spelled out for the target
        return sat_helper_source(kind, t)
    if kind == MAD_SAT_KIND:  # mad_sat spelled out where the device's is wrong
        return mad_sat_helper_source(t)
    if kind.startswith(NAN_GUARD_KIND):  # rounding functions with a NaN guard
        return nan_guard_helper_source(kind, t)
    if kind.startswith(NEG_KIND):  # signed negation spelled out for the target
        return negation_helper_source(kind, t)
    if kind.startswith(INT_ABS_KIND):  # abs/abs_diff in the unsigned type for the target
        return int_abs_helper_source(kind, t)
    if kind.startswith(RTZ_KIND):  # convert_float/double_rtz(long), nothing left to fold
        return rtz_helper_source(kind, t)
    if kind.startswith(ADD_SAT_KIND):  # add_sat/sub_sat spelled out for the target
        return add_sat_helper_source(kind, t)
    if kind.startswith("wait_events"):  # clpy.wait_group_events(e0, e1, ...)
        k = int(kind[len("wait_events") :])
        params = ", ".join(f"event_t e{i}" for i in range(k))
        items = ", ".join(f"e{i}" for i in range(k))
        return (
            f"void clpy_wait_events{k}({params}) {{\n"
            f"    event_t list[{k}] = {{{items}}};\n"
            f"    wait_group_events({k}, list);\n}}"
        )
    name = f"clpy_{kind}_{t.cl_name}"
    tn = t.cl_name
    elem = t.elem if isinstance(t, VectorType) else t
    assert isinstance(elem, ScalarType)
    vec = isinstance(t, VectorType)
    if elem.is_float:
        if kind == "floordiv":
            body = "return floor(a / b);"
        elif vec:
            body = (
                f"{tn} r = fmod(a, b);\n"
                f"    return select(r, r + b, (r != 0) & ((r < 0) != (b < 0)));"
            )
        else:
            body = f"{tn} r = fmod(a, b);\n    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;"
    elif vec:
        # Vector comparisons give -1 (all bits set) for true, so adding the mask subtracts 1.
        if kind == "floordiv":
            body = f"{tn} q = a / b;\n    return q + ((q * b != a) & ((a < 0) != (b < 0)));"
        else:
            body = f"{tn} r = a % b;\n    return r + (((r != 0) & ((r < 0) != (b < 0))) & b);"
    else:
        if kind == "floordiv":
            body = f"{tn} q = a / b;\n    return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;"
        else:
            body = f"{tn} r = a % b;\n    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;"
    return f"{tn} {name}({tn} a, {tn} b) {{\n    {body}\n}}"
