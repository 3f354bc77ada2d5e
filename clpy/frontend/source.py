"""Reading a decorated Python function's source into an AST with absolute positions."""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
from dataclasses import dataclass
from typing import Any

from clpy.errors import CompileError, UnsupportedSyntaxError
from clpy.ir.nodes import Loc


@dataclass(frozen=True)
class ParsedFunction:
    """A function's AST, with lines/columns matching the user's file, and its namespaces."""

    tree: ast.FunctionDef
    file: str
    col_shift: int
    globals: dict[str, Any]
    closure: dict[str, Any]

    def loc(self, node: ast.AST) -> Loc:
        line = getattr(node, "lineno", self.tree.lineno)
        col = getattr(node, "col_offset", 0) + self.col_shift
        end_line = getattr(node, "end_lineno", None)
        end = getattr(node, "end_col_offset", None)
        end_col = end + self.col_shift if end is not None and end_line == line else None
        return Loc(self.file, line, col, end_col)


def parse_function(fn: Any) -> ParsedFunction:
    """Parse ``fn``'s source. Lines are absolute in the file; columns survive dedenting."""
    try:
        lines, first = inspect.getsourcelines(fn)
        file = inspect.getsourcefile(fn) or inspect.getfile(fn)
    except (OSError, TypeError) as e:
        raise CompileError(f"cannot read the source of {getattr(fn, '__name__', fn)!r}: {e}. "
                           "clpy kernels must be defined in a file or a notebook cell") from e
    raw = "".join(lines)
    dedented = textwrap.dedent(raw)
    shift = _indent(raw) - _indent(dedented)
    tree = ast.parse(dedented)
    ast.increment_lineno(tree, first - 1)
    # Make sure linecache can show the line later even for notebook cells / exec'd code.
    if not linecache.getline(file, first):
        linecache.cache[file] = (len(raw), None, raw.splitlines(True), file)
    fdef = tree.body[0]
    if not isinstance(fdef, ast.FunctionDef):
        kind = "async function" if isinstance(fdef, ast.AsyncFunctionDef) else "construct"
        raise UnsupportedSyntaxError(
            f"{kind} cannot be a clpy kernel: use a plain def",
            Loc(file, getattr(fdef, "lineno", first), 0))
    closure: dict[str, Any] = {}
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:
                pass
    return ParsedFunction(fdef, file, shift, fn.__globals__, closure)


def _indent(text: str) -> int:
    for line in text.splitlines():
        if line.strip():
            return len(line) - len(line.lstrip())
    return 0
