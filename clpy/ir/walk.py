"""Generic traversal of the typed IR, and small analyses built on it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from clpy.ir.nodes import Declare, Expr, For, Function, Stmt, Var
from clpy.types.core import ArrayType, PointerType, ScalarType, Type, VectorType
from clpy.types.structs import StructType

_NODE = (Expr, Stmt)


def children(node: Expr | Stmt) -> list[Expr | Stmt]:
    """Direct child expressions and statements of a node, in source order."""
    out: list[Expr | Stmt] = []
    # Field values in declaration order; ``type``/``loc`` and non-node fields are skipped
    # by the isinstance tests (this runs for every node of every pass: keep it lean).
    for v in node.__dict__.values():
        if isinstance(v, _NODE):
            out.append(v)
        elif type(v) is tuple:
            out.extend([item for item in v if isinstance(item, _NODE)])
    return out


def walk(nodes: Sequence[Expr | Stmt]) -> Iterator[Expr | Stmt]:
    """Every node under ``nodes`` (statements or expressions), pre-order."""
    stack: list[Expr | Stmt] = list(reversed(nodes))
    while stack:
        n = stack.pop()
        yield n
        kids = children(n)
        if kids:
            kids.reverse()
            stack.extend(kids)


def all_vars(fn: Function) -> Iterator[Var]:
    yield from fn.params
    for n in walk(fn.body):
        if isinstance(n, Declare):
            yield n.var
        elif isinstance(n, For):
            yield n.var


def all_types(fn: Function) -> Iterator[Type]:
    """Types of parameters, the result, every variable and every expression (one pass)."""
    for v in fn.params:
        yield v.type
    yield fn.ret
    for n in walk(fn.body):
        if isinstance(n, Expr):
            yield n.type
        elif isinstance(n, (Declare, For)):
            yield n.var.type


def _structs_in(t: Type, out: list[StructType]) -> None:
    if isinstance(t, (ScalarType, VectorType)):
        return
    if isinstance(t, (PointerType, ArrayType)):
        _structs_in(t.elem, out)
    elif isinstance(t, StructType):
        if t in out:
            return
        for _, ft in t.fields:
            _structs_in(ft, out)
        out.append(t)


def collect_structs(fn: Function) -> tuple[Type, ...]:
    """Struct types used by ``fn``, each after the structs its fields use."""
    out: list[StructType] = []
    for t in all_types(fn):
        _structs_in(t, out)
    return tuple(out)


def scalar_elems(t: Type) -> Iterator[ScalarType]:
    if isinstance(t, ScalarType):
        yield t
    elif isinstance(t, VectorType):
        yield t.elem
    elif isinstance(t, (PointerType, ArrayType)):
        yield from scalar_elems(t.elem)
    elif isinstance(t, StructType):
        for _, ft in t.fields:
            yield from scalar_elems(ft)
