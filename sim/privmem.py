"""Private arrays whose address is taken (``p: Private[float32] = a``, ``f(a)``, ``a + k``,
``clpy.addr(a[i])``, ``remquo(x, y, q)``; clpy/frontend/pointers.py).

Most private arrays are lane values held in a variable (``sim/lvalues.py``). One that decays
to a pointer anywhere in its function (``escaped_private``) lives in memory instead: a
``PrivateLanes`` object per batch, with one region of ``count`` elements per work-item (lane
``L = gslot * W + llid`` owns elements ``[L*count, (L+1)*count)``). The array variable holds
a pointer ``PtrVal(mem, L*count)``, so indexing it, pointer arithmetic on it, passing it to a
device function (whose frame cannot see the caller's variables) and built-ins writing through
it all go through ``load``/``store``, which check every access against the bounds of the
work-item's own array: a pointer that walks off its array is an out-of-bounds report naming
the array, never a read of a neighbour's elements.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from clpy.ir.nodes import Declare, Expr, Function, Index, Var, VarRef
from clpy.ir.walk import children, walk
from clpy.types.core import AddressSpace, ArrayType, OpaqueType, ScalarType, Type, VectorType
from clpy.types.structs import StructType
from clpy_sim.frame import Frame, PtrVal
from clpy_sim.memory import Memory, Where
from clpy_sim.state import Launch


def escaped_private(fn: Function) -> frozenset[Var]:
    """Private arrays of ``fn`` used as values (decayed to pointers), not only indexed."""
    out: set[Var] = set()
    for n in walk(fn.body):
        if isinstance(n, Declare):
            continue
        for c in children(n):
            if not isinstance(c, Expr) or not _private_array(c.type):
                continue
            if isinstance(n, Index) and c is n.base:
                continue
            root = c
            while isinstance(root, Index):
                root = root.base
            if isinstance(root, VarRef):
                out.add(root.var)
    return frozenset(out)


def _private_array(t: Type) -> bool:
    return isinstance(t, ArrayType) and t.space is AddressSpace.PRIVATE


class PrivateLanes(Memory):
    """Every work-item's copy of one private array, as memory (see the module docstring)."""

    space = "private"

    def __init__(self, name: str, elem: Type, data: np.ndarray, launch: Launch, per: int) -> None:
        super().__init__(name, elem, data, launch)
        self.per = per  # elements of one work-item's array

    def describe(self) -> str:
        return f"private array `{self.name}`"

    def base(self, fr: Frame) -> np.ndarray:
        """Each lane's first element."""
        lane = np.asarray(fr.gslot, np.int64) * fr.batch.launch.W + np.asarray(fr.llid, np.int64)
        return np.broadcast_to(lane * self.per, fr.shape)

    def where(self, fr: Frame, addr: Any, loc: Any, write: bool) -> Where:
        a = np.asarray(addr, dtype=np.int64)
        first = self.base(fr)
        rel = a - first
        bad = (rel < 0) | (rel >= self.per)
        if np.count_nonzero(bad):
            if "bounds" in self.launch.checks:
                self.launch.fail_lanes(
                    fr,
                    bad,
                    "out-of-bounds",
                    f"{'write to' if write else 'read of'} {self.describe()} out of bounds "
                    f"(it has {self.per} elements)",
                    loc,
                    self.name,
                    rel,
                )
            a = np.where(bad, first, a)
        return Where("flat", fr.shape, idx=np.broadcast_to(a, fr.shape))


def declare(fr: Frame, var: Var, t: ArrayType) -> None:
    """``a = clpy.private_array(T, n)`` for an escaped array: the lanes' regions, zeroed (as
    the simulator zeroes every private array), and the pointer to them in ``a``."""
    b = fr.batch
    per = int(np.prod(t.shape))
    mem = b.locals.get(var)
    if mem is None:
        elem = t.elem
        total = b.G * b.launch.W * per
        if isinstance(elem, VectorType):
            data = np.zeros((total, 4 if elem.n == 3 else elem.n), dtype=elem.elem.dtype)
        elif isinstance(elem, (ScalarType, StructType)):
            data = np.zeros(total, dtype=elem.dtype)
        elif isinstance(elem, OpaqueType):  # event_t: event ids (sim/async_copy.py)
            data = np.zeros(total, dtype=np.int64)
        else:
            raise TypeError(f"private array of {elem} is not supported")
        mem = PrivateLanes(var.name, elem, data, b.launch, per)
        b.locals[var] = mem
    first = mem.base(fr)
    mem.data[first[..., None] + np.arange(per)] = 0
    fr.env[var] = PtrVal(mem, np.array(first))


__all__ = ["PrivateLanes", "declare", "escaped_private"]
