"""``abs`` and ``abs_diff`` of signed integers computed in the unsigned type, for a device
whose own treat the most negative value as undefined.

OpenCL C 2.0 §6.13.3 (table 10): ``abs(x)`` is ``|x|`` and ``abs_diff(x, y)`` is ``|x - y|``,
both returned as the unsigned type of the same width, "without modulo overflow": ``abs(INT_MIN)``
is ``(uint)2**31``, which as an ``int`` is ``INT_MIN`` again. PoCL 3.0 (pthread, LLVM; clpy.fuzz
seed 3078) compiles ``abs`` of a scalar ``int`` to LLVM's ``llvm.abs`` with
``int_min_is_poison``: the optimizer may assume the result is below 2**31, so
``(long)(int)abs(x)`` sign-extends as if it were non-negative and gives ``+2**31`` for
``INT_MIN``, and ``abs(INT_MIN)`` of a constant folds to the same. ``abs_diff(x, 0)`` can fold
into the same ``abs``. A constant ``LONG_MIN`` folded to -20 (seed 127): poison may become
anything, so the quirk names every signed type (tests/test_fuzz_abs.py).

Where the device's quirks list ``abs:<type>`` / ``abs_diff:<type>``
(``Target.info["lower_builtins"]``, clpy/runtime/quirks.py) the call becomes a helper that
negates in the unsigned type, where nothing overflows::

    uint clpy_abs_int(int x) { uint u = as_uint(x); return x < 0 ? 0u - u : u; }
    ulong clpy_abs_long(long x) { ulong u = as_ulong(x); return (x < 0 ? ~u : u) + (u >> 63); }
    uint clpy_abs_diff_int(int a, int b) {
        uint d = as_uint(a) - as_uint(b); return a < b ? 0u - d : d;
    }

The 64-bit ``abs`` negates as ``~u + 1`` (the sign bit is the 1): NVIDIA's compiler took the
``0 - u`` form for a non-negative ``long`` (seed 365246). ``as_uint(a) - as_uint(b)`` is
``a - b`` modulo 2**32, whose negation when ``a < b`` is the exact ``b - a`` (at most
2**32 - 1). Vectors spell the same with the vector ``?:`` (a
lane-wise ``select``, §6.3.i). The arguments are evaluated once (a function).
"""

from __future__ import annotations

from clpy.emit.c_exprs import ExprEmitter
from clpy.emit.helper_calls import call_helper
from clpy.emit.targets import Target
from clpy.ir.nodes import CallBuiltin
from clpy.types.core import ScalarType, Type, element_of

KIND = "int_abs:"  # helper kinds: "int_abs:abs" / "int_abs:abs_diff" with the argument type


def lower_int_abs(ex: ExprEmitter, call: CallBuiltin, tgt: Target) -> str:
    return call_helper(ex, KIND, call)


def int_abs_helper_source(kind: str, t: Type) -> str:
    name = kind[len(KIND) :]
    elem = element_of(t)
    assert isinstance(elem, ScalarType) and elem.is_int, t
    tn = t.cl_name
    un = tn if not elem.is_signed else f"u{tn}"
    why = "    // in the unsigned type: |MIN| is exact (PoCL's abs makes INT_MIN poison)\n"
    if name == "abs" and elem.bits == 64:
        # two's complement negation as ~u + 1: the H100 (driver 580) took the ``0 - u`` form,
        # and the built-in, for non-negative, so ``33 % (long)abs(LONG_MIN)`` came out 33
        # (fuzz seed 365246; scripts/gpu_absmod_diag.py, benchmarks/results/nvidia_diag/
        # absmod_h100_s7.json: this form, and the 32-bit one for int, right there and on PoCL)
        head = f"{un} clpy_abs_{tn}({tn} x) {{\n"
        why = "    // in the unsigned type, negated as ~u + 1: |MIN| is exact on every device\n"
        body = f"    {un} u = as_{un}(x);\n    return (x < ({tn})0 ? ~u : u) + (u >> 63);"
    elif name == "abs":
        head = f"{un} clpy_abs_{tn}({tn} x) {{\n"
        body = f"    {un} u = as_{un}(x);\n    return x < ({tn})0 ? ({un})0 - u : u;"
    elif name == "abs_diff":
        head = f"{un} clpy_abs_diff_{tn}({tn} a, {tn} b) {{\n"
        body = f"    {un} d = as_{un}(a) - as_{un}(b);\n    return a < b ? ({un})0 - d : d;"
    else:
        raise ValueError(f"no unsigned-type lowering for {name!r}")
    return f"{head}{why}{body}\n}}"
