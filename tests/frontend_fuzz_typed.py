"""Random, mostly well-typed kernels, as source text, for tests/test_frontend_fuzz.py (the
untyped AST generator is tests/frontend_fuzz_gen.py)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

# Typed generation: mostly well-typed kernels (so they reach typing, folding and emission), with
# a small chance at each expression of a value of the wrong kind.

TYPED_HEADER = (
    "@clpy.func\n"
    "def helper(a: float32, k: int32) -> float32:\n"
    "    return a * k\n"
    "\n"
    "\n"
    "@clpy.kernel\n"
    "def fuzzed(x: Global[float32], y: Global[int32], h: Global[float4], n: int32, f: float32,"
    " v: float4, u: uint32, d: float64):\n"
    "    gid = clpy.get_global_id(0)\n"
    "    lid = clpy.get_local_id(0)\n"
)
KINDS = ["int", "uint", "float", "double", "f4", "i4", "bool"]
START_ENV = {
    "n": "int",
    "gid": "int",
    "lid": "int",
    "f": "float",
    "v": "f4",
    "u": "uint",
    "d": "double",
}
POINTERS = {"x": "float", "y": "int", "h": "f4"}
INT_OPS = ["+", "-", "*", "//", "%", "&", "|", "^", "<<", ">>"]
FLOAT_OPS = ["+", "-", "*", "/", "**", "//", "%"]
VEC_OPS = ["+", "-", "*", "/"]
CMP = ["<", "<=", ">", ">=", "==", "!="]
SWIZ = ["x", "y", "z", "w", "s0", "s3"]
SWIZ4 = ["wzyx", "xxyy", "s0123", "zwxy"]
UNARY_F = [
    "clpy.sqrt",
    "math.sqrt",
    "clpy.native_exp",
    "clpy.fabs",
    "abs",
    "clpy.floor",
    "clpy.sin",
    "clpy.rsqrt",
    "clpy.log2",
]
BINARY_F = ["min", "max", "clpy.fmin", "clpy.pow", "clpy.atan2", "clpy.copysign", "clpy.fmod"]


class _Gen:
    """Builds source text (parsed back to an AST by the caller) from hypothesis draws."""

    def __init__(self, draw: Any, wrong_rate: int) -> None:
        self.draw = draw
        self.wrong_rate = wrong_rate
        self.fresh = 0
        self.lines: list[str] = []

    def pick(self, seq: list[Any]) -> Any:
        return self.draw(st.sampled_from(seq))

    def chance(self, percent: int) -> bool:
        return self.draw(st.integers(0, 99)) < percent

    # -- expressions
    def expr(self, kind: str, env: dict[str, str], depth: int) -> str:
        if self.chance(self.wrong_rate):
            kind = self.pick(KINDS)
        if depth <= 0 or self.chance(25):
            return self.leaf(kind, env)
        return getattr(self, f"_{kind}")(env, depth - 1)

    def leaf(self, kind: str, env: dict[str, str]) -> str:
        names = [k for k, t in env.items() if t == kind]
        if names and self.chance(60):
            return self.pick(names)
        lit = {
            "int": lambda: str(
                self.draw(st.sampled_from([0, 1, 2, 3, 7, 31, 32, -1, 2**31 - 1, 2**31, 2**40]))
            ),
            "uint": lambda: "u",
            "float": lambda: repr(
                self.draw(st.sampled_from([0.0, 0.5, -2.0, 1e30, 1e-40, 3.0e38]))
            ),
            "double": lambda: "d",
            "f4": lambda: "v",
            "i4": lambda: "clpy.int4(1, 2, 3, 4)",
            "bool": lambda: self.pick(["True", "False", "gid < n"]),
        }
        return lit[kind]()

    def idx(self, env: dict[str, str], depth: int) -> str:
        return self.expr("int", env, min(depth, 2))

    def _int(self, env: dict[str, str], depth: int) -> str:
        e = lambda k="int": self.expr(k, env, depth)  # noqa: E731
        forms = [
            lambda: f"({e()} {self.pick(INT_OPS)} {e()})",
            lambda: f"-{e()}",
            lambda: f"~{e()}",
            lambda: f"y[{self.idx(env, depth)}]",
            lambda: f"int({e('float')})",
            lambda: f"{self.pick(['min', 'max'])}({e()}, {e()})",
            lambda: f"abs({e()})",
            lambda: f"clpy.{self.pick(['popcount', 'clz', 'abs'])}({e()})",
            lambda: (
                f"clpy.{self.pick(['mul24', 'hadd', 'rotate', 'mul_hi', 'add_sat'])}({e()}, {e()})"
            ),
            lambda: f"({e()} if {e('bool')} else {e()})",
            lambda: f"({e('i4')}).{self.pick(SWIZ)}",
            lambda: f"clpy.get_{self.pick(['group_id', 'local_size', 'num_groups'])}(0)",
            lambda: f"clpy.convert_int_sat_rte({e('float')})",
            lambda: f"clpy.as_int({e('float')})",
            lambda: f"clpy.select({e()}, {e()}, {e()})",
        ]
        return self.pick(forms)()

    def _uint(self, env: dict[str, str], depth: int) -> str:
        e = lambda k="uint": self.expr(k, env, depth)  # noqa: E731
        forms = [
            lambda: f"({e()} {self.pick(INT_OPS)} {e(self.pick(['uint', 'int']))})",
            lambda: f"uint32({e('int')})",
            lambda: f"clpy.convert_uint_sat({e('float')})",
            lambda: f"clpy.popcount({e()})",
        ]
        return self.pick(forms)()

    def _float(self, env: dict[str, str], depth: int) -> str:
        e = lambda k="float": self.expr(k, env, depth)  # noqa: E731
        forms = [
            lambda: f"({e()} {self.pick(FLOAT_OPS)} {e(self.pick(['float', 'float', 'int']))})",
            lambda: f"-{e()}",
            lambda: f"x[{self.idx(env, depth)}]",
            lambda: f"float({e('int')})",
            lambda: f"{self.pick(UNARY_F)}({e()})",
            lambda: f"{self.pick(BINARY_F)}({e()}, {e()})",
            lambda: f"clpy.{self.pick(['fma', 'mad', 'clamp', 'mix'])}({e()}, {e()}, {e()})",
            lambda: f"({e('f4')}).{self.pick(SWIZ)}",
            lambda: f"clpy.{self.pick(['dot', 'distance'])}({e('f4')}, {e('f4')})",
            lambda: f"clpy.length({e('f4')})",
            lambda: f"({e()} if {e('bool')} else {e()})",
            lambda: f"helper({e()}, {e('int')})",
            lambda: f"float32({e('double')})",
            lambda: f"clpy.as_float({e('int')})",
            lambda: f"math.pi * {e()}",
        ]
        return self.pick(forms)()

    def _double(self, env: dict[str, str], depth: int) -> str:
        e = lambda k="double": self.expr(k, env, depth)  # noqa: E731
        forms = [
            lambda: f"({e()} {self.pick(FLOAT_OPS)} {e(self.pick(['double', 'float', 'int']))})",
            lambda: f"clpy.sqrt({e()})",
            lambda: f"float64({e('float')})",
        ]
        return self.pick(forms)()

    def _f4(self, env: dict[str, str], depth: int) -> str:
        e = lambda k="f4": self.expr(k, env, depth)  # noqa: E731
        forms = [
            lambda: f"({e()} {self.pick(VEC_OPS)} {e(self.pick(['f4', 'f4', 'float']))})",
            lambda: f"h[{self.idx(env, depth)}]",
            lambda: f"float4({e('float')}, {e('float')}, {e('float')}, {e('float')})",
            lambda: f"float4({e('float')})",
            lambda: f"float4({e('f4')}.xy, {e('float')}, {e('float')})",
            lambda: f"({e()}).{self.pick(SWIZ4)}",
            lambda: f"clpy.convert_float4({e('i4')})",
            lambda: f"clpy.{self.pick(['sqrt', 'fabs', 'normalize', 'floor'])}({e()})",
            lambda: f"clpy.{self.pick(['fmin', 'fmax', 'step'])}({e()}, {e()})",
            lambda: f"clpy.select({e()}, {e()}, {e('i4')})",
            lambda: f"clpy.vload4({self.idx(env, depth)}, x)",
        ]
        return self.pick(forms)()

    def _i4(self, env: dict[str, str], depth: int) -> str:
        e = lambda k="i4": self.expr(k, env, depth)  # noqa: E731
        forms = [
            lambda: f"({e('f4')} {self.pick(CMP)} {e('f4')})",
            lambda: (
                f"({e()} {self.pick(['&', '|', '^', '+', '*', '<<'])} "
                f"{e(self.pick(['i4', 'int']))})"
            ),
            lambda: f"clpy.convert_int4({e('f4')})",
            lambda: f"clpy.as_int4({e('f4')})",
            lambda: f"clpy.int4({e('int')})",
            lambda: f"({e()}).{self.pick(SWIZ4)}",
        ]
        return self.pick(forms)()

    def _bool(self, env: dict[str, str], depth: int) -> str:
        e = lambda k="bool": self.expr(k, env, depth)  # noqa: E731
        forms = [
            lambda: f"({e('int')} {self.pick(CMP)} {e('int')})",
            lambda: f"({e('float')} {self.pick(CMP)} {e('float')})",
            lambda: f"(0 <= {e('int')} < n)",
            lambda: f"({e()} {self.pick(['and', 'or'])} {e()})",
            lambda: f"(not {e()})",
            lambda: f"clpy.isnan({e('float')})",
            lambda: f"clpy.any({e('i4')})",
            lambda: f"bool({e('int')})",
        ]
        return self.pick(forms)()

    # -- statements
    def block(self, env: dict[str, str], indent: int, depth: int, in_loop: bool, size: int) -> None:
        env = dict(env)  # names made in a block stay in it
        for _ in range(self.draw(st.integers(1, size))):
            self.stmt(env, indent, depth, in_loop)

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def new_name(self) -> str:
        self.fresh += 1
        return f"t{self.fresh}"

    def stmt(self, env: dict[str, str], ind: int, depth: int, in_loop: bool) -> None:
        ed = self.draw(st.integers(0, 4))
        choice = self.draw(st.integers(0, 19 if depth > 0 else 11))
        if choice <= 2:
            kind = self.pick(KINDS)
            name = self.new_name()
            if self.chance(30):
                ann = {
                    "int": "int32",
                    "uint": "uint32",
                    "float": "float32",
                    "double": "float64",
                    "f4": "float4",
                    "i4": "clpy.int4",
                    "bool": "bool",
                }[kind]
                self.emit(ind, f"{name}: {ann} = {self.expr(kind, env, ed)}")
            else:
                self.emit(ind, f"{name} = {self.expr(kind, env, ed)}")
            env[name] = kind
        elif choice == 3:
            locals_ = [k for k in env if k.startswith("t")] or ["gid"]
            name = self.pick(locals_)
            kind = env[name]
            op = self.pick(["=", "+=", "-=", "*=", "//=", "%=", "&=", "<<=", "/=", "**="])
            self.emit(ind, f"{name} {op} {self.expr(kind, env, ed)}")
        elif choice in (4, 5):
            p = self.pick(sorted(POINTERS))
            op = self.pick(["=", "=", "+=", "*=", "-="])
            self.emit(ind, f"{p}[{self.idx(env, ed)}] {op} {self.expr(POINTERS[p], env, ed)}")
        elif choice == 6:
            vecs = [k for k, t in env.items() if t in ("f4",) and k.startswith("t")]
            if vecs:
                w = self.pick(["x", "xy", "zw", "wzyx", "s1"])
                kind = "float" if len(w) == 1 or w == "s1" else f"float{len(w)}"
                val = (
                    self.expr("float", env, ed)
                    if kind == "float"
                    else f"clpy.{kind}({self.expr('float', env, ed)})"
                )
                self.emit(ind, f"{self.pick(vecs)}.{w} = {val}")
            else:
                self.emit(
                    ind, f"h[{self.idx(env, ed)}].{self.pick(SWIZ)} = {self.expr('float', env, ed)}"
                )
        elif choice == 7:
            fmt = self.pick(["", "'v=%d ', ", "'%f ', ", "'%v4f', "])
            self.emit(ind, f"print({fmt}{self.expr(self.pick(KINDS), env, ed)})")
        elif choice == 8:
            self.emit(ind, f"assert {self.expr('bool', env, ed)}")
        elif choice == 9:
            self.emit(
                ind,
                self.pick(
                    [
                        "clpy.barrier()",
                        "clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)",
                        "clpy.mem_fence(clpy.CLK_GLOBAL_MEM_FENCE)",
                    ]
                ),
            )
        elif choice == 10:
            self.emit(
                ind,
                self.pick(
                    [
                        f"clpy.atomic_add(clpy.addr(y[{self.idx(env, ed)}]), "
                        f"{self.expr('int', env, ed)})",
                        f"clpy.atomic_inc(y + {self.idx(env, ed)})",
                        f"{self.new_name()} = clpy.work_group_reduce_add("
                        f"{self.expr('float', env, ed)})",
                        f"{self.new_name()} = clpy.work_group_scan_inclusive("
                        f"{self.expr('int', env, ed)}, "
                        f"{self.pick(['+', 'max', '*', '&&', 'bogus'])!r})",
                    ]
                ),
            )
        elif choice == 11:
            if in_loop and self.chance(50):
                self.emit(ind, self.pick(["break", "continue"]))
            elif self.chance(30):
                self.emit(ind, "return")
            else:
                arr = self.new_name()
                space = self.pick(["private_array", "local_array"])
                ty = self.pick(["float32", "int32", "float4"])
                size = self.pick(["8", "8", "8", "(2, 4)", "n", "0", "-1"])
                self.emit(ind, f"{arr} = clpy.{space}({ty}, {size})")
                self.emit(ind, f"{arr}[{self.idx(env, ed)} % 8] = {self.expr('float', env, ed)}")
        elif choice in (12, 13, 14):
            self.emit(ind, f"if {self.expr('bool', env, ed)}:")
            self.block(env, ind + 1, depth - 1, in_loop, 3)
            if self.chance(40):
                self.emit(ind, "else:")
                self.block(env, ind + 1, depth - 1, in_loop, 3)
        elif choice in (15, 16, 17):
            i = self.new_name()
            args = self.pick(
                [
                    lambda: self.expr("int", env, 1),
                    lambda: f"{self.expr('int', env, 1)}, {self.expr('int', env, 1)}",
                    lambda: (
                        f"{self.expr('int', env, 1)}, {self.expr('int', env, 1)}, "
                        f"{self.pick(['1', '-1', '2', '0', 'n'])}"
                    ),
                ]
            )()
            self.emit(ind, f"for {i} in range({args}):")
            self.block({**env, i: "int"}, ind + 1, depth - 1, True, 3)
        elif choice == 18:
            c = self.new_name()
            self.emit(ind, f"{c} = 0")
            self.emit(ind, f"while {c} < {self.expr('int', env, 1)}:")
            self.emit(ind + 1, f"{c} += 1")
            self.block({**env, c: "int"}, ind + 1, depth - 1, True, 3)
        else:
            self.emit(ind, f"{self.expr(self.pick(KINDS), env, ed)}")


@st.composite
def typed_kernels(draw: Any, wrong_rate: int = 4) -> str:
    """A module: the fixed helper and kernel header, then a generated, mostly typed body."""
    g = _Gen(draw, wrong_rate)
    g.block(START_ENV, 1, 3, False, 6)
    return TYPED_HEADER + "\n".join(g.lines) + "\n"
