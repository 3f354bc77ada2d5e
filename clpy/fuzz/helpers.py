"""Safe-math helpers, CLsmith style: ``@clpy.func`` wrappers that make every operation of a
generated kernel well-defined in OpenCL C (no signed overflow, no division by zero, no
``INT_MIN / -1``, no left shift into a sign bit, no ``fmin(-0, +0)`` sign ambiguity).

Signed ``+ - * <<`` compute in the unsigned type of the same width and reinterpret the bits
(``as_T``), which is exactly two's-complement wrap-around; division and modulo leave the
dividend unchanged where C leaves the result undefined.
"""

from __future__ import annotations

from clpy.fuzz.nodes import Helper
from clpy.fuzz.types import FT, SCALARS


def _fn(name: str, params: str, ret: str, body: str) -> Helper:
    return Helper(name, f"@clpy.func\ndef {name}({params}) -> {ret}:\n{body}")


def wrap_op(t: FT, op: str) -> Helper:
    """``a op b`` in two's complement for a signed scalar or vector ``t`` (``op`` in + - *
    <<). The operation runs on the unsigned type, widened to 32 bits for char and short
    (C promotes them to int, where ``ushort * ushort`` could overflow)."""
    name = f"wrap_{_OPS[op]}_{t.cl_name}"
    ut = t.unsigned
    au, bu = f"clpy.as_{ut.cl_name}(a)", f"clpy.as_{ut.cl_name}(b)"
    if op == "<<":
        bu = f"({bu} & {ut.spelling}({t.bits - 1}))"
    if t.bits < 32 and not t.is_vector:
        expr = f"{ut.spelling}(uint32({au}) {op} uint32({bu}))"
    else:
        expr = f"{au} {op} {bu}"
    body = f"    return clpy.as_{t.cl_name}({expr})"
    return _fn(name, f"a: {t.spelling}, b: {t.spelling}", t.spelling, body)


_OPS = {"+": "add", "-": "sub", "*": "mul", "<<": "shl"}


def safe_div(t: FT, op: str) -> Helper:
    """Python's ``//`` or ``%`` (clpy's floor semantics), or ``a`` where C is undefined."""
    name = f"safe_{'div' if op == '//' else 'mod'}_{t.cl_name}"
    bad = "b == 0" + (
        f" or (a == {t.spelling}({t.min}) and b == {t.spelling}(-1))" if t.signed else ""
    )
    body = f"    if {bad}:\n        return a\n    return {t.spelling}(a {op} b)"
    return _fn(name, f"a: {t.spelling}, b: {t.spelling}", t.spelling, body)


def safe_neg(t: FT) -> Helper:
    name = f"safe_neg_{t.cl_name}"
    body = f"    if a == {t.spelling}({t.min}):\n        return a\n    return {t.spelling}(-a)"
    return _fn(name, f"a: {t.spelling}", t.spelling, body)


def safe_minmax(t: FT, which: str) -> Helper:
    """``fmin``/``fmax`` except for equal arguments, where the spec leaves the sign of a zero
    result open (C99 F.9.9.2): then the first argument."""
    name = f"safe_f{which}_{t.cl_name}"
    body = f"    if a == b:\n        return a\n    return clpy.f{which}(a, b)"
    return _fn(name, f"a: {t.spelling}, b: {t.spelling}", t.spelling, body)


def no_nan(t: FT) -> Helper:
    """``x``, or 0 for NaN: keeps NaN away from where its sign and payload show (``as_T``,
    ``signbit``, ``copysign``'s sign operand: not pinned by the spec) or where a device is
    known to get it wrong."""
    name = f"no_nan_{t.cl_name}"
    body = f"    if x != x:\n        return {t.spelling}(0.0)\n    return x"
    return _fn(name, f"x: {t.spelling}", t.spelling, body)


def scalar(cl: str) -> FT:
    return SCALARS[cl]
