"""Random syntactically valid kernel bodies, as Python ASTs, for tests/test_frontend_fuzz.py.

The grammar leans towards what kernels contain (parameters, clpy built-ins, vectors, swizzles,
pointers, loops) so that most programs get past the parser into typing and emission, and mixes
in every other Python construct so the unsupported-syntax paths are hit too.
"""

from __future__ import annotations

import ast
from typing import Any

from hypothesis import strategies as st

# Parameters of every generated kernel (the header is fixed; only the body is generated).
HEADER = (
    "def fuzzed(x: Global[float32], y: Global[int32], n: int32, f: float32, v: float4,"
    " u: uint32, h: Global[float4], d: float64):\n"
)
PARAMS = ["x", "y", "n", "f", "v", "u", "h", "d"]
LOCALS = ["a", "b", "c", "i", "j", "t"]
CLPY_FUNCS = [
    "get_global_id",
    "get_local_id",
    "get_group_id",
    "get_local_size",
    "barrier",
    "sqrt",
    "min",
    "max",
    "clamp",
    "mad",
    "fma",
    "dot",
    "length",
    "select",
    "convert_int4",
    "convert_float",
    "convert_int_sat_rte",
    "as_int",
    "as_float4",
    "float4",
    "int2",
    "uint4",
    "float2",
    "work_group_reduce_add",
    "work_group_reduce",
    "work_group_scan_inclusive",
    "sub_group_broadcast",
    "atomic_add",
    "atomic_fetch_add",
    "private_array",
    "local_array",
    "vload4",
    "vstore4",
    "native_exp",
    "popcount",
    "clz",
    "rotate",
    "mul24",
    "hadd",
    "isnan",
    "any",
    "all",
    "shuffle",
    "printf",
    "addr",
    "mem_fence",
    "work_group_barrier",
    "get_sub_group_id",
    "nonexistent_builtin",
]
CLPY_NAMES = [
    "float32",
    "int32",
    "uint8",
    "float4",
    "int4",
    "half",
    "double",
    "CLK_LOCAL_MEM_FENCE",
    "Global",
    "Local",
    "constexpr",
    "kernel",
    "func",
    "memory_order_relaxed",
]
PY_FUNCS = [
    "abs",
    "min",
    "max",
    "int",
    "float",
    "bool",
    "range",
    "len",
    "print",
    "sum",
    "divmod",
    "round",
    "pow",
    "isinstance",
    "type",
    "zip",
    "enumerate",
    "iter",
]
ATTRS = [
    "x",
    "y",
    "z",
    "w",
    "xy",
    "yx",
    "xyz",
    "wzyx",
    "s0",
    "s3",
    "sF",
    "lo",
    "hi",
    "even",
    "odd",
    "xx",
    "s01",
    "dtype",
    "shape",
    "foo",
    "real",
    "T",
    "xyzw",
    "s0123",
]
OTHER_GLOBALS = [
    "np",
    "math",
    "GLOBAL_INT",
    "GLOBAL_FLOAT",
    "GLOBAL_STR",
    "GLOBAL_LIST",
    "GLOBAL_ARRAY",
    "helper_func",
    "undefined_name",
]

BINOPS = [
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.FloorDiv,
    ast.Mod,
    ast.Pow,
    ast.LShift,
    ast.RShift,
    ast.BitOr,
    ast.BitXor,
    ast.BitAnd,
    ast.MatMult,
]
CMPOPS = [ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Is, ast.IsNot, ast.In, ast.NotIn]
UNOPS = [ast.UAdd, ast.USub, ast.Not, ast.Invert]
AUGOPS = BINOPS

_ints = st.one_of(
    st.integers(-3, 40),
    st.sampled_from([0, 1, 2**31 - 1, 2**31, 2**32, -(2**31), 2**63, 2**64, 10**30, -1]),
)
_floats = st.one_of(
    st.sampled_from([0.0, -0.0, 0.5, 1.5, 1e30, 1e300, 3.4e38, 1e-45]),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
)


def _name(ids: list[str]) -> st.SearchStrategy[ast.expr]:
    return st.sampled_from(ids).map(lambda s: ast.Name(s, ast.Load()))


def _attr(base: str, names: list[str]) -> st.SearchStrategy[ast.expr]:
    return st.sampled_from(names).map(
        lambda s: ast.Attribute(ast.Name(base, ast.Load()), s, ast.Load())
    )


def _const() -> st.SearchStrategy[ast.expr]:
    return st.one_of(
        _ints.map(ast.Constant),
        _floats.map(ast.Constant),
        st.sampled_from([True, False, None, "s", b"b", ..., 1j, float("inf")]).map(ast.Constant),
    )


def leaves() -> st.SearchStrategy[ast.expr]:
    return st.one_of(
        _name(PARAMS),
        _name(LOCALS),
        _const(),
        _attr("clpy", CLPY_NAMES),
        _name(OTHER_GLOBALS + PY_FUNCS),
        _name(["float32", "int32", "float4", "Global", "uint8"]),
    )


