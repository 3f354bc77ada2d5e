"""Math functions (spec §1.13.2), including the ``half_`` and ``native_`` variants.

``gentype`` is float, double, half and their vectors (double needs cl_khr_fp64, half
cl_khr_fp16; the emitter adds the pragmas). Pointer outputs (``fract``, ``modf``, ``sincos``,
``frexp``, ``lgamma_r``, ``remquo``) take a generic pointer, which accepts a pointer into any
address space as in OpenCL C 2.0.
"""

from __future__ import annotations

from clpy.builtins.registry import Lowering, Overload, declare, floatn, like
from clpy.types import catalog as C
from clpy.types.core import AddressSpace, PointerType, Type, VectorType, element_of

_UNARY = {
    "acos": "Arc cosine.",
    "acosh": "Inverse hyperbolic cosine.",
    "acospi": "acos(x) / pi.",
    "asin": "Arc sine.",
    "asinh": "Inverse hyperbolic sine.",
    "asinpi": "asin(x) / pi.",
    "atan": "Arc tangent.",
    "atanh": "Hyperbolic arc tangent.",
    "atanpi": "atan(x) / pi.",
    "cbrt": "Cube root.",
    "ceil": "Round to integral value toward +infinity.",
    "cos": "Cosine (radians).",
    "cosh": "Hyperbolic cosine.",
    "cospi": "cos(pi * x).",
    "erfc": "Complementary error function.",
    "erf": "Error function.",
    "exp": "Base-e exponential.",
    "exp2": "Base-2 exponential.",
    "exp10": "Base-10 exponential.",
    "expm1": "exp(x) - 1, accurate near 0.",
    "fabs": "Absolute value of a floating-point number.",
    "floor": "Round to integral value toward -infinity.",
    "lgamma": "Log of |gamma(x)|.",
    "log": "Natural logarithm.",
    "log2": "Base-2 logarithm.",
    "log10": "Base-10 logarithm.",
    "log1p": "log(1 + x), accurate near 0.",
    "logb": "Exponent of x as a floating value.",
    "rint": "Round to integral value, ties to even.",
    "round": "Round to integral value, ties away from zero.",
    "rsqrt": "1 / sqrt(x).",
    "sin": "Sine (radians).",
    "sinh": "Hyperbolic sine.",
    "sinpi": "sin(pi * x).",
    "sqrt": "Square root.",
    "tan": "Tangent (radians).",
    "tanh": "Hyperbolic tangent.",
    "tanpi": "tan(pi * x).",
    "tgamma": "Gamma function.",
    "trunc": "Round to integral value toward zero.",
}
_BINARY = {
    "atan2": "Arc tangent of y / x.",
    "atan2pi": "atan2(y, x) / pi.",
    "copysign": "x with the sign of y.",
    "fdim": "x - y if x > y, else +0.",
    "fmod": "x - y * trunc(x / y) (C's fmod).",
    "hypot": "sqrt(x*x + y*y) without overflow.",
    "maxmag": "The argument with the larger magnitude.",
    "minmag": "The argument with the smaller magnitude.",
    "nextafter": "Next representable value after x toward y.",
    "pow": "x to the power y.",
    "powr": "x to the power y, x >= 0.",
    "remainder": "IEEE remainder x - n*y, n nearest.",
}
_FMINMAX = {
    "fmax": "The larger of x and y (a NaN argument is ignored; two NaNs give a NaN; "
    "equal arguments give y in the simulator, as the sign of equal zeros is open: C99 "
    "via spec footnote 29).",
    "fmin": "The smaller of x and y (a NaN argument is ignored; two NaNs give a NaN; "
    "equal arguments give y in the simulator, as the sign of equal zeros is open: C99 "
    "via spec footnote 29).",
}
_TERNARY = {
    "fma": "x * y + z rounded once.",
    "mad": "x * y + z, possibly faster and less accurate (spec §1.13.2).",
}
_FAST_UNARY = ("cos exp exp2 exp10 log log2 log10 recip rsqrt sin sqrt tan").split()
_FAST_BINARY = ("divide", "powr")

F = floatn()
F32 = floatn((C.float_,))


def _gen(t: Type) -> PointerType:
    return PointerType(t, AddressSpace.GENERIC)


