"""Math built-ins that also write through a pointer (fract, modf, sincos, frexp, remquo) for
the native engine (sim/native/builtins.py ``c_call``).

Convention: the argument text of the pointer parameter is a C lvalue of the element it points
to (``*p``: the code generator's bounds-checked element access), which the C text assigns once.
The values are sim/builtins/math.py's (``_fract`` ...): computed in double, the stored value and
the result rounded once to their types. lgamma_r is not native (CPython's lgamma).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from clpy.types.core import PointerType, ScalarType, Type, VectorType, element_of
from clpy_sim.native.builtins_c import c_scalar, c_type, fresh
from clpy_sim.native.builtins_math import libm_agrees

# name -> (C of the double result, C of the double stored value) from the double x (and y)
_ONE_MINUS = {32: "0x1.fffffep-1", 64: "0x1.fffffffffffffp-1"}


def _pair(name: str, bits: int) -> tuple[str, str] | None:
    """C statements on ``x`` (and ``y``) double setting ``r`` (result) and ``s`` (stored)."""
    if name == "fract":
        return (
            f"double s = clpy_m_floor(x); double r = clpy_fmin_d(clpy_sub_d(x, s), "
            f"{_ONE_MINUS[bits]}); if (isinf(x)) r = copysign(0.0, x); if (x != x) r = x + x;",
            "s",
        )
    if name == "modf":
        return (
            "double s = clpy_m_trunc(x); double r = isinf(x) ? copysign(0.0, x) "
            ": clpy_sub_d(x, s); r = copysign(r, x);",
            "s",
        )
    if name == "sincos":
        if not (libm_agrees("sin") and libm_agrees("cos")):
            return None
        return "double s = clpy_m_cos(x); double r = clpy_m_sin(x);", "s"
    if name == "frexp":
        return "int s = 0; double r = frexp(x, &s); if (!isfinite(x)) s = 0;", "s"
    if name == "remquo":
        return (
            "double r = clpy_m_remainder(x, y); "
            "double q = clpy_m_rint(clpy_sub_d(x, r) / (y == 0 ? 1.0 : y)); "
            "if (!isfinite(q)) q = 0.0; "
            "long s = (long)fmod(fabs(q), 128.0) * (q < 0 ? -1 : 1);",
            "s",
        )
    return None


def pointer_call(name: str, params: Sequence[Type], ret: Type, args: list[str]) -> str | None:
    """C text of a pointer-writing math built-in, or None (not one, or not native)."""
    ptr = params[-1]
    if not isinstance(ptr, PointerType) or any(isinstance(p, PointerType) for p in params[:-1]):
        return None
    e = element_of(ret)
    pe = ptr.elem
    if not e.is_float or c_type(pe) is None or c_type(ret) is None:
        return None
    code = _pair(name, e.bits)
    if code is None:
        return None
    stmts, stored = code
    k = fresh(args)
    n = ret.n if isinstance(ret, VectorType) else 1
    vals = params[:-1]
    names = [f"clpy_a{k}_{j}" for j in range(len(vals))]
    decls = " ".join(f"{c_type(p)} {m} = ({a});" for p, m, a in zip(vals, names, args))
    r, s, i = f"clpy_r{k}", f"clpy_s{k}", f"clpy_i{k}"
    se = c_scalar(element_of(pe))
    wide = _widen(e)
    if n == 1:
        xs = [f"{wide}({m})" for m in names]
        body = f"{r} = ({c_scalar(e)})r; {s} = ({se}){stored};"
        head = f"{c_type(ret)} {r}; {c_type(pe)} {s};"
    else:
        xs = [f"{wide}({m}[{i}])" for m in names]
        body = f"{r}[{i}] = ({c_scalar(e)})r; {s}[{i}] = ({se}){stored};"
        head = f"{c_type(ret)} {r} = {{0}}; {c_type(pe)} {s} = {{0}};"
        body = f"for (int {i} = 0; {i} < {n}; ++{i}) {{ {_bind(xs)} {stmts} {body} }}"
        return f"({{ {decls} {head} {body} {args[-1]} = {s}; {r}; }})"
    return f"({{ {decls} {head} {{ {_bind(xs)} {stmts} {body} }} {args[-1]} = {s}; {r}; }})"


def _bind(xs: list[str]) -> str:
    return " ".join(f"double {v} = {x};" for v, x in zip("xy", xs))


def _widen(e: ScalarType) -> str:
    return "clpy_wf" if e.bits == 32 else ""


PTR_NAMES = frozenset({"fract", "modf", "sincos", "frexp", "remquo"})
PointerGen = Callable[[str, Sequence[Type], Type, list[str]], "str | None"]
