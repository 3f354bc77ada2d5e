"""Narrow-integer spellings for a device whose compiler gets ``short`` arithmetic wrong.

Two NVIDIA miscompilations (H100, driver 580; clpy.fuzz seeds 333251, 333693, 342146), each
measured over every ``char`` and ``short`` value, straight-line and in a loop, with
scripts/gpu_narrow_diag.py (benchmarks/results/nvidia_diag/narrow_h100_s6.json):

- **Narrowing conversion.** ``(short)(0 - x) > 0`` is true at ``x == -32768`` when the 0 is a
  constant (a literal, or a private variable holding one); from memory it is right. OpenCL C
  2.0 §6.2.3.3 leaves an out-of-range integer conversion to the implementation, which for
  every OpenCL compiler (the simulator too) keeps the low bits, as C99 §6.3.1.3's
  implementation-defined case: ``(short)32768 == -32768``. Wrong in every spelling that is
  a plain conversion: a cast, an implicit conversion into a ``short`` variable, a ``volatile``
  one, ``as_short((ushort)...)``, the subtraction in ``uint``, a helper function. Right:
  ``convert_short(...)``, sign extension spelled with shifts or masks, and a vector
  conversion. ``char`` is right in every spelling.

  Where ``Target.info["narrow_casts"]`` lists the type, a conversion of a computed wider
  integer to it is written ``convert_short(v)`` (§6.2.3: without ``_sat`` and for integers
  without a rounding mode, the same value as the cast), explicit or implicit (an assignment,
  an argument), and ``s op= x`` on a short variable becomes ``s = convert_short(s op x)``.

- **``min``/``max`` of ``short`` feeding a division.** ``safe_div(1, min((short)0, x))``
  (a floor division that returns the numerator for a zero divisor) was wrong for every
  ``x``, also with the ``min`` stored in a ``volatile`` first; ``max`` likewise. Right: the
  same ``min`` of the operands converted to ``int`` and back, and the ternary. ``char``
  right in every spelling.

  Seed 340201: ``max((uchar)254, convert_uchar_sat(lin))`` gave 255 on the H100, so the
  ``min``/``max`` of narrow types are not to be trusted there in general.

  Where ``Target.info["lower_builtins"]`` lists ``min:short``, ``max:uchar``, ``clamp:char``
  ..., the call is computed in the 32-bit type of the same signedness:
  ``(short)min((int)a, (int)b)``, ``(uchar)max((uint)a, (uint)b)`` (vectors:
  ``convert_int4``/``convert_short4``), the same value (§6.13.3: ``min`` and ``max`` return
  one of their arguments, ``clamp`` one of its arguments too).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from clpy.emit.lower_minmax import conditional, conditional_ok
from clpy.ir.nodes import Assign, CallBuiltin, Cast, Const, Expr
from clpy.types.core import ScalarType, VectorType, element_of

if TYPE_CHECKING:
    from clpy.emit.c_exprs import ExprEmitter
    from clpy.emit.targets import Target


def convert_spelled(e: Expr, info: Any) -> bool:
    """Whether the conversion ``e`` is written ``convert_T(...)`` on a target with ``info``:
    a scalar integer narrowed from a computed, wider integer to a type in
    ``info["narrow_casts"]``."""
    if not isinstance(e, Cast) or not isinstance(e.type, ScalarType):
        return False
    if e.type.cl_name not in info.get("narrow_casts", ()):
        return False
    src = e.value.type
    return (
        isinstance(src, ScalarType)
        and src.is_int
        and src.bits > e.type.bits
        and not isinstance(e.value, Const)
    )


def convert_spelled_update(s: Assign, info: Any) -> bool:
    """Whether the compound assignment ``s`` (``v op= x`` on a private variable) is written
    ``v = convert_T(v op x)`` on a target with ``info``: ``v``'s type is in
    ``info["narrow_casts"]`` and C computes ``v op x`` in a wider type (``s -= x`` on a short
    ``s`` holding a constant 0 is seed 333251's ``(short)(0 - x)``)."""
    t = s.target.type
    if not isinstance(t, ScalarType) or not t.is_int:
        return False
    return t.cl_name in info.get("narrow_casts", ()) and s.op in _WIDENING_OPS


_WIDENING_OPS = frozenset({"+", "-", "*", "<<", ">>", "&", "|", "^"})  # int after promotion


def lower_narrow_minmax(ex: ExprEmitter, call: CallBuiltin, tgt: Target) -> str:
    """``min``/``max``/``clamp`` computed in the 32-bit integer type and converted back; of
    32- and 64-bit integers, as conditional expressions where that is the same
    (clpy/emit/lower_minmax.py), else the built-in."""
    t = call.type
    name = call.builtin.cl_name
    elem = element_of(t)
    if elem.bits >= 32:
        if conditional_ok(call):
            return conditional(ex, call)
        return f"{name}({', '.join(ex(a) for a in call.args)})"
    wide = "int" if elem.is_signed else "uint"
    if isinstance(t, VectorType):
        vec = f"{wide}{t.n}"
        # a scalar second argument widens as a scalar: min(int4, int) exists too
        parts = [
            f"convert_{vec}({ex(a)})"
            if isinstance(a.type, VectorType)
            else f"({wide}){ex.operand(a)}"
            for a in call.args
        ]
        return f"convert_{t.cl_name}({name}({', '.join(parts)}))"
    args = ", ".join(f"({wide}){ex.operand(a)}" for a in call.args)
    return f"({t.cl_name}){name}({args})"
