"""``mad_sat`` spelled out from the full product, for devices whose own is wrong.

OpenCL C 2.0 §6.13.3: ``mad_sat(a, b, c)`` is ``a * b + c`` saturated to the range of the
type. NVIDIA's driver (580, H100; clpy.fuzz seeds 200067, 200074, 200185, 200544, 200638,
200680, 200953, 201078, 201196, 201229) returns the wrapped value for ``long``/``ulong``:
``mad_sat(LONG_MIN, -1, LONG_MAX)`` is -1 instead of LONG_MAX. Where the device's quirks list
``mad_sat:long`` (``Target.info["lower_builtins"]``, clpy/runtime/quirks.py) the call becomes a
helper that builds the 128-bit value from ``mul_hi`` and the low product::

    long clpy_mad_sat_long(long a, long b, long c) {
        ulong lo = (ulong)a * (ulong)b, s = lo + (ulong)c;
        long hi = mul_hi(a, b) + (c < 0 ? -1 : 0) + (s < lo ? 1 : 0);
        return hi == ((long)s >> 63) ? (long)s : hi < 0 ? LONG_MIN : LONG_MAX;
    }

``hi:s`` is ``a * b + c`` exactly (``c`` sign-extended, plus the carry of the low half); it
fits in a ``long`` when ``hi`` is the sign extension of ``s``, and otherwise its sign picks the
bound. Vectors do the same lane-wise (comparisons give -1 for true, hence the signs).
Narrower types (should a quirk name them) compute in 64 bits and clamp.
"""

from __future__ import annotations

from clpy.emit.c_exprs import ExprEmitter
from clpy.emit.lower_convert import MACROS
from clpy.emit.targets import Target
from clpy.ir.nodes import CallBuiltin
from clpy.types.core import ScalarType, Type, element_of, lanes

KIND = "mad_sat"  # the helper kind (with the argument type)


def lower_mad_sat(ex: ExprEmitter, call: CallBuiltin, tgt: Target) -> str:
    t = call.type
    ex.helpers.add((KIND, t))
    return f"clpy_mad_sat_{t.cl_name}({', '.join(ex(a) for a in call.args)})"


def mad_sat_helper_source(t: Type) -> str:
    elem = element_of(t)
    assert isinstance(elem, ScalarType) and elem.is_int, t
    n = lanes(t)
    tn = t.cl_name
    u = tn if not elem.is_signed else f"u{tn}"
    head = f"{tn} clpy_mad_sat_{tn}({tn} a, {tn} b, {tn} c) {{\n"
    why = "    // a * b + c saturated (OpenCL C 2.0 §6.13.3), from the full 128-bit value\n"
    if elem.bits < 64:  # exact in 64 bits: |a * b + c| < 2**63 (2**64 unsigned)
        w = ("long" if elem.is_signed else "ulong") + (str(n) if n > 1 else "")
        we = w.rstrip("0123456789")
        lo, hi = MACROS[elem.cl_name]
        why = "    // a * b + c saturated (OpenCL C 2.0 §6.13.3), computed exactly in 64 bits\n"
        body = (
            f"    {w} v = convert_{w}(a) * convert_{w}(b) + convert_{w}(c);\n"
            f"    return convert_{tn}(clamp(v, ({we}){lo}, ({we}){hi}));"
        )
    elif n == 1 and not elem.is_signed:
        body = (
            "    ulong lo = a * b, s = lo + c;\n"
            "    return (mul_hi(a, b) != 0 || s < lo) ? ULONG_MAX : s;"
        )
    elif n == 1:
        body = (
            "    ulong lo = (ulong)a * (ulong)b, s = lo + (ulong)c;\n"
            "    long hi = mul_hi(a, b) + (c < 0 ? -1 : 0) + (s < lo ? 1 : 0);\n"
            "    return hi == ((long)s >> 63) ? (long)s : hi < 0 ? LONG_MIN : LONG_MAX;"
        )
    elif not elem.is_signed:
        body = (
            f"    {u} lo = a * b, s = lo + c;\n"
            f"    return select(s, ({tn})ULONG_MAX, (mul_hi(a, b) != 0) | (s < lo));"
        )
    else:
        body = (
            f"    {u} lo = as_{u}(a) * as_{u}(b), s = lo + as_{u}(c);\n"
            "    // comparisons are -1 when true: + (c < 0) sign-extends c, - (s < lo) carries\n"
            f"    {tn} hi = mul_hi(a, b) + (c < 0) - (s < lo), r = as_{tn}(s);\n"
            f"    {tn} bound = select(({tn})LONG_MAX, ({tn})LONG_MIN, hi);\n"
            "    return select(bound, r, hi == (r >> 63));"
        )
    return f"{head}{why}{body}\n}}"
