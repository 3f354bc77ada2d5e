"""Work-item loops without per-element index clamps, and split at a condition on the local id
(the native engine's code generator, sim/native/cgen_group.py opens and closes the loops).

Every element index of the generated C goes through ``clpy_ix`` (out of its memory: element
0, as the NumPy engine does with checks off), which keeps a region's loop over work-items from
becoming plain vector loads and stores. Where an index is an affine function of the work-item
``wi`` with coefficients the same for the whole loop (``tmp[lid + s]``, ``x[gid]``,
``out[cols * row + gid]`` with ``row`` group-uniform), the loop is generated twice: a fast
copy with the index used as is, taken when tests before the loop prove every such index (and
every integer operation computing it, which must not wrap) in range for the loop's first and
last work-item (an affine function is monotone in between), and the original loop otherwise.

A region with a top-level ``if`` whose condition compares such a function of ``wi`` (with
coefficient 1) with a value the same for the whole loop (``if lid < s``, ``if lid >= off``,
``if lid == 0``) runs, in its fast copy, as up to three loops over the ranges of ``wi`` where the
condition is false, true and false again, each with the branch known: a tree reduction's
level costs its active work-items only. The work-items still run in ascending order, each
one all of its statements, as in the original loop.

A value is modelled by ``Aff``: a way to write its exact (int64) value at a given ``wi`` in C,
its coefficient of ``wi`` when it is a known constant, and the tests (in post-order, so a
test only computes with values already proved in range) that no operation wraps.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from clpy.ir.nodes import Binary, CallBuiltin, Cast, Compare, Const, Expr, NamedConst, Unary, Var
from clpy.ir.nodes import VarRef as _VarRef
from clpy.types.core import ScalarType

if TYPE_CHECKING:  # pragma: no cover
    from clpy_sim.native.cgen import KernelGen

MAX_COEF = 1 << 16  # the largest |coefficient of wi| modelled (the tests' int64 stay exact)
MAX_BODY_LINES = 400  # a longer region keeps its one loop (the copies cost compile time)

HEAD = (
    "static inline int clpy_inr(int64_t a, int64_t b, int64_t lo, int64_t hi) {\n"
    "    return a >= lo && a <= hi && b >= lo && b <= hi;\n}\n"
    "static inline int64_t clpy_clamp(int64_t t, int64_t n) { return t < 0 ? 0 : t > n ? n : t; }\n"
    "#define CLPY_IXU(i, n) (i)\n#define CLPY_SPLIT0(c) 0\n#define CLPY_SPLIT1(c) 1"
)


At = Callable[[Mapping[str, str]], str]
Tests = tuple[tuple[At, str, str, frozenset[str]], ...]


@dataclass(frozen=True)
class Aff:
    """An integer value affine in each of the local ids ``x`` (``wi`` in a 1-D group) and
    ``y`` (2-D groups) and of the counters of loops of a few constant trips (``c:lo:hi:name``,
    taking the values lo to hi): ``at(env)`` its exact value where they have the values
    ``env`` (C int64 texts), ``a`` its coefficient of ``x`` (None: not a compile-time
    constant), ``deps`` the variables it depends on, ``tests`` (value, lowest, highest, deps):
    values that must be in range for ``at`` to be the C value. Affine in each variable, such
    a value takes its extremes at the corners of their ranges."""

    at: At
    a: int | None
    tests: Tests = ()
    deps: frozenset[str] = frozenset()


def _range(t: ScalarType) -> tuple[str, str]:
    if t.is_signed:
        return f"{-(1 << (t.bits - 1))}LL", f"{(1 << (t.bits - 1)) - 1}LL"
    hi = (1 << t.bits) - 1 if t.bits < 64 else (1 << 63) - 1
    return "0LL", f"{hi}LL"


def _int(t: object) -> ScalarType | None:
    return t if isinstance(t, ScalarType) and t.is_int else None


def _leaf(text: str) -> Aff:
    return Aff(lambda env: f"((int64_t)({text}))", 0)


def _fits(x: Aff, t: ScalarType) -> Aff:
    """``x`` converted to ``t``: exact when its value is in ``t``'s range."""
    lo, hi = _range(t)
    return Aff(x.at, x.a, (*x.tests, (x.at, lo, hi, x.deps)), x.deps)


