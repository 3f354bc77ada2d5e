"""Expressions nested deeper than the compiler's recursion can follow become a compile error.

The frontend, the emitter and the simulator's compiler each recurse once (or a few times) per
level of expression nesting, so ``x + 1 + 1 + ... + 1`` with a thousand terms (a left-nested
tree a thousand levels deep, which CPython itself still compiles) reaches Python's recursion
limit. Instead of an internal ``RecursionError``, the user gets a ``CompileError`` at the most
deeply nested expression, saying how deep it is and how to split it. The depth is measured here
without recursion.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from clpy.errors import CompileError
from clpy.ir.nodes import Expr, Function, Loc, Stmt
from clpy.ir.walk import children


def deepest_ast(tree: ast.AST) -> tuple[int, ast.AST]:
    """The deepest expression node under ``tree`` and its depth (counted in expressions)."""
    best: tuple[int, ast.AST] = (0, tree)
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, ast.expr):
            depth += 1
            if depth > best[0]:
                best = (depth, node)
        stack.extend((child, depth) for child in ast.iter_child_nodes(node))
    return best


def deepest_ir(fns: list[Function]) -> tuple[int, Loc | None]:
    """The deepest expression of ``fns`` (a kernel and its callees) and its location."""
    best: tuple[int, Loc | None] = (0, None)
    stack: list[tuple[Expr | Stmt, int]] = [(s, 0) for fn in fns for s in fn.body]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, Expr):
            depth += 1
            if depth > best[0]:
                best = (depth, node.loc)
        stack.extend((child, depth) for child in children(node))
    return best


@contextmanager
def nesting_guard(where: Callable[[], tuple[int, Loc | None]]) -> Iterator[None]:
    """Turn a ``RecursionError`` raised inside into a ``CompileError`` at ``where()``: the
    depth and location of the most deeply nested expression (computed only on failure)."""
    try:
        yield
    except RecursionError:
        depth, loc = where()
        raise CompileError(
            f"expression nested too deeply ({depth} levels) for clpy's compiler at Python's "
            f"recursion limit (sys.getrecursionlimit() = {sys.getrecursionlimit()}): split it "
            "into several statements with temporary variables",
            loc,
        ) from None
