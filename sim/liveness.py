"""Variables whose values never leave the branch that assigns them (no merge needed).

An ``if`` runs its branch on a compacted sub-frame and scatters the variables the branch
assigns back into the parent frame (``Frame.merge``): one allocation or scatter per variable
and trip, on every trip of NW's and LU's tile loops and of stencil3d's plane loop. A variable
that is only ever read after being fully assigned earlier in the same block (``x = tx + 1``
then ``score[y * BS1 + x]``, ``a_up = ... if ... else ...`` then the stencil's sum) carries
nothing out of that block: whatever the parent holds for it is overwritten before the next
read. ``branch_local`` finds such variables conservatively:

- in every block (a function body, a branch, a loop body), statements are scanned in order; a
  variable is *clean* after a statement of the block that assigns all of it (a declaration,
  ``v = ...``) and *dirty* after any other statement that may assign it (``v += 1``,
  ``v.x = 1``, ``v[i] = 1``, an assignment inside a nested block);
- a read of a variable in a statement's own expressions while it is not clean, any read in
  a ``while`` condition (re-evaluated after the body), and every ``for`` variable make the
  variable *exposed*; nested blocks are scanned on their own, so a read there needs a clean
  assignment in that block;
- the variables assigned somewhere and never exposed are branch-local.

A branch-local variable is never read before a full assignment in the block that reads it,
so the value a branch leaves in it is never read: not merging it changes no result, no
memory access and no checker report.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clpy.ir.nodes import Assign, Declare, Expr, For, Stmt, Var, VarRef, While
from clpy.ir.program_vars import ProgramVar
from clpy.ir.walk import walk
from clpy_sim.jumps import assigned_keys

ENABLED = True  # read when a plan is compiled (tests compare plans made with it off)


def branch_local(body: Sequence[Stmt]) -> frozenset[Var]:
    """The variables of function body ``body`` whose values never leave the block that
    assigned them (see the module docstring); none when ``ENABLED`` is off."""
    if not ENABLED:
        return frozenset()
    exposed: set[Any] = set()
    assigned: set[Any] = set()
    _scan(body, exposed, assigned)
    return frozenset(
        v
        for v in assigned
        if isinstance(v, Var) and v not in exposed and not isinstance(v, ProgramVar)
    )


def _scan(block: Sequence[Stmt], exposed: set[Any], assigned: set[Any]) -> None:
    clean: set[Any] = set()
    for s in block:
        for v in _reads(_own_exprs(s)):
            if v not in clean:
                exposed.add(v)
        if isinstance(s, While):
            exposed.update(_reads([s.cond]))
        if isinstance(s, For):
            exposed.add(s.var)
        for sub in _blocks(s):
            _scan(sub, exposed, assigned)
        full = _full(s)
        for v in assigned_keys([s]):
            assigned.add(v)
            if v is full:
                clean.add(v)
            else:
                clean.discard(v)


def _full(s: Stmt) -> Any:
    """The variable ``s`` assigns all of, or None."""
    if isinstance(s, Declare):
        return s.var
    if isinstance(s, Assign) and s.op is None and isinstance(s.target, VarRef):
        return s.target.var
    return None


def _own_exprs(s: Stmt) -> list[Expr]:
    """The expressions of ``s`` itself (not of its nested blocks); a plain assignment's target
    variable is written, not read."""
    out: list[Expr] = []
    for k, v in s.__dict__.items():
        if k == "target" and isinstance(s, Assign) and s.op is None and isinstance(v, VarRef):
            continue
        if isinstance(v, Expr):
            out.append(v)
        elif type(v) is tuple:
            out.extend(x for x in v if isinstance(x, Expr))
    return out


def _blocks(s: Stmt) -> list[tuple[Stmt, ...]]:
    return [v for v in s.__dict__.values() if type(v) is tuple and v and isinstance(v[0], Stmt)]


def _reads(exprs: Sequence[Expr]) -> set[Any]:
    """Every variable read anywhere in ``exprs`` (statements nested in them included)."""
    out: set[Any] = set()
    for n in walk(exprs):
        if isinstance(n, VarRef):
            out.add(n.var)
        elif isinstance(n, Stmt):
            for v in assigned_keys([n]):
                out.add(v)  # (a statement inside an expression: conservatively a read)
    return out


__all__ = ["branch_local"]