class Affine:
    """The affine analysis of one kernel generator's expressions."""

    def __init__(self, gen: KernelGen) -> None:
        self.gen = gen

    def __call__(self, e: Expr) -> Aff | None:
        t = _int(e.type)
        if t is None:
            return None
        if isinstance(e, CallBuiltin):
            return self.query(e, t)  # (size_t values: from the group's ids, never past 2^63)
        if t.bits == 64 and not t.is_signed:
            return None
        if isinstance(e, (Const, NamedConst)):
            if not isinstance(e.value, int) or isinstance(e.value, bool):
                return None
            v = e.value & ((1 << t.bits) - 1)
            if t.is_signed and v >= 1 << (t.bits - 1):
                v -= 1 << t.bits
            if v == -(1 << 63):
                return None
            return Aff(lambda env: f"({v}LL)", 0)
        if isinstance(e, _VarRef):
            return self.var(e.var, e)
        if isinstance(e, Cast):
            st = _int(e.value.type)
            x = self(e.value) if st is not None else None
            if x is None:
                return None
            return _fits(x, t)
        if t.bits > 32:
            return None
        if isinstance(e, Unary) and e.op in ("-", "+"):
            x = self(e.operand)
            if x is None:
                return None
            if e.op == "+":
                return x
            neg = Aff(lambda env: f"(-{x.at(env)})", None if x.a is None else -x.a, x.tests, x.deps)
            return _fits(neg, t)
        if isinstance(e, Binary):
            return self.binary(e, t)
        return None

    def var(self, v: Var, e: Expr) -> Aff | None:
        g = self.gen
        p = g.params.get(v)
        if p is not None and p[0] == "value":
            return _leaf(p[1])
        if v in g.uni_vars:
            return _leaf(g.expr(e))
        span = g.const_loops.get(v) or g.counter_alias.get(v)
        if span is not None:  # (a loop counter: a variable of its own, lo to hi)
            name = f"c:{span[0]}:{span[1]}:{g.cname(v)}"
            return Aff(lambda env: f"((int64_t)({env[name]}))", 0, (), frozenset([name]))
        init = g.aff_defs.get(v)
        if init is None or v not in g.aff_known:
            return None
        x = self(init)
        vt = _int(v.type)
        if x is None or vt is None:
            return None
        return x if init.type == v.type else _fits(x, vt)

    def query(self, e: CallBuiltin, t: ScalarType) -> Aff | None:
        g = self.gen
        b = e.builtin
        if not b.index or not all(isinstance(a, Const) for a in e.args):
            return None
        d = int(e.args[0].value) if e.args else 0  # type: ignore[attr-defined]
        name = b.name
        dims = g.geom.dims
        flat = g.geom.local[1] == 1 and g.geom.local[2] == 1  # (wi is the local id 0)
        if name in ("get_local_id", "get_global_id") and d >= dims:
            return _leaf("0")
        wi_based = {"get_local_id", "get_global_id", "get_local_linear_id", "get_global_linear_id"}
        if name not in wi_based:
            return _leaf(g.expr(e))  # (one value per group)
        if g.geom.wg > 1 << 15:
            return None
        two = g.geom.dims == 2 and g.geom.local[2] == 1 and not flat  # (nested loops: y, x)
        if not (flat or two) or d > 1 or (name == "get_global_linear_id" and not flat):
            return None
        xs = frozenset("x")
        if name == "get_local_linear_id" or (name == "get_global_linear_id" and flat):
            base = "0" if name == "get_local_linear_id" else "clpy_g[0] * L0"
            if two:
                xy = frozenset("xy")
                return Aff(lambda env: f"((int64_t)({env['y']}) * L0 + {env['x']})", 1, (), xy)
            r = Aff(lambda env: _plus(base, env["x"]), 1, (), xs)
            return r if base == "0" else _fits(r, t)
        if d == 1:  # (2-D: the row)
            base = "0" if name == "get_local_id" else "clpy_g[1] * L1 + N[7]"
            r = Aff(lambda env: _plus(base, env["y"]), 0, (),
                    frozenset("y"))  # fmt: skip
        else:
            base = "0" if name == "get_local_id" else "clpy_g[0] * L0 + N[6]"
            r = Aff(lambda env: _plus(base, env["x"]), 1, (), xs)
        if base == "0" and (t.bits > 16 or (t.bits == 16 and not t.is_signed)):
            return r  # (a local id: below WG, a few thousand)
        return _fits(r, t) if t.bits < 64 else r

    def binary(self, e: Binary, t: ScalarType) -> Aff | None:
        op = e.op
        if op not in ("+", "-", "*"):
            return None
        x, y = self(e.left), self(e.right)
        if x is None or y is None:
            return None
        tests = (*x.tests, *y.tests)
        deps = x.deps | y.deps
        if len(deps) > 4:
            return None  # (the tests' corners: 2 per variable)
        if op in ("+", "-"):
            s = None if x.a is None or y.a is None else (x.a + y.a if op == "+" else x.a - y.a)
            at: At = lambda env: f"({x.at(env)} {op} {y.at(env)})"  # noqa: E731
            return _fits(Aff(at, s, tests, deps), t)
        # a product: one factor the same for the whole loop, the result a signed type of at most
        # 32 bits (its operands then at most 2^31 in magnitude: the int64 product is exact)
        if not t.is_signed or (x.deps & y.deps):
            return None  # (a product of two factors varying with one id is not affine in it)
        if x.a == 0 and y.a == 0:
            a: int | None = 0
        else:
            k, c = (x, e.right) if y.a == 0 else (y, e.left)
            if isinstance(c, Const) and isinstance(c.value, int) and k.a is not None:
                a = k.a * int(c.value)
            else:
                a = None
        if a is not None and abs(a) > MAX_COEF:
            return None
        at = lambda env: f"({x.at(env)} * {y.at(env)})"  # noqa: E731
        return _fits(Aff(at, a, tests, deps), t)


