"""Reading a decorated Python function's source into an AST with absolute positions."""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
from dataclasses import dataclass, field
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
    _locs: dict[int, Loc] = field(default_factory=dict, compare=False, repr=False)

    def loc(self, node: ast.AST) -> Loc:
        # The tree lives as long as this object, so node ids are stable keys.
        cached = self._locs.get(id(node))
        if cached is not None:
            return cached
        line = getattr(node, "lineno", self.tree.lineno)
        col = getattr(node, "col_offset", 0) + self.col_shift
        end_line = getattr(node, "end_lineno", None)
        end = getattr(node, "end_col_offset", None)
        end_col = end + self.col_shift if end is not None and end_line == line else None
        loc = Loc(self.file, line, col, end_col)
        self._locs[id(node)] = loc
        return loc


def parse_function(fn: Any) -> ParsedFunction:
    """Parse ``fn``'s source. Lines are absolute in the file; columns survive dedenting."""
    found = _quick_source(fn)
    if found is not None:
        tree, file, first, raw, shift = found
    else:
        try:
            lines, first = inspect.getsourcelines(fn)
            file = inspect.getsourcefile(fn) or inspect.getfile(fn)
        except (OSError, TypeError) as e:
            raise CompileError(
                f"cannot read the source of {getattr(fn, '__name__', fn)!r}: "
                f"{e}. clpy kernels must be defined in a file or a notebook "
                "cell"
            ) from e
        raw = "".join(lines)
        dedented = textwrap.dedent(raw)
        shift = _indent(raw) - _indent(dedented)
        # Blank lines in front make the parser's line numbers the file's own.
        tree = ast.parse("\n" * (first - 1) + dedented)
    # Make sure linecache can show the line later even for notebook cells / exec'd code.
    if not linecache.getline(file, first):
        lines_in_file = ["\n"] * (first - 1) + raw.splitlines(True)
        linecache.cache[file] = (len(raw), None, lines_in_file, file)
    fdef = tree.body[0]
    if not isinstance(fdef, ast.FunctionDef):
        kind = "async function" if isinstance(fdef, ast.AsyncFunctionDef) else "construct"
        raise UnsupportedSyntaxError(
            f"{kind} cannot be a clpy kernel: use a plain def",
            Loc(file, getattr(fdef, "lineno", first), 0),
        )
    closure: dict[str, Any] = {}
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:
                pass
    return ParsedFunction(fdef, file, shift, fn.__globals__, closure)


def _quick_source(fn: Any) -> tuple[ast.Module, str, int, str, int] | None:
    """The function's source straight from linecache (what ``inspect.getsourcelines`` does,
    without tokenizing): from its first line to the first line indented no deeper than the
    ``def``. None when that does not parse to this function; the caller then asks inspect."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    file = code.co_filename
    all_lines = linecache.getlines(file, getattr(fn, "__globals__", {}))
    first = code.co_firstlineno
    if not all_lines or first > len(all_lines):
        return None
    head = all_lines[first - 1]
    base = len(head) - len(head.lstrip())
    end = first
    seen_def = False
    while end < len(all_lines):
        line = all_lines[end]
        stripped = line.strip()
        if not seen_def and all_lines[end - 1].lstrip().startswith(("def ", "async def ")):
            seen_def = True
        if (
            seen_def
            and stripped
            and not stripped.startswith("#")
            and len(line) - len(line.lstrip()) <= base
        ):
            break
        end += 1
    raw = "".join(all_lines[first - 1 : end])
    dedented = textwrap.dedent(raw)
    try:
        tree = ast.parse("\n" * (first - 1) + dedented)
    except SyntaxError:
        return None
    if len(tree.body) != 1 or getattr(tree.body[0], "name", None) != fn.__name__:
        return None
    return tree, file, first, raw, _indent(raw) - _indent(dedented)


def _indent(text: str) -> int:
    for line in text.splitlines():
        if line.strip():
            return len(line) - len(line.lstrip())
    return 0
