"""Simulator diagnostics: one ``Report`` per detected bug, raised as ``SimulationError``.

A report names the kind of bug, the Python file:line of the access, the work-item's global,
local and group ids, the memory and index involved and, for data races, the other access.
"""

from __future__ import annotations

import linecache
import os
import sys
import warnings
from dataclasses import dataclass
from typing import Any

import clpy.ir.nodes
from clpy.ir.nodes import Loc

# Frames in these packages are clpy's own: a warning points past them, at the user's line.
_OWN_DIRS = (
    os.path.dirname(os.path.abspath(__file__)) + os.sep,  # sim/
    os.path.dirname(os.path.dirname(os.path.abspath(clpy.ir.nodes.__file__))) + os.sep,  # clpy/
)

KINDS = (
    "out-of-bounds",
    "data-race",
    "barrier-divergence",
    "uninitialized-read",
    "division-by-zero",
    "no-progress",
    "assertion",
    "unsupported",
)


@dataclass(frozen=True)
class Report:
    """One finding. ``kind`` is one of ``KINDS``; ids are tuples with one entry per dimension."""

    kind: str
    message: str
    loc: Loc
    global_id: tuple[int, ...] | None = None
    local_id: tuple[int, ...] | None = None
    group_id: tuple[int, ...] | None = None
    memory: str | None = None
    index: int | None = None
    other_loc: Loc | None = None
    other_global_id: tuple[int, ...] | None = None
    count: int = 1  # work-items affected by the same finding

    @property
    def line(self) -> int:
        return self.loc.line

    @property
    def other_line(self) -> int | None:
        return self.other_loc.line if self.other_loc is not None else None

    def render(self) -> str:
        out = [f"{self.kind}: {self.message}", f"  at {self.loc}"]
        out.extend(_source(self.loc, caret=True))
        if self.global_id is not None:
            out.append(
                f"  work-item global id {_ids(self.global_id)}, local id "
                f"{_ids(self.local_id)}, group {_ids(self.group_id)}"
            )
        if self.memory is not None:
            where = self.memory if self.index is None else f"{self.memory}[{self.index}]"
            out.append(f"  memory: {where}")
        if self.other_loc is not None:
            who = f" by work-item {_ids(self.other_global_id)}" if self.other_global_id else ""
            out.append(f"  conflicting access{who} at {self.other_loc}")
            out.extend(_source(self.other_loc, caret=True))
        if self.count > 1:
            out.append(f"  ({self.count} work-items affected; showing the first)")
        return "\n".join(out)

    def __str__(self) -> str:
        return self.render()


def _source(loc: Loc, caret: bool) -> list[str]:
    """The source line of ``loc`` (dedented) and a caret under the expression."""
    line = linecache.getline(loc.file, loc.line).rstrip()
    if not line:
        return []
    indent = len(line) - len(line.lstrip())
    out = [f"      {line.strip()}"]
    if caret and loc.col >= indent:
        width = max(1, (loc.end_col or loc.col + 1) - loc.col)
        out.append("      " + " " * (loc.col - indent) + "^" * width)
    return out


def _ids(ids: tuple[int, ...] | None) -> str:
    if ids is None:
        return "?"
    return "(" + ", ".join(str(i) for i in ids) + ("," if len(ids) == 1 else "") + ")"


class SimulationError(Exception):
    """The simulator found a bug in a kernel (or a construct it cannot simulate).

    ``reports`` holds every finding of the failing step; ``report`` is the first.
    """

    def __init__(self, reports: list[Report]) -> None:
        self.reports = list(reports)
        self.report = self.reports[0]
        super().__init__("\n".join(r.render() for r in self.reports))

    @property
    def kind(self) -> str:
        return self.report.kind

    def __reduce__(self) -> Any:
        # Pickled with its reports (Dask workers send errors to the client); the message is
        # kept as rendered here, source lines included.
        return (_rebuild_error, (type(self), self.reports, self.args))

    def _render_traceback_(self) -> list[str]:
        """IPython/Jupyter show this instead of a traceback: each finding with the kernel's
        (cell) line, caret and work-item ids, without the simulator's frames."""
        return f"{type(self).__name__}: {self}".splitlines()


def _rebuild_error(
    cls: type[SimulationError], reports: list[Report], args: tuple[Any, ...]
) -> SimulationError:
    err = cls.__new__(cls)
    err.reports = list(reports)
    err.report = err.reports[0]
    Exception.__init__(err, *args)
    return err


class SimulationWarning(UserWarning):
    """Issued instead of ``SimulationError`` when ``config(on_error="warn")``."""


Site = tuple[str, int, dict[str, Any]]


def user_site() -> Site | None:
    """File, line and module globals of the innermost frame outside clpy and the simulator:
    the user's launch line (None if there is none)."""
    f: Any = sys._getframe(1)
    while f is not None:
        if not f.f_code.co_filename.startswith(_OWN_DIRS):
            return f.f_code.co_filename, f.f_lineno, f.f_globals
        f = f.f_back
    return None


def warn_once(report: Report, site: Site | None) -> None:
    """``on_error="warn"``: one ``SimulationWarning`` per kind of finding and kernel line, over
    all launches (kept in the launching module's ``__warningregistry__``, as Python keeps its
    own "once per location" warnings, and cleared with it when the filters change), pointing
    at the user's launch line ``site``."""
    if site is None:
        warnings.warn(report.render(), SimulationWarning, stacklevel=2)
        return
    file, line, globs = site
    registry = globs.setdefault("__warningregistry__", {})
    key = ("clpy.sim", report.kind, report.loc.file, report.loc.line)
    if registry.get(key):
        return
    warnings.warn_explicit(
        report.render(),
        SimulationWarning,
        file,
        line,
        module=str(globs.get("__name__", "__main__")),
        registry=registry,
    )
    registry[key] = True
