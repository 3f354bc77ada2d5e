"""Automatic test-case reduction (delta debugging, Zeller & Hildebrandt 2002) over the
program model: drop chunks of statements (ddmin on every block), replace an ``if`` by its
branch, and simplify expressions (a node by a child of the same type, then by a constant),
keeping each change only while the program still fails the same way. Safety nodes (index
masks, safe-math wrappers) are never replaced by their children, and a candidate that the
simulator's checkers reject is not "still failing", so reduced kernels stay well-defined.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import replace

from clpy.fuzz.nodes import BOOL, Expr, Program, Stmt

Path = tuple[tuple[int, str], ...]  # (statement index, "body" | "orelse") steps


def _get(body: tuple[Stmt, ...], path: Path) -> tuple[Stmt, ...]:
    for i, part in path:
        sub = getattr(body[i], part)
        assert sub is not None
        body = sub
    return body


def _set(body: tuple[Stmt, ...], path: Path, new: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
    if not path:
        return new
    (i, part), rest = path[0], path[1:]
    inner = _set(getattr(body[i], part), rest, new)
    changed = replace(body[i], body=inner) if part == "body" else replace(body[i], orelse=inner)
    return body[:i] + (changed,) + body[i + 1 :]


def _blocks(body: tuple[Stmt, ...], path: Path = ()) -> Iterator[Path]:
    yield path
    for i, s in enumerate(body):
        for part in ("body", "orelse"):
            sub = getattr(s, part)
            if sub is not None:
                yield from _blocks(sub, path + ((i, part),))


def _exprs(e: Expr, path: tuple[int, ...] = ()) -> Iterator[tuple[tuple[int, ...], Expr]]:
    yield path, e
    for k, kid in enumerate(e.kids):
        yield from _exprs(kid, path + (k,))


def _replace_expr(e: Expr, path: tuple[int, ...], new: Expr) -> Expr:
    if not path:
        return new
    kids = list(e.kids)
    kids[path[0]] = _replace_expr(kids[path[0]], path[1:], new)
    return replace(e, kids=tuple(kids))


def _simpler(e: Expr) -> list[Expr]:
    out: list[Expr] = []
    if not e.keep:
        out += [k for k in e.kids if k.type == e.type]
    if e.kids and e.type != BOOL:
        t = e.type
        if t.is_vector:
            out.append(Expr(t, f"{t.spelling}({t.py}(0))"))
        else:
            out.append(Expr(t, f"{t.py}(0)"))
            out.append(Expr(t, f"{t.py}(1)"))
    elif e.kids and e.type == BOOL:
        out += [Expr(BOOL, "True"), Expr(BOOL, "False")]
    return out


def _orphans(cand: Program, dropped: list[Stmt]) -> bool:
    """Whether ``cand`` still names a variable one of the ``dropped`` statements declared:
    the first assignment left might sit in a branch or loop that does not run, and an
    uninitialised variable is undefined in C."""
    names = [s.declares for s in dropped if s.declares]
    if not names:
        return False
    text = cand.render()
    return any(re.search(rf"\b{re.escape(n)}\b", text) for n in names)


class Shrinker:
    """Reduce ``program`` while ``still_fails(candidate)`` holds, within ``budget_s``
    seconds and ``max_tests`` evaluations."""

    def __init__(
        self, still_fails: Callable[[Program], bool], budget_s: float = 300.0, max_tests: int = 600
    ) -> None:
        self.still_fails = still_fails
        self.deadline = time.monotonic() + budget_s
        self.max_tests = max_tests
        self.tests = 0

    def _try(self, cand: Program) -> bool:
        if self.tests >= self.max_tests or time.monotonic() > self.deadline:
            return False
        self.tests += 1
        try:
            return bool(self.still_fails(cand))
        except Exception:
            return False

    def _out_of_budget(self) -> bool:
        return self.tests >= self.max_tests or time.monotonic() > self.deadline

    def shrink(self, program: Program) -> Program:
        best = program
        changed = True
        while changed and not self._out_of_budget():
            changed = False
            for step in (self._drop_statements, self._unwrap_ifs, self._simplify_exprs):
                new = step(best)
                if new is not best:
                    best, changed = new, True
        return best

    # ------------------------------------------------------------------ passes
    def _drop_statements(self, prog: Program) -> Program:
        """ddmin on every block, outermost first (paths are recomputed after a change)."""
        k = 0
        while not self._out_of_budget():
            paths = list(_blocks(prog.body))
            if k >= len(paths):
                return prog
            path = paths[k]
            block = _get(prog.body, path)
            removable = [i for i, s in enumerate(block) if not s.pinned]
            n = max(len(removable) // 2, 1)
            progressed = False
            while removable and n >= 1 and not self._out_of_budget():
                for start in range(0, len(removable), n):
                    drop = set(removable[start : start + n])
                    new_block = tuple(s for i, s in enumerate(block) if i not in drop)
                    cand = prog.with_body(_set(prog.body, path, new_block))
                    if _orphans(cand, [block[i] for i in drop]):
                        continue  # a variable would be read before any assignment
                    if self._try(cand):
                        prog, block, progressed = cand, new_block, True
                        removable = [i for i, s in enumerate(block) if not s.pinned]
                        break
                else:
                    if n == 1:
                        break
                    n = max(n // 2, 1)
                    continue
                n = max(min(n, len(removable) // 2), 1)
            if not progressed:
                k += 1
        return prog

    def _unwrap_ifs(self, prog: Program) -> Program:
        for path in list(_blocks(prog.body)):
            try:
                block = _get(prog.body, path)
            except (IndexError, AssertionError, AttributeError):
                continue
            for i, s in enumerate(block):
                if not s.fmt.startswith("if ") or s.pinned:
                    continue
                for branch in (s.body, s.orelse):
                    if branch is None:
                        continue
                    cand = prog.with_body(
                        _set(prog.body, path, block[:i] + branch + block[i + 1 :])
                    )
                    if self._try(cand):
                        return self._unwrap_ifs(cand)
        return prog

    def _simplify_exprs(self, prog: Program) -> Program:
        for path in list(_blocks(prog.body)):
            i = 0
            while not self._out_of_budget():
                try:
                    block = _get(prog.body, path)
                except (IndexError, AssertionError, AttributeError):
                    break
                if i >= len(block):
                    break
                s = block[i]
                improved = False
                for j, root in enumerate(s.exprs):
                    for epath, node in _exprs(root):
                        for simple in _simpler(node):
                            new_root = _replace_expr(root, epath, simple)
                            exprs = s.exprs[:j] + (new_root,) + s.exprs[j + 1 :]
                            new_block = block[:i] + (replace(s, exprs=exprs),) + block[i + 1 :]
                            cand = prog.with_body(_set(prog.body, path, new_block))
                            if self._try(cand):
                                prog, improved = cand, True
                                break
                        if improved:
                            break
                    if improved:
                        break
                if not improved:
                    i += 1
        return prog
