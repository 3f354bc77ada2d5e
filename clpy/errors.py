"""Errors clpy raises at compile time. Each names the user's file:line:col and shows a caret."""

from __future__ import annotations

import linecache

from clpy.ir.nodes import Loc


class CompileError(Exception):
    """A kernel could not be compiled. ``loc`` is the position in the user's Python file."""

    def __init__(self, message: str, loc: Loc | None = None) -> None:
        self.message = message
        self.loc = loc
        super().__init__(self._render())

    def _render(self) -> str:
        if self.loc is None or self.loc.line <= 0:
            return self.message
        text = linecache.getline(self.loc.file, self.loc.line).rstrip("\n")
        first, *rest = self.message.split("\n")
        out = f"{self.loc}: {first}"
        if text:
            width = 1
            if self.loc.end_col is not None and self.loc.end_col > self.loc.col:
                width = self.loc.end_col - self.loc.col
            out += f"\n    {text}\n    {' ' * self.loc.col}{'^' * width}"
        # Details (the valid signatures of a built-in ...) go under the caret.
        return "\n".join([out, *rest])

    @property
    def line(self) -> int | None:
        return self.loc.line if self.loc else None

    def _render_traceback_(self) -> list[str]:
        """IPython/Jupyter show this instead of a traceback: the message with the kernel's
        (cell) line and caret, without clpy's internal frames."""
        return f"{type(self).__name__}: {self}".splitlines()


class UnsupportedSyntaxError(CompileError):
    """A Python construct clpy kernels do not support (classes, comprehensions, ``try`` ...)."""


class UndefinedNameError(CompileError):
    """A name that is neither a local, a parameter, a constant global nor a clpy built-in."""


class KernelTypeError(CompileError):
    """A type error in kernel code: bad operand types, wrong built-in signature, bad swizzle."""


class ConstantError(CompileError):
    """A value that must be a compile-time constant is not (array sizes, constexpr ...)."""


class RecursionNotAllowedError(CompileError):
    """OpenCL C forbids recursion (spec §1.9); a call cycle among device functions."""


class FeatureError(CompileError):
    """The target lacks a feature the kernel needs and clpy cannot lower it."""


class BuildError(Exception):
    """The OpenCL device compiler rejected the generated source; the log is mapped to Python."""

    def _render_traceback_(self) -> list[str]:
        """IPython/Jupyter: the mapped compiler messages, not clpy's frames."""
        return f"{type(self).__name__}: {self}".splitlines()


class UniformityWarning(UserWarning):
    """A barrier or collective under a condition that varies with the work-item id: legal if
    every work-item of a group takes the same path at run time (clpy/emit/lower_uniform.py).
    ``warnings.filterwarnings("error", category=clpy.UniformityWarning)`` makes it an error."""