@dataclass
class Split:
    """A region's ``if`` on ``x``: the condition is true for ``x`` in [lo, hi) (C texts)
    when ``inside`` is "then", false there when it is "else"; ``tests`` make it exact."""

    lo: str
    hi: str
    inside: str
    tests: Tests


_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


def split_of(an: Affine, cond: Expr) -> Split | None:
    """The ranges of ``x`` where ``cond`` (``X op U``, X with coefficient 1 and no other id,
    U the same for the whole loop) holds; None when it is not of that form."""
    if not isinstance(cond, Compare) or cond.op not in _FLIP:
        return None
    lt, rt = _int(cond.left.type), _int(cond.right.type)
    if lt is None or rt is None or lt.bits > 32 or rt.bits > 32:
        return None
    x, u = an(cond.left), an(cond.right)
    if x is None or u is None:
        return None
    op = cond.op
    if x.a == 0 and u.a == 1:
        x, u, op = u, x, _FLIP[op]
    if x.a != 1 or u.deps or x.deps != frozenset("x"):
        return None
    n = "L0" if _two(an) else "WG"
    zero = {"x": "0", "y": "0"}
    t = f"({u.at(zero)} - {x.at(zero)})"  # cond <=> x op t
    lo, hi, inside = {
        "<": ("0", f"clpy_clamp({t}, {n})", "then"),
        "<=": ("0", f"clpy_clamp({t} + 1, {n})", "then"),
        ">": (f"clpy_clamp({t} + 1, {n})", n, "then"),
        ">=": (f"clpy_clamp({t}, {n})", n, "then"),
        "==": (f"clpy_clamp({t}, {n})", f"clpy_clamp({t} + 1, {n})", "then"),
        "!=": (f"clpy_clamp({t}, {n})", f"clpy_clamp({t} + 1, {n})", "else"),
    }[op]
    return Split(lo, hi, inside, (*x.tests, *u.tests))


def _two(an: Affine) -> bool:
    """Whether the region loops of ``an``'s kernel are nested: rows ``y``, columns ``x``."""
    g = an.gen.geom
    return g.dims == 2 and g.local[2] == 1 and g.local[1] > 1


@dataclass
class Plan:
    """What one region's fast copies need: the index tests of each site ("all": outside the
    split ``if``; "in"/"out": in its branch taken inside/outside [lo, hi)), and the split."""

    two: bool = False  # (2-D groups: rows y of L0 work-items x)
    sites: list[tuple[str, Tests]] = field(default_factory=list)
    split: Split | None = None
    domain: str = "all"

    def site(self, x: Aff, n: str) -> int:
        last = f"((int64_t)({n}) - 1)"
        self.sites.append((self.domain, (*x.tests, (x.at, "0LL", last, x.deps))))
        return len(self.sites) - 1


