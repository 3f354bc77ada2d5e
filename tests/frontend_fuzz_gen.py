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
