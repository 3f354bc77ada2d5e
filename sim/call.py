"""What a built-in implementation knows about its call site (``sim.builtins`` convention)."""

from __future__ import annotations

from typing import Any

from clpy.ir.nodes import CallBuiltin, Loc
from clpy.types.core import Type


class Call:
    """What a built-in implementation knows about its call site.

    ``builtin`` (the registry entry), ``overload`` (parameter and return types chosen by the
    type checker), ``loc`` (the user's file:line), ``expr`` (the ``CallBuiltin`` node),
    ``checks`` (enabled checker names).
    """

    __slots__ = ("builtin", "overload", "loc", "expr", "checks", "state")

    def __init__(self, e: CallBuiltin, checks: frozenset[str]) -> None:
        self.builtin = e.builtin
        self.overload = e.overload
        self.loc: Loc = e.loc
        self.expr = e
        self.checks = checks
        self.state: dict[str, Any] = {}  # per-call-site scratch for implementations

    @property
    def ret(self) -> Type:
        return self.overload.ret

    @property
    def params(self) -> tuple[Type, ...]:
        return self.overload.params

    @property
    def name(self) -> str:
        return str(self.builtin.name)
