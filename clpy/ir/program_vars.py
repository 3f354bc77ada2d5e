"""Program-scope variables in the typed IR (spec §1.5, §6.5 of OpenCL C 2.0).

A ``ProgramVar`` is a ``Var`` that lives at program scope instead of in a function: a
``__constant`` array (a module-level NumPy array or tuple of numbers read in a kernel, or a
``clpy.constant_array``) or a ``__global`` array (``clpy.global_var``, OpenCL C 2.0). Its type
is an ``ArrayType`` in that address space, so indexing, decay to a pointer and the checks of
the constant space work as for any array. ``source`` (clpy/program_scope.py) gives the values
(``values()``), the stable identity of the data (``key``: one declaration per program however
many functions read it) and the Python name for messages (``label``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from clpy.ir.nodes import Function, Var, VarRef
from clpy.ir.walk import walk
from clpy.types.core import AddressSpace, ArrayType


@dataclass(frozen=True, eq=False)
class ProgramVar(Var):
    """A program-scope variable; ``type`` is ``ArrayType(elem, shape, space)``."""

    source: Any = None

    @property
    def space(self) -> AddressSpace:
        t = self.type
        assert isinstance(t, ArrayType)
        return t.space

    @property
    def key(self) -> Any:
        return self.source.key

    @property
    def shape(self) -> tuple[int, ...]:
        t = self.type
        assert isinstance(t, ArrayType)
        return t.shape

    @property
    def label(self) -> str:
        return str(self.source.label)

    def __repr__(self) -> str:
        return f"ProgramVar({self.name}: {self.type} {self.space.value})"


def is_program_var(v: Any) -> bool:
    return isinstance(v, ProgramVar)


def captures(fn: Function) -> list[tuple[Any, Any]]:
    """``(source, fingerprint)`` of the mutable program data (module arrays and tuples) that
    ``fn`` and its callees read, for the launcher's check before each launch."""
    out: dict[Any, tuple[Any, Any]] = {}
    done: set[int] = set()

    def visit(f: Function) -> None:
        if id(f) in done:
            return
        done.add(id(f))
        for n in walk(f.body):
            if isinstance(n, VarRef) and isinstance(n.var, ProgramVar) and n.var.key not in out:
                fp = n.var.source.fingerprint()
                if fp is not None:
                    out[n.var.key] = (n.var.source, fp)
        for c in f.callees:
            visit(c)

    visit(fn)
    return list(out.values())


def stale(caps: list[tuple[Any, Any]]) -> bool:
    """Whether some captured program data changed since ``captures`` saw it."""
    return any(not src.same(fp) for src, fp in caps)


__all__ = ["ProgramVar", "is_program_var", "captures", "stale"]
