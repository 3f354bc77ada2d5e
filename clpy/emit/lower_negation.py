"""Signed integer negation spelled as a helper, for a device whose compiler gets it wrong.

NVIDIA's driver (580, H100; clpy.fuzz seed 310677) returns 32768 for
``short f(short a) { if (a == -32768) return a; return -(int)a; }`` at ``a == -32768``: a
value no ``short`` holds (with or without an explicit ``(short)`` cast; the value is right
without the guard). The likely mechanism is an optimizer that merges the two returns
(``-(short)-32768`` wraps to ``-32768`` in 16 bits, so the guard looks redundant) but keeps
the no-signed-wrap fact it learnt inside the guarded branch, and then drops the truncation.

Where the device's quirks list the type (``Target.info["lower_negation"]``, the type names;
``Target.info["negation_spelling"]``, one of ``SPELLINGS``; clpy/runtime/quirks.py) the
negation becomes a helper, ``clpy_neg_short(a)``, for ``(short)-(int)a`` (a char or short
negated and converted back, c_exprs ``e_Cast``) and for ``-a`` of an int or long. Every
spelling computes the two's-complement negation, ``MIN`` staying ``MIN`` (the low bits: what
the simulator does, and what OpenCL compilers do with C99 §6.3.1.3's implementation-defined
out-of-range conversion; OpenCL C 2.0 §6.2.3.3):

- ``volatile``: the narrowed result goes through a ``volatile`` private variable, which the
  optimizer cannot see through;
- ``sub_sat``: ``a == MIN ? a : sub_sat(0, a)`` (``sub_sat`` differs from the wrapped value
  only at ``MIN``, so neither the guard nor the function can be folded away);
scripts/gpu_fuzz_negation.py runs each on every OpenCL device, next to the raw forms; the
spelling in the unsigned type, ``as_short((ushort)(0u - (uint)as_ushort(a)))``, is one of those
forms and not offered here: on the H100 (driver 580) it still gave 32768 for ``short``.
"""

from __future__ import annotations

from clpy.types.core import ScalarType, Type

KIND = "neg:"  # helper kinds: "neg:<spelling>" with the type negated
SPELLINGS = ("volatile", "sub_sat")
NARROW = ("char", "short")  # negated in int and converted back


def negation_call(spelling: str, t: ScalarType, operand: str) -> tuple[str, tuple[str, Type]]:
    """The call text and the helper it needs (``(kind, type)`` for ``ExprEmitter.helpers``)."""
    if spelling not in SPELLINGS:
        raise ValueError(f"negation spelling {spelling!r} is not one of {SPELLINGS}")
    return f"clpy_neg_{t.cl_name}({operand})", (f"{KIND}{spelling}", t)


def _min_text(t: ScalarType) -> str:
    lo = -(2 ** (t.bits - 1))
    if t.bits == 64:
        return "(-9223372036854775807L - 1)"
    if t.bits == 32:
        return "(-2147483647 - 1)"
    return f"(({t.cl_name}){lo})"


def negation_helper_source(kind: str, t: Type) -> str:
    assert isinstance(t, ScalarType) and t.is_int and t.is_signed
    spelling = kind[len(KIND) :]
    tn = t.cl_name
    un = "u" + tn
    promoted = "int" if tn in NARROW else tn
    if spelling == "volatile":
        # convert_T, not a cast: NVIDIA narrows a difference from a constant 0 wrongly in
        # every plain conversion, a volatile one too (lower_narrow.py, seed 333251)
        body = f"volatile {tn} r = convert_{tn}(({promoted})0 - ({promoted})a);\n    return r;"
        if tn not in NARROW:  # int, long: negate in the unsigned type (no overflow)
            body = f"volatile {tn} r = as_{tn}(({un})0 - as_{un}(a));\n    return r;"
    elif spelling == "sub_sat":
        body = f"return a == {_min_text(t)} ? a : sub_sat(({tn})0, a);"
    else:
        raise ValueError(f"negation spelling {spelling!r} is not one of {SPELLINGS}")
    why = "    // two's-complement negation (NVIDIA folds a guarded one wrongly, seed 310677)\n"
    return f"{tn} clpy_neg_{tn}({tn} a) {{\n{why}    {body}\n}}"
