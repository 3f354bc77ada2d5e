"""Random typed expressions. ``ExprGen.expr(t, depth)`` returns an ``Expr`` of exactly type
``t`` whose value is defined by the OpenCL C spec for every input: signed arithmetic goes
through the wrap helpers, division through the safe helpers, float-to-integer conversions
saturate, indices are masked into their buffer, and float operations are those whose result
the spec pins (``+ - * /``, ``sqrt``, ``fma``, rounding functions, ``fmod``, ``copysign``,
``fdim``, conversions with explicit rounding: spec §7.4 table "ULP values", 0 ulp or
correctly rounded)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from clpy.fuzz import helpers as H
from clpy.fuzz.nodes import BOOL, Expr, Helper, leaf
from clpy.fuzz.types import FLOATS, FT, INT32, INTS, LANES, SCALARS, vec

T = TypeVar("T")

ROUNDINGS = ("rte", "rtz", "rtp", "rtn")
F_UNARY = ("floor", "ceil", "trunc", "rint", "round", "fabs")
F_BINARY = ("copysign", "fmod", "fdim", "remainder")
I_BINARY = ("add_sat", "sub_sat", "mul_hi", "hadd", "rhadd", "rotate")


@dataclass
class Scope:
    """Readable variables by type, and the user functions callable here."""

    vars: dict[FT, list[str]] = field(default_factory=dict)
    fields: dict[FT, list[str]] = field(default_factory=dict)  # "s0.a" of struct variables
    reads: dict[FT, list[str]] = field(default_factory=dict)  # read-only: "sf3(s2)"

    def add(self, t: FT, name: str) -> None:
        self.vars.setdefault(t, []).append(name)

    def copy(self) -> Scope:
        return Scope(
            {k: list(v) for k, v in self.vars.items()},
            {k: list(v) for k, v in self.fields.items()},
            {k: list(v) for k, v in self.reads.items()},
        )


@dataclass
class UserFunc:
    name: str
    params: tuple[FT, ...]
    ret: FT


class ExprGen:
    """Expression generation for one program (its random stream, its helpers)."""

    def __init__(
        self,
        rng: np.random.Generator,
        features: frozenset[str],
        add_helper: Callable[[Helper], str],
        inputs: dict[FT, tuple[str, int]],
    ) -> None:
        self.rng = rng
        self.features = features
        self.add_helper = add_helper
        self.inputs = inputs  # scalar type -> (buffer name, length: a power of two)
        self.funcs: list[UserFunc] = []
        self.scope = Scope()
        self.in_kernel = True  # work-item ids (lin, lid) are in scope

    # ------------------------------------------------------------------ choices
    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def pick(self, seq: Sequence[T]) -> T:
        return seq[int(self.rng.integers(0, len(seq)))]

    def scalar_types(self) -> list[FT]:
        ts = list(INTS)
        if "float" in self.features:
            ts.append(SCALARS["float"])
        if "double" in self.features:
            ts.append(SCALARS["double"])
        return ts

    def random_type(self, vector_p: float = 0.3) -> FT:
        t = self.pick(self.scalar_types())
        if "vector" in self.features and self.chance(vector_p):
            return vec(t, self.pick(LANES))
        return t

    # ------------------------------------------------------------------ leaves
    def const(self, t: FT) -> Expr:
        if t.is_vector:
            return Expr(t, f"{t.spelling}({{0}})", (self.const(t.elem),))
        if t == BOOL:
            return leaf(t, self.pick(("True", "False")))
        if t.is_float:
            v = self.pick((0.0, 1.0, -1.0, 0.5, 2.0, -3.25, 1e-3, 1e30, 7.0, 0.1, 1e-40))
            v = float(np.asarray(v, t.dtype))  # the value the type holds (0.1f, a subnormal)
            return leaf(t, f"{t.py}({v!r})")
        v = int(self.pick((0, 1, 2, 3, 7, 31, 33, 64, 255, t.max, t.min, t.max - 1, -1, -8)))
        if not t.signed and v < 0:
            v += 1 << t.bits
        v = min(max(v, t.min), t.max)
        return leaf(t, f"{t.py}({v})")

    def leaf(self, t: FT) -> Expr:
        names = (
            self.scope.vars.get(t, []) + self.scope.fields.get(t, []) + self.scope.reads.get(t, [])
        )
        if names and self.chance(0.75):
            return leaf(t, self.pick(names))
        if t == BOOL:
            return self.compare(0)
        return self.const(t)

    def index(self, length: int, depth: int) -> Expr:
        """An int32 expression in ``[0, length)`` (``length`` a power of two)."""
        base = self.expr(INT32, depth) if depth > 0 and self.chance(0.5) else leaf(INT32, "lin")
        return Expr(INT32, f"({{0}} & {length - 1})", (base,), keep=True)

    # ------------------------------------------------------------------ expressions
    def expr(self, t: FT, depth: int) -> Expr:
        if t == BOOL:
            return self.cond(depth)
        if depth <= 0 or self.chance(0.2):
            return self.leaf(t)
        makers: list[Callable[[FT, int], Expr | None]] = [self.arith, self.arith, self.select]
        if t.is_vector:
            makers += [self.vec_cons, self.vec_cons]
            if "swizzle" in self.features:
                makers += [self.swizzle, self.swizzle]
            if "convert" in self.features:
                makers.append(self.vec_convert)
            makers.append(self.vload)
        else:
            makers += [self.load, self.builtin]
            if "convert" in self.features:
                makers += [self.convert, self.reinterpret]
            if "vector" in self.features:
                makers.append(self.lane)
            if self.funcs:
                makers.append(self.call)
        for _ in range(4):
            e = self.pick(makers)(t, depth - 1)
            if e is not None:
                return e
        return self.leaf(t)

    def arith(self, t: FT, d: int) -> Expr | None:
        a, b = self.expr(t, d), self.expr(t, d)
        if t.is_float:
            ops = ["+", "-", "*"]
            if t.bits == 64 or "fdiv" in self.features:
                ops.append("/")
            op = self.pick(ops + ["neg"])
            if op == "neg":
                return Expr(t, "(-{0})", (a,))
            return Expr(t, f"({{0}} {op} {{1}})", (a, b))
        op = self.pick(("+", "-", "*", "&", "|", "^", "~", ">>", "<<", "//", "%", "neg"))
        small = t.bits < 32 and not t.is_vector
        wrap = (lambda s: f"{t.spelling}({s})") if small else (lambda s: s)
        if op in "&|^" and len(op) == 1:
            return Expr(t, wrap(f"({{0}} {op} {{1}})"), (a, b))
        if op == "~":
            return Expr(t, wrap("(~{0})"), (a,))
        if op == ">>":
            return Expr(t, wrap("({0} >> {1})"), (a, b))
        if op in ("+", "-", "*", "<<"):
            raw_ok = (
                (not t.signed and (t.bits >= 32 or t.is_vector))
                or (small and op in "+-" and op != "<<")
                or (small and op == "*" and not (t.bits == 16 and not t.signed))
            )
            if (
                raw_ok
                and op != "<<"
                or (op == "<<" and not t.signed and (t.bits >= 32 or t.is_vector))
            ):
                return Expr(t, wrap(f"({{0}} {op} {{1}})"), (a, b))
            name = self.add_helper(H.wrap_op(t, op))
            return Expr(t, f"{name}({{0}}, {{1}})", (a, b))
        if t.is_vector:
            return None  # no vector // %: per-lane safety would need a lane loop
        if op in ("//", "%"):
            name = self.add_helper(H.safe_div(t, op))
            return Expr(t, f"{name}({{0}}, {{1}})", (a, b))
        if t.signed:  # neg
            name = self.add_helper(H.safe_neg(t))
            return Expr(t, f"{name}({{0}})", (a,))
        return Expr(t, wrap("(-{0})"), (a,))

    def select(self, t: FT, d: int) -> Expr | None:
        a, b = self.expr(t, d), self.expr(t, d)
        if t.is_vector and self.chance(0.6):
            ct = self.pick([x for x in self.scalar_types() if x.bits == t.bits])
            x, y = self.expr(vec(ct, t.lanes), d), self.expr(vec(ct, t.lanes), d)
            op = self.pick(("<", "<=", ">", ">=", "==", "!="))
            return Expr(t, f"clpy.select({{0}}, {{1}}, ({{2}} {op} {{3}}))", (a, b, x, y))
        return Expr(t, "({1} if {0} else {2})", (self.cond(d), a, b))

    def builtin(self, t: FT, d: int) -> Expr | None:
        a, b, c = self.expr(t, d), self.expr(t, d), self.expr(t, d)
        if t.is_float:
            k = int(self.rng.integers(0, 6))
            if k == 0:
                fn = self.pick(F_UNARY)
                if fn in ("floor", "ceil", "trunc", "round") and "nan-round" not in self.features:
                    if t.is_vector:  # no lane-wise NaN guard for vectors
                        fn = "rint"
                    else:  # PoCL 3.0: garbage for a NaN it can fold (seed 800109)
                        a = Expr(t, f"{self.add_helper(H.no_nan(t))}({{0}})", (a,), keep=True)
                return Expr(t, f"clpy.{fn}({{0}})", (a,))
            if k == 1:
                fn = self.pick(F_BINARY)
                if fn == "copysign":  # the sign of a NaN is not pinned: copy a number's
                    if t.is_vector:
                        fn = "fmod"  # no lane-wise NaN guard for vectors
                    else:
                        b = Expr(t, f"{self.add_helper(H.no_nan(t))}({{0}})", (b,), keep=True)
                return Expr(t, f"clpy.{fn}({{0}}, {{1}})", (a, b))
            if k == 2:
                return Expr(t, "clpy.fma({0}, {1}, {2})", (a, b, c))
            if k == 3 and (t.bits == 64 or "fdiv" in self.features):
                return Expr(t, "clpy.sqrt({0})", (a,))
            name = self.add_helper(H.safe_minmax(t, self.pick(("min", "max"))))
            return Expr(t, f"{name}({{0}}, {{1}})", (a, b))
        k = int(self.rng.integers(0, 7))
        small = t.bits < 32
        if k == 0:
            return Expr(t, f"clpy.{self.pick(('clz', 'popcount'))}({{0}})", (a,))
        if k == 1:
            return Expr(t, f"clpy.{self.pick(I_BINARY)}({{0}}, {{1}})", (a, b))
        if k == 3:
            return Expr(t, "clpy.clamp({0}, min({1}, {2}), max({1}, {2}))", (a, b, c))
        if t.signed and "signed-abs" not in self.features and k in (4, 6):
            k = 2
        if k == 2:
            return Expr(t, f"{self.pick(('min', 'max'))}({{0}}, {{1}})", (a, b))
        if k == 4:
            return Expr(t, f"{t.py}(clpy.abs_diff({{0}}, {{1}}))", (a, b))
        if k == 5:
            return Expr(t, "clpy.mad_sat({0}, {1}, {2})", (a, b, c))
        return Expr(t, f"{t.py}(abs({{0}}))" if small or t.signed else "abs({0})", (a,))

    def load(self, t: FT, d: int) -> Expr | None:
        buf = self.inputs.get(t)
        if buf is None:
            return None
        return Expr(t, f"{buf[0]}[{{0}}]", (self.index(buf[1], d),))

    def vload(self, t: FT, d: int) -> Expr | None:
        buf = self.inputs.get(t.elem)
        if buf is None:
            return None
        step = 1 << (t.lanes - 1).bit_length()
        return Expr(t, f"clpy.vload{t.lanes}({{0}}, {buf[0]})", (self.index(buf[1] // step, d),))

    def convert(self, t: FT, d: int) -> Expr | None:
        s = self.pick([x for x in self.scalar_types() if x != t])
        a = self.expr(s, d)
        if t.is_float:
            if s.is_float:
                if t.bits > s.bits or self.chance(0.3):
                    return Expr(t, f"{t.py}({{0}})", (a,))
                return Expr(t, f"clpy.convert_{t.cl}_{self.pick(ROUNDINGS)}({{0}})", (a,))
            if self.chance(0.3):
                return Expr(t, f"{t.py}({{0}})", (a,))
            return Expr(t, f"clpy.convert_{t.cl}_{self.pick(ROUNDINGS)}({{0}})", (a,))
        if s.is_float:
            rnd = self.pick(ROUNDINGS + ("",))
            if "nan-sat" not in self.features:
                a = Expr(s, f"{self.add_helper(H.no_nan(s))}({{0}})", (a,), keep=True)
            return Expr(t, f"clpy.convert_{t.cl}_sat{'_' + rnd if rnd else ''}({{0}})", (a,))
        if self.chance(0.5):
            return Expr(t, f"clpy.convert_{t.cl}_sat({{0}})", (a,))
        return Expr(t, f"{t.py}({{0}})", (a,))  # C cast: modular (two's complement)

    def vec_convert(self, t: FT, d: int) -> Expr | None:
        s = vec(self.pick([x for x in self.scalar_types() if x != t.elem]), t.lanes)
        a = self.expr(s, d)
        rnd = self.pick(ROUNDINGS)
        if t.is_float:
            return Expr(t, f"clpy.convert_{t.cl_name}_{rnd}({{0}})", (a,))
        if s.is_float and "nan-sat" not in self.features:
            return None  # no lane-wise NaN guard for vectors
        return Expr(t, f"clpy.convert_{t.cl_name}_sat_{rnd}({{0}})", (a,))

    def reinterpret(self, t: FT, d: int) -> Expr | None:
        same = [x for x in self.scalar_types() if x.bits == t.bits and x != t]
        if not same:
            return None
        src = self.pick(same)
        a = self.expr(src, d)
        if src.is_float:  # NaN's sign and payload are not pinned: reinterpret numbers only
            a = Expr(src, f"{self.add_helper(H.no_nan(src))}({{0}})", (a,), keep=True)
        return Expr(t, f"clpy.as_{t.cl}({{0}})", (a,))

    def lane(self, t: FT, d: int) -> Expr | None:
        n = self.pick(LANES)
        k = int(self.rng.integers(0, n))
        return Expr(t, f"{{0}}.s{k:x}", (self.expr(vec(t, n), d),))

    def vec_cons(self, t: FT, d: int) -> Expr | None:
        if self.chance(0.3):
            return Expr(t, f"{t.spelling}({{0}})", (self.expr(t.elem, d),))
        if t.lanes == 4 and self.chance(0.4):
            a, b = self.expr(vec(t.elem, 2), d), self.expr(vec(t.elem, 2), d)
            return Expr(t, f"{t.spelling}({{0}}, {{1}})", (a, b))
        kids = tuple(self.expr(t.elem, min(d, 1)) for _ in range(t.lanes))
        holes = ", ".join(f"{{{i}}}" for i in range(t.lanes))
        return Expr(t, f"{t.spelling}({holes})", kids)

    def swizzle(self, t: FT, d: int) -> Expr | None:
        m = self.pick(LANES)
        src = self.expr(vec(t.elem, m), d)
        if m == 2 * t.lanes and m != 6 and self.chance(0.5):
            return Expr(t, f"{{0}}.{self.pick(('lo', 'hi', 'even', 'odd'))}", (src,))
        idx = [int(self.rng.integers(0, m)) for _ in range(t.lanes)]
        if m <= 4 and t.lanes <= 4 and self.chance(0.5):
            sw = "".join("xyzw"[i] for i in idx)
        else:
            sw = "s" + "".join(f"{i:x}" for i in idx)
        return Expr(t, f"{{0}}.{sw}", (src,))

    def call(self, t: FT, d: int) -> Expr | None:
        fs = [f for f in self.funcs if f.ret == t]
        if not fs:
            return None
        f = self.pick(fs)
        kids = tuple(self.expr(p, d) for p in f.params)
        holes = ", ".join(f"{{{i}}}" for i in range(len(kids)))
        return Expr(t, f"{f.name}({holes})", kids)

    # ------------------------------------------------------------------ conditions
    def compare(self, d: int) -> Expr:
        t = self.pick(self.scalar_types())
        op = self.pick(("<", "<=", ">", ">=", "==", "!="))
        return Expr(BOOL, f"({{0}} {op} {{1}})", (self.expr(t, d), self.expr(t, d)))

    def cond(self, d: int) -> Expr:
        k = int(self.rng.integers(0, 8))
        if d <= 0 or k < 3:
            return self.compare(max(d, 0))
        if k == 3 and self.in_kernel:
            m = self.pick((2, 3, 4, 7))
            return Expr(
                BOOL,
                f"({{0}} % {m} == {int(self.rng.integers(0, m))})",
                (leaf(INT32, self.pick(("lin", "lid"))),),
            )
        if k == 4:
            return Expr(
                BOOL,
                f"({{0}} {self.pick(('and', 'or'))} {{1}})",
                (self.cond(d - 1), self.cond(d - 1)),
            )
        if k == 5:
            return Expr(BOOL, "(not {0})", (self.cond(d - 1),))
        if k == 6 and "vector" in self.features:
            t = self.random_type(1.0)
            if not t.is_vector:
                return self.compare(d - 1)
            a, b = self.expr(t, d - 1), self.expr(t, d - 1)
            return Expr(BOOL, f"(clpy.{self.pick(('any', 'all'))}({{0}} < {{1}}) != 0)", (a, b))
        if "float" in self.features:
            f = self.pick(FLOATS if "double" in self.features else FLOATS[:1])
            fn = self.pick(("isnan", "isinf", "signbit", "isfinite"))
            x = self.expr(f, d - 1)
            if fn == "signbit":  # the sign of a NaN is not pinned (seed 200253: NVIDIA's is +)
                x = Expr(f, f"{self.add_helper(H.no_nan(f))}({{0}})", (x,), keep=True)
            return Expr(BOOL, f"(clpy.{fn}({{0}}) != 0)", (x,))
        return self.compare(d - 1)
