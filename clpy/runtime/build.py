"""Building OpenCL programs: the program cache and compiler logs mapped back to Python lines.

The emitter writes ``#line N "file.py"`` before each statement. Compilers that honour it
(clang-based ones: PoCL, NVIDIA) report Python file:line directly; for a report against the
generated text (``<source>:12:5``) the line is mapped through the nearest preceding directive.
"""

from __future__ import annotations

import hashlib
import linecache
import re
import threading
from dataclasses import dataclass
from typing import Any

from clpy.errors import BuildError
from clpy.runtime import diskcache

_DIAG = re.compile(
    r"^(?:(?P<sev0>error|warning|note|fatal error):\s*)?"
    r"(?P<file>[^\s:][^:\n]*?):(?P<line>\d+):(?:(?P<col>\d+):)?\s*"
    r"(?:(?P<sev1>error|warning|note|fatal error):\s*)?(?P<msg>.*)$"
)
_LINE = re.compile(r'^\s*#line\s+(\d+)\s+"([^"]*)"')


@dataclass(frozen=True)
class Diagnostic:
    """One compiler message, placed in the user's Python file where possible."""

    severity: str
    message: str
    file: str
    line: int
    col: int | None
    python_line: str | None  # the Python source line, when the file is a Python file
    cl_line: str | None  # the generated OpenCL line, when the report is against it

    def render(self) -> str:
        col = f":{self.col}" if self.col is not None else ""
        out = f"{self.file}:{self.line}{col}: {self.severity}: {self.message}"
        shown = self.python_line if self.python_line is not None else self.cl_line
        if shown:
            out += f"\n    {shown.strip()}"
        return out


def map_line(source: str, cl_line: int) -> tuple[str, int] | None:
    """The Python (file, line) that generated OpenCL line ``cl_line`` (1-based), via the
    nearest ``#line`` directive above it; ``None`` if there is none."""
    lines = source.splitlines()
    for i in range(min(cl_line, len(lines)) - 1, -1, -1):
        m = _LINE.match(lines[i])
        if m:
            return m.group(2), int(m.group(1)) + (cl_line - i - 2)
    return None


def parse_log(log: str, source: str) -> list[Diagnostic]:
    """Compiler messages of ``log`` mapped to Python files and lines."""
    out: list[Diagnostic] = []
    lines = source.splitlines()
    for raw in log.splitlines():
        m = _DIAG.match(raw.strip())
        if m is None:
            continue
        sev = m.group("sev0") or m.group("sev1")
        if sev is None:
            continue
        file, line = m.group("file"), int(m.group("line"))
        col = int(m.group("col")) if m.group("col") else None
        cl_text: str | None = None
        if not file.endswith(".py"):
            if 0 < line <= len(lines):
                cl_text = lines[line - 1]
            mapped = map_line(source, line)
            if mapped is not None:
                file, line = mapped
                col = None
        py_text = ""
        if file.endswith(".py"):
            py_text = linecache.getline(file, line).rstrip("\n")
            col = None  # a column of the generated C, not of the Python line
        out.append(
            Diagnostic(sev, m.group("msg").strip(), file, line, col, py_text or None, cl_text)
        )
    return out


def _extract_log(err: Exception) -> str:
    """The compiler log inside a pyopencl build failure message."""
    text = str(err)
    m = re.search(r"Build on <[^\n]*>:\n(.*?)(?:\n\(options:[^\n]*\)|\Z)", text, re.S)
    return m.group(1).strip() if m else text


def build_error(kernel_name: str, device: str, options: str, source: str, log: str) -> BuildError:
    """A ``BuildError`` whose message lists each diagnostic at its Python line."""
    diags = parse_log(log, source)
    head = (
        f"OpenCL build of kernel {kernel_name!r} failed on {device} (options: {options or 'none'})"
    )
    body = "\n".join(d.render() for d in diags if d.severity != "note")
    msg = f"{head}\n{body}\n--- compiler log ---\n{log}" if body else f"{head}\n{log}"
    err = BuildError(msg)
    err.log = log  # type: ignore[attr-defined]
    err.source = source  # type: ignore[attr-defined]
    err.options = options  # type: ignore[attr-defined]
    err.diagnostics = diags  # type: ignore[attr-defined]
    err.device = device  # type: ignore[attr-defined]
    return err


class ProgramCache:
    """Built programs keyed by (source hash, device, context, build options)."""

    def __init__(self) -> None:
        self._programs: dict[tuple[str, int, int, str], Any] = {}
        self._lock = threading.Lock()

    def get(
        self,
        context: Any,
        cl_device: Any,
        source: str,
        options: str,
        kernel_name: str,
        device_name: str,
        cache_dir: str | None = None,
    ) -> Any:
        """The built program, building it (once per key) if needed; ``BuildError`` on
        failure."""
        key = (
            hashlib.sha256(source.encode()).hexdigest(),
            int(cl_device.int_ptr),
            int(context.int_ptr),
            options,
        )
        prg = self._programs.get(key)
        if prg is not None:
            return prg
        import pyopencl as cl

        with self._lock:
            prg = self._programs.get(key)
            if prg is None:
                try:
                    prg = cl.Program(context, source).build(
                        options=options, devices=[cl_device], cache_dir=cache_dir
                    )
                except cl.Error as e:  # BUILD_PROGRAM_FAILURE, INVALID_BUILD_OPTIONS
                    raise build_error(
                        kernel_name, device_name, options, source, _extract_log(e)
                    ) from None
                if cache_dir is not None:
                    diskcache.seal_binaries(cache_dir)  # checked before this process loads
                self._programs[key] = prg
        return prg

    def clear(self) -> None:
        with self._lock:
            self._programs.clear()

    def __len__(self) -> int:
        return len(self._programs)


PROGRAMS = ProgramCache()
