"""The lanes that leave a block early (``break``, ``continue``, ``return``) and the variables a
block may assign: what ``sim/stmts.py`` merges when lanes rejoin."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clpy.ir.nodes import Assign, Declare, Expr, Field, For, Index, Return, Stmt, Swizzle, VarRef
from clpy.ir.walk import walk
from clpy.types.core import AddressSpace, ArrayType
from clpy_sim.frame import Frame
from clpy_sim.values import RET


class Jump:
    """Lanes (bool arrays over the frame, or True for all) that left by break/continue/return."""

    __slots__ = ("brk", "cont", "ret")

    def __init__(self, brk: Any = None, cont: Any = None, ret: Any = None) -> None:
        self.brk = brk
        self.cont = cont
        self.ret = ret

    def gone(self, shape: tuple[int, int]) -> Any:
        m: Any = None
        for x in (self.brk, self.cont, self.ret):
            if x is None:
                continue
            if x is True:
                return True
            m = x if m is None else (m | x)
        return m if m is not None else False

    def expand(self, parent: Frame, sub: Frame) -> Jump:
        def ex(x: Any) -> Any:
            return None if x is None else parent.expand(sub, x)

        return Jump(ex(self.brk), ex(self.cont), ex(self.ret))


def or_lanes(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    if a is True or b is True:
        return True
    return a | b


def union(a: Jump | None, b: Jump | None) -> Jump | None:
    if a is None:
        return b
    if b is None:
        return a
    return Jump(or_lanes(a.brk, b.brk), or_lanes(a.cont, b.cont), or_lanes(a.ret, b.ret))


def assigned_keys(stmts: Sequence[Stmt]) -> frozenset[Any]:
    """Variables (and the return slot) that ``stmts`` may assign: what a merge must copy."""
    out: set[Any] = set()
    for n in walk(list(stmts)):
        if isinstance(n, Declare):
            out.add(n.var)
        elif isinstance(n, For):
            out.add(n.var)
        elif isinstance(n, Assign):
            v = root_var(n.target)
            if v is not None:
                out.add(v)
        elif isinstance(n, Return) and n.value is not None:
            out.add(RET)
    return frozenset(out)


def root_var(e: Expr) -> Any:
    while True:
        if isinstance(e, VarRef):
            return e.var
        if isinstance(e, (Field, Swizzle)):
            e = e.base
        elif isinstance(e, Index) and isinstance(e.base.type, ArrayType):
            if e.base.type.space is not AddressSpace.PRIVATE:
                return None  # local memory is not a variable: nothing to merge
            e = e.base
        else:
            return None
