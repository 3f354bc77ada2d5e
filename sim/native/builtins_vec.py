"""Relational, geometric, misc-vector and conversion built-ins of the native engine
(sim/native/builtins_ops.py): the ones whose C text depends on the vector shape (a
relational result is 1/0 for scalars, -1/0 per lane for vectors; geometric functions and
any/all reduce over the lanes; shuffles pick lanes) and ``convert_T``/``as_T``."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from clpy.types.core import ScalarType, Type, VectorType, element_of
from clpy_sim.native.builtins_c import bound, c_scalar, c_type, fresh, lanewise, scalar_cast

Cond = Callable[[list[str], str], str]  # lanes, "f"/"d" -> a C condition

# sim/builtins/relational.py: each test on NumPy arrays of the argument's own type
_REL: dict[str, tuple[int, Cond]] = {
    "isequal": (2, lambda a, f: f"({a[0]}) == ({a[1]})"),
    "isnotequal": (2, lambda a, f: f"({a[0]}) != ({a[1]})"),
    "isgreater": (2, lambda a, f: f"({a[0]}) > ({a[1]})"),
    "isgreaterequal": (2, lambda a, f: f"({a[0]}) >= ({a[1]})"),
    "isless": (2, lambda a, f: f"({a[0]}) < ({a[1]})"),
    "islessequal": (2, lambda a, f: f"({a[0]}) <= ({a[1]})"),
    "islessgreater": (2, lambda a, f: f"(({a[0]}) < ({a[1]}) || ({a[0]}) > ({a[1]}))"),
    "isfinite": (1, lambda a, f: f"isfinite({a[0]})"),
    "isinf": (1, lambda a, f: f"isinf({a[0]})"),
    "isnan": (1, lambda a, f: f"isnan({a[0]})"),
    "isnormal": (
        1,
        lambda a, f: (
            f"(isfinite({a[0]}) && fabs({a[0]}) >= {'FLT_MIN' if f == 'f' else 'DBL_MIN'})"
        ),
    ),
    "signbit": (1, lambda a, f: f"(signbit({a[0]}) != 0)"),
    "isordered": (2, lambda a, f: f"!(isnan({a[0]}) || isnan({a[1]}))"),
    "isunordered": (2, lambda a, f: f"(isnan({a[0]}) || isnan({a[1]}))"),
}


REL_NAMES = tuple(_REL)


def relational(name: str, params: Sequence[Type], ret: Type, args: list[str]) -> str | None:
    n, cond = _REL[name]
    e = element_of(params[0])
    if not e.is_float:
        return None
    f = "f" if e.bits == 32 else "d"
    if isinstance(ret, VectorType):
        rt = c_scalar(ret.elem)
        return lanewise(ret, params, args, lambda a: f"({rt})-(({cond(a, f)}) != 0)")
    return bound(params, args, lambda a: f"(int)(({cond(a, f)}) != 0)")


def _msb(t: ScalarType, x: str) -> str:
    return f"(({x}) < 0)" if t.is_signed else f"((({x}) >> {t.bits - 1}) != 0)"


def select(params: Sequence[Type], ret: Type, args: list[str]) -> str | None:
    # relational.py _select: c != 0 for scalars, the most significant bit of each lane
    if isinstance(ret, VectorType):
        m = element_of(params[2])
        return lanewise(ret, params, args, lambda a: f"({_msb(m, a[2])} ? {a[1]} : {a[0]})")
    return bound(params, args, lambda a: f"(({a[2]}) != 0 ? {a[1]} : {a[0]})")


def any_all(name: str) -> Callable[[Sequence[Type], Type, list[str]], str | None]:
    # relational.py _any/_all: the most significant bit of some/every lane, as int 1/0
    def gen(params: Sequence[Type], ret: Type, args: list[str]) -> str | None:
        p = params[0]
        e = element_of(p)
        if not isinstance(p, VectorType):
            return f"(int){_msb(e, args[0])}"
        join = " || " if name == "any" else " && "
        return bound(
            params,
            args,
            lambda a: f"(int)({join.join(_msb(e, f'{a[0]}[{i}]') for i in range(p.n))})",
        )

    return gen


# ----------------------------------------------------------------------------- geometric


def _lanes_of(t: Type, x: str) -> list[str]:
    return [f"{x}[{i}]" for i in range(t.n)] if isinstance(t, VectorType) else [x]


def _sum(terms: list[str]) -> str:
    # NumPy's sum over the component axis: +0.0 then each term, left to right (first NaN
    # operand wins, as in its SIMD add)
    s = "0.0"
    for t in terms:
        s = f"clpy_add_d({s}, {t})"
    return s


def geometric(name: str) -> Callable[[Sequence[Type], Type, list[str]], str | None]:
    """sim/builtins/geometric.py: in double, rounded once (cross: in the element type)."""

    def gen(params: Sequence[Type], ret: Type, args: list[str]) -> str | None:
        e = element_of(params[0])
        if not e.is_float:
            return None
        if name == "cross":
            return _cross(params, ret, args)
        if name in ("normalize", "fast_normalize"):
            return _normalize(params, ret, args)
        return _metric(name, params, ret, args)

    return gen


def _wide(t: Type, x: str) -> list[str]:
    """The lanes of ``x`` (of type ``t``) in double as NumPy widens them (sNaN quieted)."""
    w = "clpy_wf" if element_of(t).bits == 32 else ""
    return [f"{w}({v})" for v in _lanes_of(t, x)]


def _cross(params: Sequence[Type], ret: Type, args: list[str]) -> str:
    assert isinstance(ret, VectorType)
    f = "f" if ret.elem.bits == 32 else "d"

    def body(a: list[str]) -> str:
        x, y = _lanes_of(params[0], a[0]), _lanes_of(params[1], a[1])

        def det(i: int, j: int) -> str:
            return f"clpy_sub_{f}(clpy_mul_{f}({x[i]}, {y[j]}), clpy_mul_{f}({x[j]}, {y[i]}))"

        c = [det(1, 2), det(2, 0), det(0, 1)]
        return f"({c_type(ret)}){{{', '.join(c + ['0'] * (ret.n - 3))}}}"

    return bound(params, args, body)


def _metric(name: str, params: Sequence[Type], ret: Type, args: list[str]) -> str:
    rt = _cs(element_of(ret))

    def body(a: list[str]) -> str:
        x = _wide(params[0], a[0])
        if name in ("dot", "distance", "fast_distance"):
            y = _wide(params[1], a[1])
            if name == "dot":
                return f"({rt}){_sum([f'clpy_mul_d({p}, {q})' for p, q in zip(x, y)])}"
            x = [f"clpy_sub_d({p}, {q})" for p, q in zip(x, y)]
        return f"({rt})sqrt({_sum([f'{p} * {p}' for p in x])})"

    return bound(params, args, body)


def _normalize(params: Sequence[Type], ret: Type, args: list[str]) -> str:
    rt = _cs(element_of(ret))
    nn = f"clpy_n{fresh(args)}"

    def body(a: list[str]) -> str:
        x = _wide(params[0], a[0])
        n2 = f"double {nn} = sqrt({_sum([f'{p} * {p}' for p in x])})"
        lanes = [f"({rt})({nn} == 0 ? {p} : clpy_div_d({p}, {nn}))" for p in x]
        if not isinstance(ret, VectorType):
            return f"{n2}; {lanes[0]}"
        return f"{n2}; ({c_type(ret)}){{{', '.join(lanes)}}}"

    return _block(params, args, body)


def _cs(t: ScalarType) -> str:
    name = c_scalar(t)
    assert name is not None
    return name


def _block(params: Sequence[Type], args: list[str], body: Callable[[list[str]], str]) -> str:
    """A statement expression binding the arguments, then ``body`` (statements; last an
    expression)."""
    k = fresh(args)
    names = [f"clpy_g{k}_{j}" for j in range(len(args))]
    decls = " ".join(f"{c_type(p)} {n} = ({a});" for p, n, a in zip(params, names, args))
    return f"({{ {decls} {body(names)}; }})"


# ----------------------------------------------------------------------------- shuffles


def shuffle(params: Sequence[Type], ret: Type, args: list[str]) -> str | None:
    # vector.py _shuffle: lane mask[i] % m of x (of x then y for shuffle2, m lanes in all)
    assert isinstance(ret, VectorType)
    xs = params[:-1]
    n = xs[0].n if isinstance(xs[0], VectorType) else 1
    m = n * len(xs)

    def lane(a: list[str]) -> str:
        # an int index: GCC 12 -O2 miscompiled y[k - n] with a ulong k (wrong lanes read)
        k = f"((int)(({a[-1]}) % {m}))"
        if len(xs) == 1:
            return f"{a[0]}[{k}]"
        return f"({k} < {n} ? {a[0]}[{k}] : {a[1]}[{k} - {n}])"

    return lanewise(ret, params, args, lane, whole=len(xs))


# ----------------------------------------------------------------------------- conversions

_ROUND = {None: "trunc", "rtz": "trunc", "rte": "clpy_m_rint", "rtp": "ceil", "rtn": "floor"}


def _convert_lane(se: ScalarType, de: ScalarType, x: str, sat: bool, mode: str | None) -> str:
    """conversions.py convert_value on one lane."""
    dt = _cs(de)
    if de.is_float:
        if se.is_float:
            if se.bits <= de.bits or mode in (None, "rte"):
                return f"(({dt})({x}))"
            return f"clpy_d2f_{mode}({x})"
        if mode in (None, "rte") or se.bits <= 16 or (se.bits <= 32 and de.bits == 64):
            return f"(({dt})({x}))"
        return f"clpy_i2{dt[0]}_{mode}_{c_scalar(se)}({x})"
    if se.is_float:
        return f"clpy_f2i_{dt}({_ROUND[mode]}((double)({x})))"
    if not sat:
        return scalar_cast(x, se, de)
    return f"clpy_sat_{dt}((__int128)({x}))"


def convert(src: Type, dst: Type, a: str, sat: bool, mode: str | None) -> str | None:
    se, de = element_of(src), element_of(dst)
    if isinstance(dst, VectorType):
        return lanewise(dst, [src], [a], lambda x: _convert_lane(se, de, x[0], sat, mode))
    return _convert_lane(se, de, a, sat, mode)


def reinterpret(src: Type, dst: Type, a: str) -> str | None:
    # conversions.py _as: the bytes of src (a 3-vector's fourth lane zero) as dst
    sc, dc = c_type(src), c_type(dst)
    k = fresh([a])
    s, r = f"clpy_a{k}_0", f"clpy_r{k}"
    pad = f" {s}[3] = 0;" if isinstance(src, VectorType) and src.n == 3 else ""
    tail = f" {r}[3] = 0;" if isinstance(dst, VectorType) and dst.n == 3 else ""
    return f"({{ {sc} {s} = ({a});{pad} {dc} {r}; memcpy(&{r}, &{s}, sizeof {r});{tail} {r}; }})"
