"""``convert_float_rtz`` of a ``long`` spelled so that no rounding is left for a compiler to fold.

OpenCL C 2.0 §6.2.3.2: ``_rtz`` rounds toward zero, so ``convert_float_rtz(-(2**63 - 254))``
is ``-(2**63 - 2**39)`` (bits ``0xDEFFFFFF``). PoCL 3.0 (pthread; clpy.fuzz seed 333151)
folds the conversion of a *constant* ``long`` in ``(-2**63, -(2**63 - 2**39)]`` to ``-2**63``
(round to nearest); at run time, and for every other value tried, it is right.

Where ``Target.info["lower_builtins"]`` lists ``convert_float_rtz:long`` (clpy/runtime/quirks.py)
a scalar call becomes a helper that truncates the magnitude to 24 significant bits in integer
arithmetic first; the ``float`` conversion of the result is exact, the same in every rounding
mode, so a folded one is right too::

    float clpy_convert_float_rtz_long(long x) {
        ulong m = x < 0 ? 0UL - as_ulong(x) : as_ulong(x);
        int sh = 40 - (int)clz(m);
        float f = (float)(sh > 0 ? (m >> sh) << sh : m);
        return x < 0 ? -f : f;
    }

Vectors keep the device's conversion (the fuzzer found only the scalar).
"""

from __future__ import annotations

from clpy.emit.c_exprs import ExprEmitter
from clpy.emit.targets import Target
from clpy.ir.nodes import CallBuiltin
from clpy.types.core import ScalarType, Type

KIND = "rtz_long:"  # helper kind "rtz_long:float" with the source type long
QUIRK = "convert_float_rtz:long"


def lower_rtz_conversion(ex: ExprEmitter, call: CallBuiltin, tgt: Target) -> str | None:
    """``clpy_convert_float_rtz_long(x)`` where the target's quirks name it, else None."""
    conv = call.builtin.conversion
    if conv is None or conv.reinterpret or conv.sat or conv.rounding != "rtz":
        return None
    if len(call.args) != 1 or QUIRK not in tgt.info.get("lower_builtins", ()):
        return None
    src, dst = call.args[0].type, conv.dest
    if not (isinstance(src, ScalarType) and src.cl_name == "long"):
        return None
    if not (isinstance(dst, ScalarType) and dst.cl_name == "float"):
        return None
    ex.helpers.add((f"{KIND}float", src))
    return f"clpy_convert_float_rtz_long({ex(call.args[0])})"


def rtz_helper_source(kind: str, t: Type) -> str:
    assert kind == f"{KIND}float" and t.cl_name == "long", (kind, t)
    return (
        "float clpy_convert_float_rtz_long(long x) {\n"
        "    // |x| cut to 24 significant bits: exact as a float (PoCL folds rtz wrongly)\n"
        "    ulong m = x < 0 ? 0UL - as_ulong(x) : as_ulong(x);\n"
        "    int sh = 40 - (int)clz(m);\n"
        "    float f = (float)(sh > 0 ? (m >> sh) << sh : m);\n"
        "    return x < 0 ? -f : f;\n"
        "}"
    )
