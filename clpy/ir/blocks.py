"""Block literals of device-side enqueue (OpenCL C 2.0 spec §1.12, §1.13.17).

clpy writes the block itself: ``clpy.enqueue_kernel(q, flags, nd, child, a, lo + 1)`` becomes a
``BlockLiteral`` whose body calls ``child`` (a ``@clpy.kernel`` or ``@clpy.func``) on the
captured values ``a`` and ``lo + 1``; the emitter writes ``^{child(a, lo + 1);}``. A capture is
evaluated in the enqueuing work-item when the block is made (spec §1.12.3: captured variables
are const copies taken at the block literal), so the frontend only accepts captures whose
value cannot change between the enqueue and the child's run: variables, constants and
arithmetic on them (clpy/frontend/blocks.py).

The child may be the kernel being compiled (a recursive enqueue: quicksort enqueuing itself),
so a block refers to its child through a ``FunctionRef`` filled in once the child is built.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from clpy.ir.nodes import Expr

if TYPE_CHECKING:
    from clpy.ir.nodes import Function


class FunctionRef:
    """A function named before it is built. Compared by identity; ``function`` is set once,
    when the child's build finishes (before anything emits or simulates the IR)."""

    __slots__ = ("name", "function")

    def __init__(self, name: str, function: Function | None = None) -> None:
        self.name = name
        self.function = function

    def get(self) -> Function:
        fn = self.function
        if fn is None:  # pragma: no cover - set when the enclosing build finishes
            raise RuntimeError(f"block child {self.name} was never built")
        return fn

    def __repr__(self) -> str:
        return f"FunctionRef({self.name})"


@dataclass(frozen=True)
class BlockLiteral(Expr):
    """``^(local void *l0, ...){ child(...); }``: ``captures`` fill the child's parameters in
    order, except the positions ``local_at``, which receive the block's ``local void *``
    parameters (sized by the enqueue call's trailing ``uint`` arguments, in order)."""

    child: FunctionRef
    captures: tuple[Expr, ...]
    local_at: tuple[int, ...] = ()

    def child_args(self) -> list[tuple[str, int]]:
        """For each child parameter: ``("capture", i)`` or ``("local", k)``."""
        out: list[tuple[str, int]] = []
        ci = 0
        n = len(self.captures) + len(self.local_at)
        for pos in range(n):
            if pos in self.local_at:
                out.append(("local", self.local_at.index(pos)))
            else:
                out.append(("capture", ci))
                ci += 1
        return out
