"""``add_sat`` and ``sub_sat`` of signed integers spelled out, for a device whose own wrap.

OpenCL C 2.0 §6.13.3 (table 10): ``add_sat(x, y)`` / ``sub_sat(x, y)`` are ``x + y`` /
``x - y`` saturated to the range of the type. Oclgrind 21.10 returns the wrapped value for
``long`` (``add_sat(LONG_MIN, LONG_MIN)`` is 0, ``sub_sat(0, LONG_MIN)`` is ``LONG_MIN``;
scripts/gpu_fuzz_diag.py, tests/test_fuzz_oclgrind.py; ``int`` and ``ulong`` are right).
Where the device's quirks list ``add_sat:long`` / ``sub_sat:long``
(``Target.info["lower_builtins"]``, clpy/runtime/quirks.py) the call becomes a helper that
computes the wrapped result in the unsigned type (no overflow) and detects the overflow from
the signs (Hacker's Delight §2-13)::

    long clpy_add_sat_long(long a, long b) {
        long s = as_long((ulong)(as_ulong(a) + as_ulong(b)));
        return ((a ^ s) & (b ^ s)) < 0 ? (a < 0 ? LONG_MIN : LONG_MAX) : s;
    }

A sum overflows when both operands have the sign the result lacks; a difference when the
operands' signs differ and the result's differs from ``a``'s; the bound has ``a``'s sign.
Vectors use ``select`` (the most significant bit of each lane of the mask).
"""

from __future__ import annotations

from clpy.emit.c_exprs import ExprEmitter
from clpy.emit.helper_calls import call_helper
from clpy.emit.lower_convert import MACROS
from clpy.emit.targets import Target
from clpy.ir.nodes import CallBuiltin
from clpy.types.core import ScalarType, Type, VectorType, element_of

KIND = "add_sat:"  # helper kinds: "add_sat:add_sat" / "add_sat:sub_sat" with the type


def lower_add_sat(ex: ExprEmitter, call: CallBuiltin, tgt: Target) -> str:
    return call_helper(ex, KIND, call)


def add_sat_helper_source(kind: str, t: Type) -> str:
    name = kind[len(KIND) :]
    elem = element_of(t)
    assert isinstance(elem, ScalarType) and elem.is_int and elem.is_signed, t
    tn, un = t.cl_name, f"u{t.cl_name}"
    op, over = {"add_sat": ("+", "(a ^ s) & (b ^ s)"), "sub_sat": ("-", "(a ^ b) & (a ^ s)")}[name]
    lo, hi = MACROS[elem.cl_name]
    head = f"{tn} clpy_{name}_{tn}({tn} a, {tn} b) {{\n"
    why = "    // saturated (OpenCL C 2.0 §6.13.3): the wrapped value unless the signs overflow\n"
    wrapped = f"    {tn} s = as_{tn}(({un})(as_{un}(a) {op} as_{un}(b)));\n"
    if isinstance(t, VectorType):
        body = f"    return select(s, select(({tn}){hi}, ({tn}){lo}, a), {over});"
    else:
        body = f"    return ({over}) < 0 ? (a < 0 ? ({tn}){lo} : ({tn}){hi}) : s;"
    return f"{head}{why}{wrapped}{body}\n}}"
