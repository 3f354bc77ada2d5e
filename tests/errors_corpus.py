"""The malformed-kernel corpus of tests/test_errors.py: ``@bad(...)`` registers a kernel
defined in a test module with the error it must raise; ``expected_line`` finds the line of its
marker in the module that defines it."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from clpy.errors import CompileError


@dataclass
class Bad:
    kernel: Any
    exc: type[CompileError]
    marker: str
    fragment: str
    specialize: dict[str, Any] = field(default_factory=dict)
    target: str = "opencl-c-2.0"
    where: Callable[..., Any] | None = None  # the function holding the marker, if not kernel


CASES: dict[str, Bad] = {}


def bad(exc: type[CompileError], marker: str, fragment: str, *, target: str = "opencl-c-2.0",
        where: Callable[..., Any] | None = None, **specialize: Any
        ) -> Callable[[Any], Any]:
    def wrap(k: Any) -> Any:
        CASES[k.__name__] = Bad(k, exc, marker, fragment, specialize, target, where)
        return k

    return wrap


def expected_line(fn: Any, marker: str) -> int:
    py = getattr(fn, "py_function", fn)
    lines, first = inspect.getsourcelines(py)
    start = next(i for i, text in enumerate(lines) if text.lstrip().startswith("def "))
    for i, text in enumerate(lines[start:], start):
        if marker in text:
            return first + i
    raise AssertionError(f"marker {marker!r} not found in {py.__name__}")


def source_file(fn: Any) -> str:
    """The file that defines ``fn`` (a kernel, a device function or a Python function)."""
    return inspect.getsourcefile(getattr(fn, "py_function", fn)) or ""
