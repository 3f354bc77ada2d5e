"""Definite assignment: a local variable is read only where every path from the function's entry
has given it a value.

Python decides at run time (``UnboundLocalError`` on the path that skips the assignment); C
leaves the variable indeterminate, so the simulator would read 0 and a device whatever its
register held, a result that depends on the device. clpy therefore applies the static rule of
Java (JLS chapter 16, "Definite Assignment") to the typed IR the frontend built: a read that
some path reaches without an assignment is a compile error at the read.

The rule runs on the IR, after the frontend folded compile-time branches (``if N > 4`` on a
constexpr keeps one side, as the kernel that runs does) and hoisted declarations: each
variable first assigned inside a branch or loop and used outside it is a ``Declare`` without a
value in the enclosing block, and those are the variables checked (every other variable is
declared with its value, or is a parameter, an array, or a ``for`` loop's own counter). Paths:

- ``if``/``else``: assigned after it when assigned in both branches (a constant condition
  keeps the branch that runs);
- ``while c`` and ``for ... in range(a, b, s)``: the body may run zero times, so what it
  assigns counts after the loop only when the loop surely runs: ``while True`` (left by its
  ``break`` s only) or a range of constant bounds that is not empty. ``break`` carries the
  state where it leaves; ``continue`` the state back to the loop's test;
- the first iteration: ``if k == 0: acc = x[0] else: acc = acc + x[k]`` in ``for k in
  range(0, n)`` reads ``acc`` only on a later iteration, after the first one assigned it. A
  loop whose body tests ``k == start`` or ``k != start`` (constant start and step; ``k`` the
  loop variable, not reassigned in the body) is analysed twice, as its first iteration and as
  a later one, and such a test is a constant in each (also under ``and``/``or``/``not`` and in
  ``a if c else b``);
- ``return`` (and code after it) reaches nothing after it;
- the loop variable: assigned in the body; after the loop only if the range surely is not
  empty (Python keeps the last value, and leaves it unbound when the range is empty);
- ``y: float`` (an annotation without a value) declares ``y`` unassigned, as in Python;
- ``v.x = 1`` and ``s.field = 1`` change part of ``v``/``s``, so ``v`` and ``s`` must have a
  value already (Python would look them up first, too).

Reads through pointers and elements of arrays are not variables and are not checked here (the
simulator reports reads of uninitialized local memory). ``try``/``with``/``for ... else`` are
not part of the kernel language (the statement builder rejects them).
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass, field

from clpy.errors import UndefinedNameError
from clpy.ir.nodes import (
    Assert,
    Assign,
    Break,
    CallBuiltin,
    Compare,
    Const,
    Continue,
    Declare,
    Expr,
    ExprStmt,
    Field,
    For,
    Function,
    If,
    Loc,
    Logical,
    Print,
    Return,
    Select,
    Stmt,
    Swizzle,
    Unary,
    Var,
    VarRef,
    While,
)
from clpy.ir.walk import children, walk
from clpy.types.core import ArrayType

# The checked variables that some path reaches a point without assigning (declared, and
# not assigned since, on that path); None where no path reaches it (after a return, break or
# continue), the neutral element of the join. (The complement of the set of variables
# definitely assigned, kept small: a variable usually leaves it a few statements later.)
_State = frozenset[Var] | None

_Compound = If | For | While


def check_definite_assignment(
    fn: Function,
    annotated: Set[str] = frozenset(),
    folded: Mapping[Loc, list[VarRef]] | None = None,
) -> None:
    """Raise ``UndefinedNameError`` at the first read of a local of ``fn`` that some path
    reaches before the variable is assigned (see the module docstring). ``annotated``: the
    names the function annotates (``y: float``), for the message; ``folded``: reads the
    frontend replaced by the variable's constant value (``flags = CLK_LOCAL_MEM_FENCE`` then
    ``barrier(flags)``), by the location of the built-in call whose argument they are."""
    _Checker(fn.body, annotated, folded or {}).block(fn.body, frozenset())


@dataclass
class _Loop:
    breaks: list[_State] = field(default_factory=list)
    continues: list[_State] = field(default_factory=list)


@dataclass
class _Site:
    """One plain assignment of a checked variable and the statements enclosing it."""

    loc: Loc
    enclosing: tuple[_Compound, ...]


def _join(a: _State, b: _State) -> _State:
    """Where paths with states ``a`` and ``b`` meet."""
    if a is None:
        return b
    if b is None:
        return a
    return a | b


class _Checker:
    def __init__(
        self, body: tuple[Stmt, ...], annotated: Set[str], folded: Mapping[Loc, list[VarRef]]
    ) -> None:
        self.annotated = annotated
        self.folded = folded
        # Variables declared without a value (the only ones that can be read unassigned).
        self.checked: set[Var] = set()
        self.sites: dict[Var, list[_Site]] = {}
        self.loops: list[_Loop] = []
        self.enclosing: list[_Compound] = []
        # Loop variables that tell a loop's first iteration from the others (module
        # docstring), the loops whose bodies test one, and whether the loop being analysed is
        # at its first iteration (True) or a later one (False).
        # (Loops are keyed by id: IR nodes compare and hash by value, body included.)
        self.counters: dict[Var, list[For]] = {}
        self.tested: set[int] = set()
        self.first: dict[int, bool] = {}
        self._collect(body, ())
        loops = {id(loop): loop for found in self.counters.values() for loop in found}
        for loop in loops.values():
            if any(t is loop for n in walk(loop.body) for t in self._counter_test(n)):
                self.tested.add(id(loop))

    def _collect(self, stmts: tuple[Stmt, ...], enclosing: tuple[_Compound, ...]) -> None:
        for st in stmts:
            if (
                isinstance(st, Declare)
                and st.init is None
                and not isinstance(st.var.type, ArrayType)
            ):
                self.checked.add(st.var)
            elif isinstance(st, Assign) and st.op is None and isinstance(st.target, VarRef):
                self.sites.setdefault(st.target.var, []).append(_Site(st.loc, enclosing))
            elif isinstance(st, If):
                self._collect(st.body, (*enclosing, st))
                self._collect(st.orelse, (*enclosing, st))
            elif isinstance(st, (For, While)):
                self._collect(st.body, (*enclosing, st))
                if isinstance(st, For):
                    self._note_counter(st)

    def _note_counter(self, st: For) -> None:
        """Remember the variables that hold ``st``'s current value throughout its body: its
        counter, and the user's variable the body copies it to first (clpy/frontend/stmts.py
        loops on a counter of its own when the variable is used after the loop), if the body
        assigns it nowhere else."""
        if _int_const(st.start) is None or not _int_const(st.step):
            return  # a dynamic step may be 0: then every iteration has the start value
        self.counters.setdefault(st.var, []).append(st)
        first = st.body[0] if st.body else None
        if (
            isinstance(first, Assign)
            and first.op is None
            and isinstance(first.target, VarRef)
            and isinstance(first.value, VarRef)
            and first.value.var is st.var
        ):
            user = first.target.var
            stores = [
                n
                for n in walk(st.body)
                if (isinstance(n, Assign) and isinstance(n.target, VarRef) and n.target.var is user)
                or (isinstance(n, For) and n.var is user)
            ]
            if len(stores) == 1:
                self.counters.setdefault(user, []).append(st)

    def _counter_test(self, n: object) -> list[For]:
        """The loops whose first iteration ``n`` tests (``k == start``, ``k != start``)."""
        if not (isinstance(n, Compare) and n.op in ("==", "!=")):
            return []
        for var_side, const_side in ((n.left, n.right), (n.right, n.left)):
            value = _int_const(const_side)
            if isinstance(var_side, VarRef) and value is not None:
                loops = self.counters.get(var_side.var, [])
                return [loop for loop in loops if _int_const(loop.start) == value]
        return []

    # ------------------------------------------------------------------ statements

    def assigned(self, s: _State, v: Var) -> _State:
        return s - {v} if s and v in s else s

    def block(self, stmts: tuple[Stmt, ...], state: _State) -> _State:
        for st in stmts:
            state = self.stmt(st, state)
        return state

    def stmt(self, st: Stmt, s: _State) -> _State:
        if isinstance(st, Declare):
            if st.init is not None:
                self.read(st.init, s)
                return s
            # y: float (or a declaration hoisted before the branch that assigns y)
            return s | {st.var} if s is not None and st.var in self.checked else s
        if isinstance(st, Assign):
            return self.assign(st, s)
        if isinstance(st, ExprStmt):
            self.read(st.expr, s)
        elif isinstance(st, Print):
            for a in st.args:
                self.read(a, s)
        elif isinstance(st, Assert):
            self.read(st.cond, s)
        elif isinstance(st, Return):
            if st.value is not None:
                self.read(st.value, s)
            return None
        elif isinstance(st, Break):
            self.loops[-1].breaks.append(s)
            return None
        elif isinstance(st, Continue):
            self.loops[-1].continues.append(s)
            return None
        elif isinstance(st, If):
            return self.if_stmt(st, s)
        elif isinstance(st, While):
            return self.while_stmt(st, s)
        elif isinstance(st, For):
            return self.for_stmt(st, s)
        else:  # pragma: no cover - every statement of clpy/ir/nodes.py is handled above
            raise AssertionError(f"definite assignment: unknown statement {st!r}")
        return s

    def assign(self, st: Assign, s: _State) -> _State:
        target = st.target
        if isinstance(target, VarRef):
            if st.op is not None:  # y += 1 reads y
                self.read(target, s)
            self.read(st.value, s)
            return self.assigned(s, target.var)
        # v.x = ..., s.f = ..., p[i] = ...: the base is read (a pointer's value) or partly
        # changed (a vector or struct, which must have a value already, as in Python).
        base: Expr = target
        while isinstance(base, (Swizzle, Field)):
            base = base.base
        if base is not target and isinstance(base, VarRef):
            self.check(base, s, partial=target)
        self.read(target, s)
        self.read(st.value, s)
        return s

    def if_stmt(self, st: If, s: _State) -> _State:
        self.read(st.cond, s)
        self.enclosing.append(st)
        taken = self.truth(st.cond)
        body = self.block(st.body, s if taken is not False else None)
        orelse = self.block(st.orelse, s if taken is not True else None)
        self.enclosing.pop()
        return _join(body, orelse)

    def while_stmt(self, st: While, s: _State) -> _State:
        self.read(st.cond, s)
        taken = self.truth(st.cond)
        if taken is False:
            return s
        head, back, breaks = self.loop(st, s)
        exits = breaks if taken else [head, *breaks]
        return _join_all(exits)

    def for_stmt(self, st: For, s: _State) -> _State:
        for e in (st.start, st.stop, st.step):
            self.read(e, s)
        if id(st) in self.tested:
            # The first iteration starts from the entry, every later one from the end of
            # the one before it.
            self.first[id(st)] = True
            _, back_first, breaks = self.loop(st, s, first=True)
            self.first[id(st)] = False
            head, back, more = self.loop(st, back_first)
            del self.first[id(st)]
            back = _join(back_first, back)
            breaks = [*breaks, *more]
            head = _join(s, back)
        else:
            head, back, breaks = self.loop(st, s)
        # Python's loop variable keeps its last value after the loop (the frontend copies it
        # to the user's variable in the body); an empty range leaves it as it was.
        exits = [back, *breaks] if _surely_runs(st) else [head, *breaks]
        return _join_all(exits)

    def loop(
        self, st: For | While, entry: _State, first: bool = False
    ) -> tuple[_State, _State, list[_State]]:
        """The state at the loop's test, at the end of an iteration (body end and continues),
        and at each break. The test is reached from the entry and from every iteration's end
        (only from the entry for ``first``); iterate until that state is stable (assignments
        only add, so at most a few rounds)."""
        head = entry
        self.enclosing.append(st)
        while True:
            self.loops.append(_Loop())
            end = self.block(st.body, head)
            lp = self.loops.pop()
            back = _join_all([end, *lp.continues])
            new_head = entry if first else _join(entry, back)
            if new_head == head:
                break
            head = new_head
        self.enclosing.pop()
        return head, back, lp.breaks

    # ------------------------------------------------------------------ expressions

    def read(self, e: Expr, s: _State) -> None:
        if not s:
            return  # every variable has a value here, or no path reaches here
        stack: list[object] = [e]
        while stack:
            n = stack.pop()
            if isinstance(n, VarRef):
                self.check(n, s)
            elif isinstance(n, Logical):
                stack.append(n.left)
                if self.truth(n.left) is not (n.op == "or"):  # else the right is not evaluated
                    stack.append(n.right)
            elif isinstance(n, Select):
                taken = self.truth(n.cond)
                stack.append(n.cond)
                if taken is not False:
                    stack.append(n.if_true)
                if taken is not True:
                    stack.append(n.if_false)
            elif isinstance(n, Expr):
                if isinstance(n, CallBuiltin) and n.loc in self.folded:
                    stack.extend(self.folded[n.loc])
                stack.extend(children(n))

    def truth(self, cond: Expr) -> bool | None:
        """The value of a condition where it is known: a constant (``while True``), or a
        test of the first iteration of a loop being analysed (``k == 0``); else None."""
        if isinstance(cond, Const):
            return None if isinstance(cond.value, tuple) else bool(cond.value)
        if isinstance(cond, Unary) and cond.op == "not":
            v = self.truth(cond.operand)
            return None if v is None else not v
        if isinstance(cond, Logical):
            a, b = self.truth(cond.left), self.truth(cond.right)
            short = cond.op == "or"  # the value that decides alone
            if a is short or b is short:
                return short
            return None if a is None or b is None else not short
        for loop in self._counter_test(cond):  # (a variable reused by loops one after another)
            if id(loop) in self.first:
                assert isinstance(cond, Compare)
                return self.first[id(loop)] == (cond.op == "==")
        return None

    def check(self, ref: VarRef, s: _State, partial: Expr | None = None) -> None:
        v = ref.var
        if not s or v not in s:
            return
        raise UndefinedNameError(self.message(v, ref, partial), ref.loc)

    def message(self, v: Var, ref: VarRef, partial: Expr | None) -> str:
        name = v.name
        sites = self.sites.get(v, [])
        lines = sorted({site.loc.line for site in sites})
        # ``y: float`` is the variable's declaration (its location) and assigns nothing
        bare = name in self.annotated and not any(site.loc == v.loc for site in sites)
        declared = f"declared without a value at line {v.loc.line} ({name}: {v.type})"
        what = (
            f"part of local variable {name!r} is assigned here, but {name!r} itself is"
            if partial is not None
            else f"local variable {name!r} is read here, but it is"
        )
        if not lines and bare:
            head = f"{what} never assigned a value ({declared})"
            hint = f"give it a value where it is declared: {name}: {v.type} = ..."
            return f"{head}\nhint: {hint}"
        head = f"{what} not assigned on every path that reaches this point"
        if lines:
            head += f" (assigned at {_lines(lines)}"
            head += f"; {declared})" if bare else ")"
            where = self.construct(sites[0], name)
        else:  # its assignments are in branches of constant conditions, folded away
            head += (
                f" (its assignment at line {v.loc.line} is in a branch that a compile-time "
                "condition removes)"
            )
            where = ""
        hint = f"initialise {name!r} before {where}" if where else f"initialise {name!r} first"
        hint += (
            "; Python would raise UnboundLocalError on a path that skips the assignment, and "
            "a device would read an undefined value"
        )
        return f"{head}\nhint: {hint}"

    def construct(self, site: _Site, name: str) -> str:
        """The branch or loop that assigns ``name`` on some paths only, as the user wrote it:
        the outermost statement around the assignment that does not also enclose the read."""
        inner = list(self.enclosing)
        n = 0
        while n < len(inner) and n < len(site.enclosing) and inner[n] is site.enclosing[n]:
            n += 1
        if n < len(site.enclosing):
            st = site.enclosing[n]
        else:  # assigned in a loop's body, read at the loop's next iteration
            loops = [c for c in inner if isinstance(c, (For, While))]
            if not loops:
                return ""
            st = loops[-1]
        if isinstance(st, If):
            return f"the `if` at line {st.loc.line} (not every branch of it assigns {name!r})"
        kind = "for" if isinstance(st, For) else "while"
        return (
            f"the `{kind}` loop at line {st.loc.line} (it may run zero times, or leave "
            f"before assigning {name!r})"
        )


def _join_all(states: list[_State]) -> _State:
    out: _State = None
    for s in states:
        out = _join(out, s)
    return out


def _lines(lines: list[int]) -> str:
    if len(lines) == 1:
        return f"line {lines[0]}"
    return "lines " + ", ".join(map(str, lines[:-1])) + f" and {lines[-1]}"


def _int_const(e: Expr) -> int | None:
    if isinstance(e, Const) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return e.value
    return None


def _surely_runs(st: For) -> bool:
    """Whether a ``for`` loop's range is not empty (all three bounds are constants)."""
    start, stop, step = (_int_const(e) for e in (st.start, st.stop, st.step))
    if start is None or stop is None or not step:
        return False
    return len(range(start, stop, step)) > 0


__all__ = ["check_definite_assignment"]
