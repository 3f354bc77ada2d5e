"""``convert_float_rtz``/``convert_double_rtz`` of a ``long`` spelled so that no rounding is left
for a compiler to fold.

OpenCL C 2.0 §6.2.3.2: ``_rtz`` rounds toward zero, so ``convert_float_rtz(-(2**63 - 254))``
is ``-(2**63 - 2**39)`` (bits ``0xDEFFFFFF``). PoCL 3.0 (pthread; clpy.fuzz seed 333151)
folds the conversion of a *constant* ``long`` in ``(-2**63, -(2**63 - 2**39)]`` to ``-2**63``
(round to nearest); at run time, and for every other value tried, it is right. It does the
same for ``convert_double_rtz`` (seed 340847: ``31 - LONG_MIN`` wrapped, ``-(2**63 - 31)``,
gave ``-2**63`` where rtz gives ``-(2**63 - 1024)``).

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

``double`` keeps 53 significant bits the same way (``sh = 11 - clz(m)``). Vectors keep the
device's conversion (the fuzzer found only the scalar).
"""

from __future__ import annotations

from clpy.emit.c_exprs import ExprEmitter
from clpy.emit.targets import Target
from clpy.ir.nodes import CallBuiltin
from clpy.types.core import ScalarType, Type

KIND = "rtz_long:"  # helper kinds "rtz_long:float" / "rtz_long:double", source type long
QUIRKS = {"float": "convert_float_rtz:long", "double": "convert_double_rtz:long"}
QUIRK = QUIRKS["float"]
_KEEP = {"float": 24, "double": 53}  # significant bits of the destination


def lower_rtz_conversion(ex: ExprEmitter, call: CallBuiltin, tgt: Target) -> str | None:
    """``clpy_convert_<T>_rtz_long(x)`` where the target's quirks name it, else None."""
    conv = call.builtin.conversion
    if conv is None or conv.reinterpret or conv.sat or conv.rounding != "rtz":
        return None
    src, dst = call.args[0].type if call.args else None, conv.dest
    if len(call.args) != 1 or not isinstance(dst, ScalarType) or dst.cl_name not in QUIRKS:
        return None
    if QUIRKS[dst.cl_name] not in tgt.info.get("lower_builtins", ()):
        return None
    if not (isinstance(src, ScalarType) and src.cl_name == "long"):
        return None
    ex.helpers.add((f"{KIND}{dst.cl_name}", src))
    return f"clpy_convert_{dst.cl_name}_rtz_long({ex(call.args[0])})"


def rtz_helper_source(kind: str, t: Type) -> str:
    dst = kind[len(KIND) :]
    assert kind.startswith(KIND) and dst in _KEEP and t.cl_name == "long", (kind, t)
    return (
        f"{dst} clpy_convert_{dst}_rtz_long(long x) {{\n"
        f"    // |x| cut to {_KEEP[dst]} significant bits: exact as a {dst} (PoCL folds rtz)\n"
        "    ulong m = x < 0 ? 0UL - as_ulong(x) : as_ulong(x);\n"
        f"    int sh = {64 - _KEEP[dst]} - (int)clz(m);\n"
        f"    {dst} f = ({dst})(sh > 0 ? (m >> sh) << sh : m);\n"
        "    return x < 0 ? -f : f;\n"
        "}"
    )
