"""State shared while building one function's typed IR: scopes, variables, diagnostics."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, NoReturn

from clpy.errors import CompileError, KernelTypeError
from clpy.frontend.source import ParsedFunction
from clpy.ir.nodes import Binary, CallBuiltin, Cast, Expr, Function, Index, Loc, Select, Var, VarRef
from clpy.types.core import AddressSpace, ArrayType, PointerType, Type


@dataclass(frozen=True)
class PyValue:
    """A compile-time Python object met while building (a module, a built-in, a type, a
    ``@clpy.func``, a string). Never reaches the IR."""

    value: Any
    loc: Loc


@dataclass
class CompileSession:
    """State across one kernel compilation: the device-function call stack (to reject
    recursion, spec §1.9) and the specializations made so far, in dependency order."""

    stack: list[Any] = field(default_factory=list)
    functions: list[Function] = field(default_factory=list)
    # (parsed function, parameter types) -> FunctionRef: the children of device-side
    # enqueues, kernels included while they are built (clpy/frontend/blocks.py)
    blocks: dict[Any, Any] = field(default_factory=dict)


class Restart(Exception):
    """A variable typed from a weak literal must be widened; rebuild with the new hint."""


@dataclass
class FuncState:
    """Per-function build state, shared by the statement, expression and call builders.

    Besides scopes and types it tracks which pointers the function writes through
    (``written``, for const inference and copy-back) and what local pointers may point into
    (``aliases``): the call side notes writes by built-ins and device functions, the statement
    side notes stores and pointer assignments.
    """

    parsed: ParsedFunction
    session: CompileSession
    is_kernel: bool
    constexprs: dict[str, Any]
    hints: dict[str, Type]
    vars: dict[str, Var] = field(default_factory=dict)
    weak_vars: set[str] = field(default_factory=set)
    annotated: set[str] = field(default_factory=set)
    # name → the block path where its declaration goes (computed by a pre-pass)
    decl_block: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    # pointer variable → the parameter names it may point into (for const inference)
    aliases: dict[str, frozenset[str]] = field(default_factory=dict)
    written: set[str] = field(default_factory=set)
    # loop counters known to stay >= 0 (C's / and % then equal Python's // and %)
    nonneg_vars: set[Var] = field(default_factory=set)
    # names with a single assignment in the function (context.assigned_once), and those of
    # them assigned a constant: a compile-time constant where one is needed (barrier flags)
    assigned_once: frozenset[str] = frozenset()
    const_values: dict[Var, Expr] = field(default_factory=dict)
    # the reads of those locals that became the constant, by the location of the built-in
    # call they are arguments of: the definite-assignment check (definite.py) checks them
    folded_reads: dict[Loc, list[VarRef]] = field(default_factory=dict)
    callees: list[Function] = field(default_factory=list)
    ret_type: Type | None = None
    ret_annotated: bool = False
    # names a store showed may go negative (clpy/frontend/ranges.py); kept across restarts
    nonneg_refuted: set[str] = field(default_factory=set)
    # names assigned once from a provably positive value (a range step that counts up)
    positive_vars: set[Var] = field(default_factory=set)
    loop_depth: int = 0
    restart_pending: bool = False  # a variable was widened: this attempt's IR is discarded
    uniform_calls: list[tuple[Any, Loc]] = field(default_factory=list)

    def loc(self, node: ast.AST) -> Loc:
        return self.parsed.loc(node)

    def note_uniform_call(self, builtin: Any, node: ast.AST) -> None:
        """Remember a call every work-item of a group must reach (barrier, collective)."""
        self.uniform_calls.append((builtin, self.loc(node)))

    def note_write(self, ptr: Expr, node: ast.AST) -> None:
        """Record that the function writes through ``ptr`` (for const and copy-back)."""
        t = ptr.type
        if isinstance(t, PointerType) and t.space is AddressSpace.CONSTANT:
            self.fail(node, f"cannot write through {t}: Constant memory is read-only")
        for root in self.pointer_roots(ptr):
            self.written.add(root)

    def note_alias(self, name: str, value: Expr) -> None:
        """Variable ``name`` is assigned ``value``: if a pointer, it may point into its roots."""
        if isinstance(value.type, PointerType):
            self.aliases[name] = self.aliases.get(name, frozenset()) | self.pointer_roots(value)

    def pointer_roots(self, e: Expr) -> frozenset[str]:
        """The parameter names a pointer-valued expression may point into."""
        if isinstance(e, VarRef):
            if e.var.is_param:
                return frozenset({e.var.name})
            # The local pointer itself counts too: the emitter makes it const when unwritten.
            return self.aliases.get(e.var.name, frozenset()) | {e.var.name}
        if isinstance(e, Binary):  # p + k: the pointer operand (not x in p + x[i])
            return frozenset().union(
                *(self.pointer_roots(s) for s in (e.left, e.right) if _addresses(s.type))
            )
        if isinstance(e, Select):
            return self.pointer_roots(e.if_true) | self.pointer_roots(e.if_false)
        if isinstance(e, Cast):
            return self.pointer_roots(e.value)
        if isinstance(e, CallBuiltin):
            out: frozenset[str] = frozenset()
            for a in e.args:
                if isinstance(a.type, PointerType):
                    out |= self.pointer_roots(a)
            return out
        if isinstance(e, Index):
            return self.pointer_roots(e.base)
        return frozenset()

    def fail(
        self, node: ast.AST | Loc, message: str, kind: type[CompileError] = KernelTypeError
    ) -> NoReturn:
        loc = node if isinstance(node, Loc) else self.loc(node)
        raise kind(message, loc)


def assigned_once(fdef: ast.FunctionDef) -> frozenset[str]:
    """Names stored exactly once in the function (one ``name = value``, no ``+=``, not a loop
    variable): their value is the one expression assigned, wherever they are read."""
    count: dict[str, int] = {}
    for node in ast.walk(fdef):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            count[node.id] = count.get(node.id, 0) + 1
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            count[node.target.id] = count.get(node.target.id, 0) + 1
        elif isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.target, ast.Name):
            count[node.target.id] = count.get(node.target.id, 0) + 1
    return frozenset(n for n, c in count.items() if c == 1)


def block_paths(fdef: ast.FunctionDef) -> dict[str, tuple[Any, ...]]:
    """For each name assigned in the function, the innermost block enclosing every use.

    A block path is a tuple of (id(statement), field) pairs from the function body down. C
    scopes variables by block while Python scopes them by function; declaring each variable in
    the innermost block holding all its uses keeps the C readable and correct.
    """
    uses: dict[str, list[tuple[Any, ...]]] = {}
    stores: set[str] = set()
    # name → (path of its first store, whether that store is a plain ``name = value``
    # statement, which runs on every pass through its block)
    first_store: dict[str, tuple[tuple[Any, ...], bool]] = {}
    loops: set[int] = set()

    def note(name: str, path: tuple[Any, ...]) -> None:
        uses.setdefault(name, []).append(path)

    def visit_expr(node: ast.AST, path: tuple[Any, ...]) -> None:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name):
                note(sub.id, path)
                if isinstance(sub.ctx, ast.Store):
                    stores.add(sub.id)
                    first_store.setdefault(sub.id, (path, False))

    def visit_block(stmts: list[ast.stmt], path: tuple[Any, ...]) -> None:
        for st in stmts:
            if isinstance(st, ast.For):
                loops.add(id(st))
                inner = (*path, (id(st), "body"))
                if isinstance(st.target, ast.Name):
                    first_store.setdefault(st.target.id, (inner, True))
                visit_expr(st.target, inner)
                visit_expr(st.iter, path)
                visit_block(st.body, inner)
                visit_block(st.orelse, (*path, (id(st), "orelse")))
            elif isinstance(st, (ast.If, ast.While)):
                if isinstance(st, ast.While):
                    loops.add(id(st))
                visit_expr(st.test, path)
                visit_block(st.body, (*path, (id(st), "body")))
                visit_block(st.orelse, (*path, (id(st), "orelse")))
            else:
                if (
                    isinstance(st, ast.Assign)
                    and len(st.targets) == 1
                    and isinstance(st.targets[0], ast.Name)
                ):
                    first_store.setdefault(st.targets[0].id, (path, True))
                elif (
                    isinstance(st, ast.AnnAssign)
                    and st.value is not None
                    and isinstance(st.target, ast.Name)
                ):
                    first_store.setdefault(st.target.id, (path, True))
                visit_expr(st, path)

    visit_block(fdef.body, ())
    out: dict[str, tuple[Any, ...]] = {}
    for name in stores:
        paths = uses[name]
        common = paths[0]
        for p in paths[1:]:
            n = 0
            while n < len(common) and n < len(p) and common[n] == p[n]:
                n += 1
            common = common[:n]
        if first_store.get(name) != (common, True):
            # First given a value only on some paths (a branch): inside a loop it may carry
            # a value from an earlier iteration, as Python variables do, so it is declared
            # outside every loop around its block.
            for i, (node_id, _) in enumerate(common):
                if node_id in loops:
                    common = common[:i]
                    break
        out[name] = common
    return out


def _addresses(t: Any) -> bool:
    """Values of type ``t`` point into memory (pointers, and arrays that decay to them)."""
    return isinstance(t, (PointerType, ArrayType))