def _call(
    func: st.SearchStrategy[ast.expr], arg: st.SearchStrategy[ast.expr]
) -> st.SearchStrategy[ast.expr]:
    kw = st.builds(ast.keyword, st.sampled_from(["op", "dtype", "x", "end", "bogus"]), arg)
    return st.builds(
        lambda fn, args, kws: ast.Call(fn, args, kws),
        func,
        st.lists(arg, max_size=4),
        st.lists(kw, max_size=1, unique_by=lambda k: k.arg),
    )


def _extend(e: st.SearchStrategy[ast.expr]) -> st.SearchStrategy[ast.expr]:
    """One level of expression syntax around ``e``."""
    clpy_fn = _attr("clpy", CLPY_FUNCS)
    py_fn = _name(PY_FUNCS + ["float4", "int2", "float32", "helper_func", "np"])
    math_fn = _attr("math", ["sqrt", "floor", "inf", "pi", "exp", "isnan"])
    return st.one_of(
        st.builds(lambda a, op, b: ast.BinOp(a, op(), b), e, st.sampled_from(BINOPS), e),
        st.builds(lambda op, a: ast.UnaryOp(op(), a), st.sampled_from(UNOPS), e),
        st.builds(
            lambda a, ops, cs: ast.Compare(a, [o() for o in ops], cs[: len(ops)] + [a] * 0),
            e,
            st.lists(st.sampled_from(CMPOPS), min_size=1, max_size=3),
            st.lists(e, min_size=3, max_size=3),
        ),
        st.builds(
            lambda op, vs: ast.BoolOp(op(), vs),
            st.sampled_from([ast.And, ast.Or]),
            st.lists(e, min_size=2, max_size=3),
        ),
        st.builds(ast.IfExp, e, e, e),
        _call(st.one_of(clpy_fn, py_fn, math_fn), e),
        st.builds(lambda a, s: ast.Attribute(a, s, ast.Load()), e, st.sampled_from(ATTRS)),
        st.builds(lambda a, i: ast.Subscript(a, i, ast.Load()), e, e),
        st.builds(
            lambda a, lo, hi: ast.Subscript(a, ast.Slice(lo, hi, None), ast.Load()),
            e,
            st.none() | e,
            st.none() | e,
        ),
        st.builds(
            lambda a, i, j: ast.Subscript(a, ast.Tuple([i, j], ast.Load()), ast.Load()), e, e, e
        ),
        st.builds(lambda vs: ast.Tuple(vs, ast.Load()), st.lists(e, max_size=3)),
        st.builds(lambda vs: ast.List(vs, ast.Load()), st.lists(e, max_size=2)),
        st.builds(lambda k, v: ast.Dict([k], [v]), e, e),
        st.builds(lambda v: ast.Set([v]), e),
        st.builds(lambda b: ast.Lambda(_no_args(), b), e),
        st.builds(
            lambda t, v: ast.NamedExpr(ast.Name(t, ast.Store()), v), st.sampled_from(LOCALS), e
        ),
        st.builds(lambda v: ast.JoinedStr([ast.FormattedValue(v, -1, None)]), e),
        st.builds(
            lambda elt, it: ast.ListComp(
                elt, [ast.comprehension(ast.Name("k", ast.Store()), it, [], 0)]
            ),
            e,
            e,
        ),
        st.builds(lambda v: ast.Starred(v, ast.Load()), e).map(
            lambda s: ast.Call(ast.Name("print", ast.Load()), [s], [])
        ),
        e.map(lambda v: ast.Call(ast.Name("print", ast.Load()), [v], [])),
    )


def _fdef(name: str, body: list[ast.stmt]) -> ast.FunctionDef:
    return ast.FunctionDef(name=name, args=_no_args(), body=body, decorator_list=[])


def _no_args() -> ast.arguments:
    return ast.arguments(
        posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]
    )


def expressions(max_leaves: int = 12) -> st.SearchStrategy[ast.expr]:
    return st.recursive(leaves(), _extend, max_leaves=max_leaves)


def _target(e: st.SearchStrategy[ast.expr]) -> st.SearchStrategy[ast.expr]:
    return st.one_of(
        st.sampled_from(LOCALS).map(lambda s: ast.Name(s, ast.Store())),
        st.sampled_from(PARAMS).map(lambda s: ast.Name(s, ast.Store())),
        st.builds(
            lambda b, i: ast.Subscript(ast.Name(b, ast.Load()), i, ast.Store()),
            st.sampled_from(["x", "y", "h", "v", "a"]),
            e,
        ),
        st.builds(
            lambda b, s: ast.Attribute(ast.Name(b, ast.Load()), s, ast.Store()),
            st.sampled_from(["v", "a", "h", "x"]),
            st.sampled_from(ATTRS),
        ),
        st.builds(
            lambda a, b: ast.Tuple(
                [ast.Name(a, ast.Store()), ast.Name(b, ast.Store())], ast.Store()
            ),
            st.sampled_from(LOCALS),
            st.sampled_from(LOCALS),
        ),
    )


