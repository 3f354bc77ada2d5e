"""A small indenting code writer with optional ``#line`` directives back to Python."""

from __future__ import annotations

from collections.abc import Callable

from clpy.ir.nodes import Loc


class Writer:
    """``line_file`` maps a Python file name to the name ``#line`` shows (``clpy emit``
    writes names relative to the current directory)."""

    def __init__(
        self,
        line_directives: bool = True,
        indent: str = "    ",
        line_file: Callable[[str], str] | None = None,
    ) -> None:
        self.lines: list[str] = []
        self.depth = 0
        self.indent = indent
        self.line_directives = line_directives
        self.line_file = line_file
        self._last: tuple[str, int] | None = None

    def line(self, text: str = "", loc: Loc | None = None) -> None:
        if loc is not None and self.line_directives and loc.line > 0:
            key = (loc.file, loc.line)
            if key != self._last:
                name = self.line_file(loc.file) if self.line_file else loc.file
                self.lines.append(f'#line {loc.line} "{_escape_path(name)}"')
                self._last = key
        self.lines.append(self.indent * self.depth + text if text else "")

    def raw(self, text: str) -> None:
        self.lines.append(text)
        self._last = None

    def open(self, text: str, loc: Loc | None = None) -> None:
        self.line(text + " {", loc)
        self.depth += 1

    def close(self, text: str = "}") -> None:
        self.depth -= 1
        self.line(text)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _escape_path(path: str) -> str:
    return path.replace("\\", "\\\\").replace('"', '\\"')
