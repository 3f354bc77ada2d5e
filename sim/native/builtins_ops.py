"""C text of each pure built-in for the native engine (sim/native/builtins.py ``c_call``).

Most built-ins are lane-wise: ``_LANE[name](pe, re, a)`` gives the C text of one lane from
the element types ``pe`` of the parameters, the result element type ``re`` and the lanes' C
texts ``a`` (or None: not native), and vector overloads repeat it over the lanes
(``builtins_c.lanewise``). The rest see the whole values: ``_WHOLE`` (relational, select,
any/all, geometric, shuffles: builtins_vec.py), the conversions ``convert_T``/``as_T``
(builtins_vec.py) and the built-ins writing through a pointer (builtins_ptr.py). The C
semantics are those of the NumPy engine's implementation named in each comment
(sim/builtins/*.py); functions in the prelude are ``clpy_<name>_<type>`` (integers) and
``clpy_m_<name>`` (math in double, the float overloads round it once, as NumPy does).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from clpy.builtins.registry import Builtin
from clpy.types.core import ScalarType, Type, VectorType, element_of
from clpy_sim.native import builtins_c as B
from clpy_sim.native import builtins_math as M
from clpy_sim.native import builtins_ptr as P
from clpy_sim.native import builtins_vec as V

LaneGen = Callable[[list[ScalarType], ScalarType, list[str]], "str | None"]
WholeGen = Callable[[Sequence[Type], Type, list[str]], "str | None"]


def generate(b: Builtin, params: Sequence[Type], ret: Type, args: list[str]) -> str | None:
    """C text of the call of ``b`` (overload ``params -> ret``) on ``args``, or None."""
    conv = b.conversion
    if conv is not None:
        if conv.reinterpret:
            return V.reinterpret(params[0], ret, args[0])
        return V.convert(params[0], ret, args[0], conv.sat, conv.rounding)
    if b.name in P.PTR_NAMES:
        return P.pointer_call(b.name, params, ret, args)
    whole = _WHOLE.get(b.name)
    if whole is not None:
        return whole(params, ret, args)
    gen = _LANE.get(b.name)
    if gen is None:
        return None
    pe = [element_of(p) for p in params]
    re = element_of(ret)
    if gen(pe, re, [f"x{j}" for j in range(len(args))]) is None:
        return None
    if not isinstance(ret, VectorType):
        return B.bound(params, args, lambda a: gen(pe, re, a) or "")
    return B.lanewise(ret, params, args, lambda lanes: gen(pe, re, lanes) or "")


def _s(t: ScalarType) -> str:
    name = B.c_scalar(t)
    assert name is not None
    return name


def _f(t: ScalarType) -> str:
    """The suffix of a float function in the prelude: ``f`` (float) or ``d`` (double)."""
    return "f" if t.bits == 32 else "d"


# ----------------------------------------------------------------------------- integer


def _int_fn(name: str) -> LaneGen:
    """``clpy_<name>_<T>`` of the prelude for integer T (sim/builtins/integer.py, common.py)."""

    def gen(pe: list[ScalarType], re: ScalarType, a: list[str]) -> str | None:
        if pe[0].is_float:
            return None
        return f"clpy_{name}_{_s(pe[0])}({', '.join(a)})"

    return gen


def _mul24(pe: list[ScalarType], re: ScalarType, a: list[str]) -> str:
    # integer.py _mul24 / _mad24: the wrapped product (and sum) in the 32-bit type
    t = _s(re)
    prod = f"({t})(({t})({a[0]}) * ({t})({a[1]}))"
    return prod if len(a) == 2 else f"({t})({prod} + ({t})({a[2]}))"


def _upsample(pe: list[ScalarType], re: ScalarType, a: list[str]) -> str:
    # integer.py _upsample: hi widened (sign kept) shifted up, or'ed with the unsigned lo
    t = _s(re)
    ut = "u" + t.lstrip("u")
    lo_u = "u" + _s(pe[1]).lstrip("u")
    return f"({t})((({ut})({t})({a[0]}) << {pe[1].bits}) | ({ut})({lo_u})({a[1]}))"


# ----------------------------------------------------------------------------- common


def _minmax(name: str) -> LaneGen:
    """min, max, clamp: sim/builtins/common.py ``fmin``/``fmax`` in the argument's precision
    for floats (the prelude's clpy_fmin_f|d: NaN ignored, two NaNs give x, equal arguments
    y), np.minimum/np.maximum for integers."""

    def gen(pe: list[ScalarType], re: ScalarType, a: list[str]) -> str:
        if not re.is_float:
            return f"clpy_{name}_{_s(re)}({', '.join(a)})"
        f = _f(re)
        if name == "clamp":
            return f"clpy_fmin_{f}(clpy_fmax_{f}({a[0]}, {a[1]}), {a[2]})"
        return f"clpy_f{name}_{f}({a[0]}, {a[1]})"

    return gen


def _own(name: str) -> LaneGen:
    """A float function NumPy computes in the argument's precision: ``clpy_<name>_f|d``."""

    def gen(pe: list[ScalarType], re: ScalarType, a: list[str]) -> str | None:
        if not re.is_float:
            return None
        return f"clpy_{name}_{_f(re)}({', '.join(a)})"

    return gen


def _step(pe: list[ScalarType], re: ScalarType, a: list[str]) -> str:
    # common.py _step: 0.0 where x < edge (compared in double: the same as in float)
    return f"(({a[1]}) < ({a[0]}) ? ({_s(re)})0 : ({_s(re)})1)"


# ----------------------------------------------------------------------------- relational


def _bitselect(pe: list[ScalarType], re: ScalarType, a: list[str]) -> str:
    # relational.py _bitselect: (a & ~c) | (b & c) on the bits
    if not re.is_float:
        t = _s(re)
        return f"({t})((({a[0]}) & ~({a[2]})) | (({a[1]}) & ({a[2]})))"
    u, to, back = ("uint", "clpy_fbits", "clpy_bitsf")
    if re.bits == 64:
        u, to, back = ("ulong", "clpy_dbits", "clpy_bitsd")
    x, y, c = (f"{to}({v})" for v in a)
    return f"{back}(({u})(({x} & ~{c}) | ({y} & {c})))"


# ----------------------------------------------------------------------------- tables

_INT_NAMES = (
    "clz ctz popcount add_sat sub_sat hadd rhadd mul_hi mad_hi rotate mad_sat abs abs_diff"
).split()

_LANE: dict[str, LaneGen] = {name: _int_fn(name) for name in _INT_NAMES}
_LANE.update(
    {
        "mul24": _mul24,
        "mad24": _mul24,
        "upsample": _upsample,
        "min": _minmax("min"),
        "max": _minmax("max"),
        "clamp": _minmax("clamp"),
        "mad": _own("mad"),
        "fma": _own("fma"),
        "mix": _own("mix"),
        "step": _step,
        "bitselect": _bitselect,
    }
)
_LANE.update(M.LANE)


def _rel(name: str) -> WholeGen:
    return lambda params, ret, args: V.relational(name, params, ret, args)


_WHOLE: dict[str, WholeGen] = {name: _rel(name) for name in V.REL_NAMES}
_WHOLE.update(
    {
        "select": V.select,
        "any": V.any_all("any"),
        "all": V.any_all("all"),
        "shuffle": V.shuffle,
        "shuffle2": V.shuffle,
    }
)
for _g in "dot length distance normalize cross fast_length fast_distance fast_normalize".split():
    _WHOLE[_g] = V.geometric(_g)