def _tests(tests: Tests, lo: str, hi: str, two: bool) -> str:
    """Every value of ``tests`` in its range at the corners of [lo, hi) x the rows x the
    counters' ranges."""
    if not tests:
        return "1"
    last = f"(({hi}) - 1)"
    out = []
    for f, a, b, deps in tests:
        others: list[list[tuple[str, str]]] = [[("y", "0")]]
        if two and "y" in deps:
            others = [[("y", "0")], [("y", "(L1 - 1)")]]
        for d in sorted(deps - {"x", "y"}):
            _, clo, chi, _ = d.split(":", 3)
            others = [[*o, (d, v)] for o in others for v in dict.fromkeys((clo, chi))]
        for o in others:
            env = dict(o)
            out.append(f"clpy_inr({f({**env, 'x': lo})}, {f({**env, 'x': last})}, {a}, {b})")
    return " && ".join(out)


def _plus(base: str, v: str) -> str:
    return v if base == "0" else f"((int64_t)({base}) + {v})"


_SITE = re.compile(r"\bclpy_hx\d+\(")


def plain(line: str) -> str:
    """A line of a region kept as one loop: its sites' clamps and its split condition back."""
    return _SITE.sub("clpy_ix(", line).replace("CLPY_SPLIT(", "(")


def assemble(plan: Plan, body: list[str], region: int) -> list[str] | None:
    """The region's loops for ``body`` (the statements of its loop over work-items, indented
    one level), or None when its one plain loop is best (nothing to gain, or too long)."""
    if (not plan.sites and plan.split is None) or len(body) > MAX_BODY_LINES:
        return None
    if plan.split is None:
        # (the copy pays where it takes the clamps off most indices; with most of them left,
        # like convsep's, whose indices vary with loop counters, the loop stays as it was)
        left = sum(line.count("clpy_ix(") for line in body)
        if left > len(plan.sites):
            return None
    label = re.compile(rf"\bclpy_nx{region}\b")
    two = plan.two
    pad = "            " if two else "        "

    def copy(k: str | None, split: str | None) -> list[str]:
        """The body: fast (``k`` names the copy's label; ``split``: the split condition's
        value there) or, for ``k`` None, the original."""
        out = []
        for line in body:
            if k is None:
                s = plain(line)
                out.append(s if s.startswith("#") else "        " + s)
                continue
            s = _SITE.sub("CLPY_IXU(", line).replace("CLPY_SPLIT(", f"CLPY_SPLIT{split}(")
            s = label.sub(f"clpy_nx{region}_{k}", s)
            if two:  # (cgen_builtins.local_id's spellings for 2-D groups)
                s = s.replace("(wi % L0)", "clpy_lx").replace("(wi / L0)", "clpy_ly")
            out.append(s if s.startswith("#") else pad + s)
        return out

    sp = plan.split
    n = "L0" if two else "WG"
    conds: list[str] = []
    lines: list[str] = ["{"]
    if sp is not None:
        conds.append(_tests(sp.tests, "0", n, two))
        lines.append(f"    const int64_t clpy_lo = {sp.lo}, clpy_hi = {sp.hi};")
        ranges = [("0", "clpy_lo", "out"), ("clpy_lo", "clpy_hi", "in"), ("clpy_hi", n, "out")]
        if sp.lo == "0":
            ranges = ranges[1:]
        if sp.hi == n:
            ranges = ranges[:-1]
    else:
        ranges = [("0", n, "all")]
    for lo, hi, dom in ranges:
        tests = tuple(t for d, ts in plan.sites if d in ("all", dom) for t in ts)
        if tests:
            conds.append(f"({lo} >= {hi} || ({_tests(tests, lo, hi, two)}))")
    lines.append(f"    if ({' && '.join(c for c in conds if c != '1') or '1'}) {{")
    if two:
        lines.append("        for (int64_t clpy_ly = 0; clpy_ly < L1; clpy_ly++) {")
    for i, (lo, hi, dom) in enumerate(ranges):
        split = None if sp is None else "1" if (dom == "in") == (sp.inside == "then") else "0"
        if two:
            lines.append(f"            for (int64_t clpy_lx = {lo}; clpy_lx < {hi}; clpy_lx++) {{")
            lines.append("                const int64_t wi = clpy_ly * L0 + clpy_lx;")
            lines += [*copy(str(i), split), "            }"]
        else:
            lines.append(f"        for (int64_t wi = {lo}; wi < {hi}; wi++) {{")
            lines += [*copy(str(i), split), "        }"]
    if two:
        lines.append("        }")
    lines.append("    } else {")
    lines += ["        for (int64_t wi = 0; wi < WG; wi++) {", *copy(None, None), "        }"]
    lines += ["    }", "}"]
    return lines
