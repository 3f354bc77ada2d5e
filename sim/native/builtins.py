"""C implementations of clpy's pure built-ins for the native engine (sim/native/).

``c_call(call, args)`` returns a C expression computing ``call`` (a typed ``CallBuiltin``)
from its already-generated argument expressions ``args`` (C text, each of its overload's
parameter type), or None when the native engine does not implement that built-in or overload
(the kernel then runs on the NumPy engine). The expressions use the ``static inline`` functions
of ``prelude.h``, which also defines every OpenCL scalar and vector type name (``uchar``,
``float4`` ...) as a C type. Every implementation gives the NumPy engine's bits
(``sim/builtins/``) for every input; anything that cannot (``half``, functions whose NumPy
routine is not the C library's on this machine: sim/native/builtins_math.py) is None.

A vector overload applies the scalar code lane by lane in a GNU statement expression that
evaluates each argument once (``({ float4 a = ...; float4 r = {0}; for (...) r[i] = ...; r; })``);
the padding lane of a 3-vector is 0.

Work-item queries, barriers, collectives and atomics are not here: the code generator handles
them, since they depend on how work-items are run.
"""

from __future__ import annotations

from collections.abc import Sequence

from clpy.ir.nodes import CallBuiltin
from clpy.types.core import PointerType, Type, VectorType, element_of
from clpy_sim.native import builtins_ops as ops
from clpy_sim.native.builtins_c import c_scalar, c_type, fresh, lanewise, scalar_cast


def c_call(call: CallBuiltin, args: Sequence[str]) -> str | None:
    """The C expression for ``call`` with argument expressions ``args``; None: not native.

    The argument of a pointer parameter (the last one of fract, modf, sincos, frexp and
    remquo, which write through it) is a C lvalue of the element it points to (``*p``), which
    the expression assigns once (sim/native/builtins_ptr.py)."""
    ov = call.overload
    types = [p.elem if isinstance(p, PointerType) else p for p in (*ov.params, ov.ret)]
    if any(c_type(t) is None for t in types) or len(args) != len(ov.params):
        return None
    return ops.generate(call.builtin, ov.params, ov.ret, list(args))


def c_cast(value: str, src: Type, dst: Type) -> str | None:
    """The C expression converting ``value`` (C text of type ``src``) to ``dst`` the way the
    NumPy engine's ``Cast`` does (sim/exprs.py, sim/ops.py), or None when not native.

    Scalars: to bool is ``!= 0`` (NaN is true); float to integer truncates, NaN gives 0 and
    out-of-range values saturate (``clpy_f2i_T``); everything else is C's conversion, which
    rounds to nearest and wraps as NumPy's ``astype`` does. A scalar to a vector converts the
    scalar and broadcasts it; a vector to a vector of as many lanes converts lane by lane.
    """
    dc, sc = c_type(dst), c_type(src)
    if dc is None or sc is None:
        return None
    if src is dst:
        return value
    de, se = element_of(dst), element_of(src)
    if isinstance(dst, VectorType):
        if isinstance(src, VectorType):
            if src.n != dst.n:
                return None
            return lanewise(dst, [src], [value], lambda a: scalar_cast(a[0], se, de))
        k = fresh([value])
        s = f"clpy_s{k}"
        lanes = ", ".join([s] * dst.n)
        return f"({{ {c_scalar(de)} {s} = {scalar_cast(value, se, de)}; ({dc}){{{lanes}}}; }})"
    if isinstance(src, VectorType):
        return None
    return scalar_cast(value, se, de)