# Spelled out with a NaN guard where a driver's is wrong (quirks: PoCL 3.0 folds ceil/floor/
# trunc/round of a constant NaN into garbage; clpy/emit/lower_nan.py).
_NAN_GUARDED = frozenset({"ceil", "floor", "trunc", "round"})
for _name, _doc in _UNARY.items():
    declare(
        _name,
        family="math",
        doc=_doc,
        overloads=[Overload((t,), t) for t in F],
        lowering=Lowering("nan_guard") if _name in _NAN_GUARDED else None,
    )
for _name, _doc in _BINARY.items():
    declare(_name, family="math", doc=_doc, overloads=[Overload((t, t), t) for t in F])
for _name, _doc in _FMINMAX.items():
    declare(
        _name,
        family="math",
        doc=_doc,
        overloads=[Overload((t, t), t) for t in F]
        + [Overload((t, t.elem), t) for t in F if isinstance(t, VectorType)],
    )
for _name, _doc in _TERNARY.items():
    declare(_name, family="math", doc=_doc, overloads=[Overload((t, t, t), t) for t in F])

declare(
    "fract",
    family="math",
    overloads=[Overload((t, _gen(t)), t) for t in F],
    writes_args=frozenset({1}),
    doc="fmin(x - floor(x), 0x1.fffffep-1f); floor(x) is stored through iptr.",
)
declare(
    "modf",
    family="math",
    overloads=[Overload((t, _gen(t)), t) for t in F],
    writes_args=frozenset({1}),
    doc="Fractional part of x; the integral part is stored through iptr.",
)
declare(
    "sincos",
    family="math",
    overloads=[Overload((t, _gen(t)), t) for t in F],
    writes_args=frozenset({1}),
    doc="sin(x); cos(x) is stored through cosval.",
)
declare(
    "frexp",
    family="math",
    overloads=[Overload((t, _gen(like(t, C.int_))), t) for t in F],
    writes_args=frozenset({1}),
    doc="Mantissa in [1/2, 1) of x; the exponent is stored through exp.",
)
declare(
    "lgamma_r",
    family="math",
    overloads=[Overload((t, _gen(like(t, C.int_))), t) for t in F],
    writes_args=frozenset({1}),
    doc="lgamma(x); the sign of gamma(x) is stored via signp.",
)
declare(
    "remquo",
    family="math",
    overloads=[Overload((t, t, _gen(like(t, C.int_))), t) for t in F],
    writes_args=frozenset({2}),
    doc="remainder(x, y); low bits of the quotient with its sign are stored through quo.",
)
declare(
    "ilogb",
    family="math",
    overloads=[Overload((t,), like(t, C.int_)) for t in F],
    doc="Exponent of x as an int.",
)
declare(
    "ldexp",
    family="math",
    overloads=[Overload((t, like(t, C.int_)), t) for t in F]
    + [Overload((t, C.int_), t) for t in F if isinstance(t, VectorType)],
    doc="x * 2**k.",
)
declare(
    "pown",
    family="math",
    overloads=[Overload((t, like(t, C.int_)), t) for t in F],
    doc="x to the integer power y.",
)
declare(
    "rootn",
    family="math",
    overloads=[Overload((t, like(t, C.int_)), t) for t in F],
    doc="x to the power 1/y.",
)
declare(
    "nan",
    family="math",
    overloads=[Overload((like(t, C.unsigned_of(element_of(t))),), t) for t in F],
    doc="A quiet NaN with ``nancode`` in its mantissa.",
)

for _name in _FAST_UNARY:
    for _prefix, _what in (
        ("half_", "computed with at least 11 bits of accuracy (≤ 8192 ulp, spec §2)"),
        ("native_", "with implementation-defined accuracy (spec §1.13.2)"),
    ):
        declare(
            _prefix + _name,
            family="math",
            overloads=[Overload((t,), t) for t in F32],
            doc=f"{_name}(x) {_what}.",
        )
for _name in _FAST_BINARY:
    for _prefix, _what in (
        ("half_", "with at least 11 bits of accuracy"),
        ("native_", "with implementation-defined accuracy"),
    ):
        declare(
            _prefix + _name,
            family="math",
            overloads=[Overload((t, t), t) for t in F32],
            doc=f"{'x / y' if _name == 'divide' else 'powr(x, y)'} {_what}.",
        )
