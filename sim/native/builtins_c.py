"""C types and the code shapes shared by the native engine's built-ins (sim/native/builtins.py):
the prelude's name of each clpy type, scalar conversions, and lane-wise application of scalar C
text to vectors in statement expressions that evaluate each argument once."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from clpy.types.core import Kind, ScalarType, Type, VectorType

# C spelling of each scalar by kind and width: size_t and friends are ulong/long here
_C_SCALAR: dict[tuple[Kind, int], str] = {
    (Kind.BOOL, 8): "bool",
    (Kind.SINT, 8): "char",
    (Kind.UINT, 8): "uchar",
    (Kind.SINT, 16): "short",
    (Kind.UINT, 16): "ushort",
    (Kind.SINT, 32): "int",
    (Kind.UINT, 32): "uint",
    (Kind.SINT, 64): "long",
    (Kind.UINT, 64): "ulong",
    (Kind.FLOAT, 32): "float",
    (Kind.FLOAT, 64): "double",
}


def c_scalar(t: ScalarType) -> str | None:
    """The prelude's C name of a scalar type (None: half, void)."""
    return _C_SCALAR.get((t.kind, t.bits))


def c_type(t: Type) -> str | None:
    """The prelude's C name of a scalar or vector type, or None when the native engine has
    none (half, bool vectors, anything else)."""
    if isinstance(t, ScalarType):
        return c_scalar(t)
    if isinstance(t, VectorType) and not t.elem.is_bool:
        s = c_scalar(t.elem)
        return None if s is None else f"{s}{t.n}"
    return None


def scalar_cast(value: str, src: ScalarType, dst: ScalarType) -> str:
    """C text converting the scalar ``value`` from ``src`` to ``dst`` (both native types)."""
    if src is dst or c_scalar(src) == c_scalar(dst):
        return value
    if dst.is_bool:
        return f"(({value}) != 0)"
    if src.is_float and not dst.is_float:
        return f"clpy_f2i_{c_scalar(dst)}((double)({value}))"
    return f"(({c_scalar(dst)})({value}))"


_FRESH = re.compile(r"clpy_[a-z](\d+)")


def fresh(args: Sequence[str]) -> int:
    """A number for the temporaries of a statement expression, above every number the argument
    texts use (they may be nested statement expressions of the same form)."""
    used = [int(m) for a in args for m in _FRESH.findall(a)]
    return max(used, default=0) + 1


Lane = Callable[[list[str]], str]


def lanewise(
    ret: Type, params: Sequence[Type], args: Sequence[str], lane: Lane, whole: int = 0
) -> str:
    """``lane`` (C text of one lane from the lanes of the arguments) applied to every lane of
    the vector result ``ret``; scalar parameters are the same value in every lane, and so are
    the first ``whole`` arguments (``lane`` indexes them itself: its text may use the lane
    index ``clpy_i<k>``, the last word of its second argument)."""
    assert isinstance(ret, VectorType)
    k = fresh(args)
    decls, lanes = [], []
    i = f"clpy_i{k}"
    for j, (p, a) in enumerate(zip(params, args)):
        name = f"clpy_a{k}_{j}"
        decls.append(f"{c_type(p)} {name} = ({a});")
        lanes.append(f"{name}[{i}]" if isinstance(p, VectorType) and j >= whole else name)
    r = f"clpy_r{k}"
    return (
        f"({{ {' '.join(decls)} {c_type(ret)} {r} = {{0}}; "
        f"for (int {i} = 0; {i} < {ret.n}; ++{i}) {r}[{i}] = {lane(lanes)}; {r}; }})"
    )


# a name, or a C number literal (which the generated text may repeat without parentheses)
_SIMPLE = re.compile(
    r"[A-Za-z_][A-Za-z_0-9]*"
    r"|\(?-?(0[xX][0-9a-fA-F.]+([pP][-+]?[0-9]+)?|[0-9.]+([eE][-+]?[0-9]+)?)[fFuUlL]*\)?"
)


def bound(params: Sequence[Type], args: Sequence[str], body: Callable[[list[str]], str]) -> str:
    """``body`` of names for the arguments (which it may use more than once): the arguments
    themselves when they are plain names or numbers, else temporaries of a statement
    expression that evaluates each argument once."""
    if all(_SIMPLE.fullmatch(a) for a in args):
        return body(list(args))
    k = fresh(args)
    names = [f"clpy_b{k}_{j}" for j in range(len(args))]
    decls = " ".join(f"{c_type(p)} {n} = ({a});" for p, n, a in zip(params, names, args))
    return f"({{ {decls} {body(names)}; }})"
