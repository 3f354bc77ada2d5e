"""What the checked code generator (``checks.py``) needs to know about a kernel's statements
before it emits detectors: which statements read memory or call atomics, which local memories a
block writes, which memories atomics act on, which variables keep their memory for the whole
kernel, and where an indexed array lives. Pure functions of the typed IR."""

from __future__ import annotations

from collections.abc import Sequence

from clpy.ir.nodes import (
    Assign,
    Binary,
    Break,
    CallBuiltin,
    CallFunc,
    Cast,
    Continue,
    Declare,
    Expr,
    Function,
    Index,
    Return,
    Stmt,
    Swizzle,
    Var,
    VarRef,
)
from clpy.ir.walk import walk
from clpy.types.core import AddressSpace, ArrayType, PointerType
from clpy_sim.native.cgen_group import _walk


def memory_reads(stmts: Sequence[Stmt], cond: Expr | None) -> tuple[bool, bool]:
    """(whether these statements read memory, whether they call atomics or functions)."""
    reads = False
    calls = False
    for e in walk([*stmts] if cond is None else [cond, *stmts]):
        if isinstance(e, Index) and isinstance(e.base.type, PointerType):
            reads = True
        elif isinstance(e, Index) and isinstance(e.base.type, ArrayType):
            reads = reads or array_space(e) is AddressSpace.LOCAL
        elif isinstance(e, CallFunc):
            calls = True
        elif isinstance(e, CallBuiltin):
            if e.builtin.atomic is not None:
                calls = True
            if e.builtin.vector_access is not None:
                reads = True
    return reads, calls


def is_local(v: Var) -> bool:
    t = v.type
    return isinstance(t, (ArrayType, PointerType)) and t.space is AddressSpace.LOCAL


def root_local(e: Expr) -> Var | None:
    """The local memory variable (a local array, a ``Local[T]`` parameter) that ``e`` (the
    base of an element access) indexes, or None."""
    while isinstance(e, Index):
        e = e.base
    if isinstance(e, Cast):
        e = e.value
    if isinstance(e, VarRef) and is_local(e.var):
        return e.var
    return None


def local_writes(stmts: Sequence[Stmt]) -> set[Var] | None:
    """The local memory variables ``stmts`` may write with plain stores (atomics are exempt
    from the race checker), or None when they may write local memory through something else
    (a pointer variable, a device function, a vstore)."""
    out: set[Var] = set()
    unknown = False

    for s in _walk(stmts):
        if isinstance(s, Assign) and not isinstance(s.target, VarRef):
            t: Expr = s.target
            while isinstance(t, Swizzle):
                t = t.base
            base = t.base if isinstance(t, Index) else t
            v = root_local(base)
            if v is not None:
                out.add(v)
            else:
                root = base
                while isinstance(root, Index):
                    root = root.base
                bt = root.type
                if not (
                    isinstance(root, VarRef)
                    and isinstance(bt, (ArrayType, PointerType))
                    and bt.space in (AddressSpace.GLOBAL, AddressSpace.PRIVATE)
                    and (isinstance(bt, ArrayType) or not assigned(root.var, stmts))
                ):
                    unknown = True
    for x in walk(stmts):  # a device function or a vstore may write local memory
        if isinstance(x, CallFunc):
            unknown = True
        elif isinstance(x, CallBuiltin):
            va = x.builtin.vector_access
            if va is not None and va.store:
                unknown = True
    return None if unknown else out


def assigned(v: Var, stmts: Sequence[Stmt]) -> bool:
    return any(
        isinstance(s, Assign) and isinstance(s.target, VarRef) and s.target.var is v
        for s in _walk(stmts)
    )


def has_jump(s: Stmt) -> bool:
    return any(isinstance(x, (Break, Continue, Return)) for x in _walk([s]))


def root(e: Expr) -> Var | None:
    """The kernel parameter or local array a pointer or element expression is based on."""
    while True:
        if isinstance(e, Index):
            e = e.base
        elif isinstance(e, Cast):
            e = e.value
        elif isinstance(e, Binary) and isinstance(e.left.type, (PointerType, ArrayType)):
            e = e.left
        elif isinstance(e, Binary) and isinstance(e.right.type, (PointerType, ArrayType)):
            e = e.right
        else:
            break
    return e.var if isinstance(e, VarRef) else None


def atomic_roots(fn: Function) -> set[Var] | None:
    """The memories (kernel parameters, local arrays) ``fn``'s atomics act on; None: not known
    (atomics in a device function, or through a pointer variable)."""
    out: set[Var] = set()
    if any(has_atomics(f.body) for f in fn.callees):
        return None
    assigned = {
        x.target.var
        for x in _walk(fn.body)
        if isinstance(x, Assign) and isinstance(x.target, VarRef)
    }
    bad = False
    for x in walk(fn.body):
        if isinstance(x, CallBuiltin) and x.builtin.atomic is not None and x.args:
            if x.builtin.atomic.op != "fence":
                v = root(x.args[0])
                if v is None or v in assigned or not (v in fn.params or is_local(v)):
                    bad = True
                else:
                    out.add(v)
    return None if bad else out


def fixed_memories(fn: Function) -> set[Var]:
    """The kernel's parameters it never reassigns and its arrays: memories by name."""
    assigned = {
        x.target.var
        for x in _walk(fn.body)
        if isinstance(x, Assign) and isinstance(x.target, VarRef)
    }
    out = {p for p in fn.params if p not in assigned}
    for x in _walk(fn.body):
        if isinstance(x, Declare) and isinstance(x.var.type, ArrayType):
            out.add(x.var)
    return out


def read_roots(stmts: list[Stmt], cond: Expr) -> set[Var] | None:
    """The memories element accesses in ``stmts`` and ``cond`` are based on; None: one is not
    known (a pointer variable)."""
    out: set[Var] = set()
    bad = False
    for x in walk([cond, *stmts]):
        if isinstance(x, Index) and isinstance(x.base.type, (PointerType, ArrayType)):
            v = root(x.base)
            if v is None:
                bad = True
            else:
                out.add(v)
        if isinstance(x, CallBuiltin) and x.builtin.vector_access is not None:
            bad = True
    return None if bad else out


def has_atomics(stmts: Sequence[Stmt]) -> bool:
    """Whether ``stmts`` call an atomic other than a fence."""
    return any(
        isinstance(x, CallBuiltin)
        and x.builtin.atomic is not None
        and x.builtin.atomic.op != "fence"
        for x in walk(stmts)
    )


def array_space(e: Expr) -> AddressSpace | None:
    while isinstance(e, Index):
        e = e.base
    t = e.type
    return t.space if isinstance(t, ArrayType) else None