def _annotation() -> st.SearchStrategy[ast.expr]:
    return st.one_of(
        _name(
            [
                "float32",
                "int32",
                "float4",
                "int",
                "float",
                "bool",
                "uint8",
                "double",
                "Global",
                "GLOBAL_INT",
                "undefined_name",
            ]
        ),
        st.sampled_from(["float32", "int32", "float4"]).map(
            lambda t: ast.Subscript(
                ast.Name("Global", ast.Load()), ast.Name(t, ast.Load()), ast.Load()
            )
        ),
        _const(),
    )


def _range_call(e: st.SearchStrategy[ast.expr]) -> st.SearchStrategy[ast.expr]:
    return st.builds(
        lambda args: ast.Call(ast.Name("range", ast.Load()), args, []),
        st.lists(e, min_size=0, max_size=4),
    )


def simple_statements(e: st.SearchStrategy[ast.expr]) -> st.SearchStrategy[ast.stmt]:
    return st.one_of(
        st.builds(lambda t, v: ast.Assign([t], v), _target(e), e),
        st.builds(lambda t, v: ast.Assign([t, ast.Name("b", ast.Store())], v), _target(e), e),
        st.builds(
            lambda t, op, v: ast.AugAssign(t, op(), v),
            _target(e).filter(lambda t: not isinstance(t, ast.Tuple)),
            st.sampled_from(AUGOPS),
            e,
        ),
        st.builds(
            lambda t, a, v: ast.AnnAssign(ast.Name(t, ast.Store()), a, v, 1),
            st.sampled_from(LOCALS),
            _annotation(),
            st.none() | e,
        ),
        st.builds(ast.Expr, e),
        st.just(ast.Pass()),
        st.builds(lambda v: ast.Return(v), st.none() | e),
        st.builds(lambda t, m: ast.Assert(t, m), e, st.none() | e),
        st.builds(lambda t: ast.Delete([ast.Name(t, ast.Del())]), st.sampled_from(LOCALS)),
        st.just(ast.Global(["GLOBAL_INT"])),
        st.builds(lambda v: ast.Raise(v, None), st.none() | e),
        st.just(ast.Import([ast.alias("math")])),
    )


def _loop_body_extras() -> st.SearchStrategy[ast.stmt]:
    return st.sampled_from([ast.Break(), ast.Continue()])


def statements(depth: int = 3) -> st.SearchStrategy[list[ast.stmt]]:
    e = expressions()
    simple = simple_statements(e)
    if depth == 0:
        return st.lists(simple, min_size=1, max_size=4)
    inner = statements(depth - 1)
    loop_inner = st.lists(st.one_of(simple, _loop_body_extras()), min_size=1, max_size=3)
    body = st.one_of(inner, loop_inner)
    compound = st.one_of(
        st.builds(lambda t, b, o: ast.If(t, b, o), e, inner, st.just([]) | inner),
        st.builds(
            lambda t, it, b, o: ast.For(ast.Name(t, ast.Store()), it, b, o),
            st.sampled_from(LOCALS),
            _range_call(e) | e,
            body,
            st.just([]) | inner,
        ),
        st.builds(lambda t, b: ast.While(t, b, []), e, body),
        st.builds(lambda ctx, b: ast.With([ast.withitem(ctx, None)], b), e, inner),
        st.builds(
            lambda b: ast.Try(b, [ast.ExceptHandler(None, None, [ast.Pass()])], [], []), inner
        ),
        st.builds(lambda b: _fdef("inner", b), inner),
    )
    return st.lists(st.one_of(simple, simple, compound), min_size=1, max_size=5)


def module_text(body: list[ast.stmt]) -> str:
    """The kernel's module source: decorator, fixed header, generated body."""
    fdef = _fdef("fuzzed", body)
    ast.fix_missing_locations(ast.Module([fdef], []))
    text = ast.unparse(fdef)
    body_text = text.split("\n", 1)[1]
    return "@clpy.kernel\n" + HEADER + body_text + "\n"


def namespace() -> dict[str, Any]:
    """Globals the generated kernels see."""
    import math

    import numpy as np

    import clpy
    from clpy import Global, float4, float32, float64, int32, uint8, uint32

    def helper_func(a: Any) -> Any:
        return a

    return {
        "clpy": clpy,
        "np": np,
        "math": math,
        "Global": Global,
        "float32": float32,
        "int32": int32,
        "float4": float4,
        "uint32": uint32,
        "float64": float64,
        "uint8": uint8,
        "int2": clpy.int2,
        "double": clpy.double,
        "GLOBAL_INT": 7,
        "GLOBAL_FLOAT": 2.5,
        "GLOBAL_STR": "text",
        "GLOBAL_LIST": [1, 2],
        "GLOBAL_ARRAY": np.arange(4),
        "helper_func": helper_func,
    }


# ----------------------------------------------------------------------------------------------
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
