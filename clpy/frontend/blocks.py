"""Calls whose arguments the frontend builds itself (``Builtin.frontend``): device-side
enqueue and the kernel queries (``"block"``), and ``ndrange_2D``/``ndrange_3D`` (``"ndrange"``).

``clpy.enqueue_kernel(q, flags, nd, child, a, lo + 1, clpy.local_bytes(256))``: ``child`` is a
``@clpy.kernel`` or ``@clpy.func``; the arguments after it become the block's captures, except
``clpy.local_bytes(n)``, a ``local void *`` block argument of ``n`` bytes for a ``Local[T]``
parameter (spec §1.13.17 "Arguments that are a pointer type to local address space"). The
block may also be written as a lambda, as in C: ``enqueue_kernel(q, flags, nd, lambda l0:
child(a, l0), n)`` is ``^(local void *l0){child(a, l0);}, n``. The result is a
``BlockLiteral`` (clpy/ir/blocks.py) in the built-in call, followed by the sizes.

Captures are values taken when the block is made (spec §1.12.3). clpy evaluates them in the
enqueuing work-item and the emitter writes them inside the block, which is the same only if
nothing can change them in between, so a capture is built from variables, constants and
arithmetic (no memory reads, no work-item functions: ``get_global_id(0)`` in a block is the
child's id): assign anything else to a variable first. Pointers to local or private memory
cannot be captured (spec §1.13.17).

A kernel child is built in the same compile session; a kernel already being built (the
kernel enqueuing itself, or one of its enqueuers) is referred to by the ``FunctionRef`` its
build registered (``begin_kernel``), which is how recursive enqueues work.
"""

from __future__ import annotations

import ast
from typing import Any

from clpy.builtins.registry import Builtin
from clpy.errors import KernelTypeError
from clpy.frontend.context import CompileSession, PyValue
from clpy.ir.blocks import BlockLiteral, FunctionRef
from clpy.ir.nodes import (
    Binary,
    CallBuiltin,
    Cast,
    Compare,
    Const,
    Expr,
    Field,
    Function,
    Logical,
    NamedConst,
    Select,
    StructCons,
    Swizzle,
    Unary,
    VarRef,
    VectorCons,
)
from clpy.types import catalog as C
from clpy.types.core import AddressSpace, ArrayType, PointerType, Type
from clpy.types.enqueue import BlockType

# Built-in families whose calls only compute on their operands (safe inside a capture).
_PURE_FAMILIES = frozenset(
    {"math", "integer", "common", "integer/common", "geometric", "relational", "conversions"}
)


def build_call(cb: Any, b: Builtin, node: ast.Call) -> Expr:
    """The call of ``b`` (``b.frontend`` names the form) with its arguments built here."""
    if b.frontend == "ndrange":
        return _ndrange(cb, b, node)
    st = cb.state
    head: list[Expr] = []
    child: Any = None
    rest: list[ast.expr] = []
    lam: ast.Lambda | None = None
    for a in node.args:
        if child is not None:
            rest.append(a)
            continue
        if isinstance(a, ast.Constant) and a.value is None:  # NULL event list / event_ret
            head.append(NamedConst(C.int_, st.loc(a), "NULL", 0))
            continue
        if isinstance(a, ast.Lambda):  # lambda l0: child(x, l0), size0
            lam = a
            child, rest = _lambda_child(cb, b, a), list(a.body.args)  # type: ignore[attr-defined]
            continue
        v = cb.value(a)
        if isinstance(v, PyValue):
            if not _is_child(v.value):
                st.fail(
                    a,
                    f"{b.name}: {ast.unparse(a)!r} is not a value, a @clpy.kernel or a @clpy.func",
                )
            child = v.value
            continue
        head.append(v)
    if child is None:
        st.fail(
            node,
            f"{b.name} needs a child to run: a @clpy.kernel or @clpy.func "
            "followed by its arguments",
        )
    if lam is not None:
        captures, local_at, sizes = _lambda_args(cb, b, lam, node)
    else:
        captures, local_at, sizes = _plain_args(cb, b, rest)
    block = _block(cb, child, captures, tuple(local_at), node)
    args = [*head, block, *(sizes if b.name == "enqueue_kernel" else [])]
    result: Expr = cb.call_builtin(b, args, node)
    return result


def _plain_args(
    cb: Any, b: Builtin, rest: list[ast.expr]
) -> tuple[list[Expr], list[int], list[Expr]]:
    """``child, a, clpy.local_bytes(n), b``: captures, local-argument positions, sizes."""
    st = cb.state
    captures: list[Expr] = []
    local_at: list[int] = []
    sizes: list[Expr] = []
    for pos, a in enumerate(rest):
        if isinstance(a, ast.Call) and _is_local_bytes(cb, a.func):
            if len(a.args) != 1:
                st.fail(a, "clpy.local_bytes(n) takes the size in bytes")
            sizes.append(cb.coerce(cb.expr(a.args[0]), C.uint, a))
            local_at.append(pos)
            continue
        e = cb.expr(a)
        _check_capture(cb, b, e, a)
        captures.append(e)
    return captures, local_at, sizes


def _lambda_child(cb: Any, b: Builtin, lam: ast.Lambda) -> Any:
    """The kernel or device function a block written as a lambda calls."""
    st = cb.state
    body = lam.body
    if not isinstance(body, ast.Call) or body.keywords:
        msg = f"{b.name}: a block lambda calls a @clpy.kernel or @clpy.func: lambda: child(args...)"
        raise KernelTypeError(msg, st.loc(lam))
    v = cb.value(body.func)
    if not (isinstance(v, PyValue) and _is_child(v.value)):
        st.fail(
            body.func, f"{b.name}: {ast.unparse(body.func)!r} is not a @clpy.kernel or @clpy.func"
        )
    return v.value


def _lambda_args(
    cb: Any, b: Builtin, lam: ast.Lambda, node: ast.Call
) -> tuple[list[Expr], list[int], list[Expr]]:
    """``lambda l0, l1: child(x, l0, l1), size0, size1`` (spec: ``^(local void *l0, local void
    *l1){...}, size0, size1``): each lambda parameter is a local-memory block argument, passed
    as is to the child; the sizes in bytes follow the lambda, in its parameters' order."""
    st = cb.state
    names = [a.arg for a in lam.args.args]
    if lam.args.vararg or lam.args.kwarg or lam.args.kwonlyargs or lam.args.defaults:
        st.fail(lam, f"{b.name}: block lambda parameters are plain names (local void *)")
    after = node.args[node.args.index(lam) + 1 :]
    if len(after) != len(names):
        st.fail(
            node,
            f"{b.name}: the block lambda has {len(names)} local-memory parameter(s) "
            f"and {len(after)} size(s) follow it; give one size in bytes for each",
        )
    body = lam.body
    assert isinstance(body, ast.Call)
    captures: list[Expr] = []
    local_at: list[int] = []
    order: list[int] = []
    for pos, a in enumerate(body.args):
        if isinstance(a, ast.Name) and a.id in names:
            if names.index(a.id) in order:
                st.fail(a, f"{b.name}: block argument {a.id!r} is passed twice")
            local_at.append(pos)
            order.append(names.index(a.id))
            continue
        used = {n.id for n in ast.walk(a) if isinstance(n, ast.Name)} & set(names)
        if used:
            st.fail(
                a,
                f"{b.name}: the local-memory block argument {sorted(used)[0]!r} is "
                "passed to the child as it is (a Local[T] parameter)",
            )
        e = cb.expr(a)
        _check_capture(cb, b, e, a)
        captures.append(e)
    if len(order) != len(names):
        st.fail(lam, f"{b.name}: every block lambda parameter goes to the child once")
    sizes = [cb.coerce(cb.expr(after[k]), C.uint, after[k]) for k in order]
    return captures, local_at, sizes


def _is_child(obj: Any) -> bool:
    """A ``@clpy.kernel`` or ``@clpy.func`` (clpy/kernel.py; duck-typed: the frontend does not
    import the kernel objects, which import the frontend)."""
    return hasattr(obj, "is_kernel") and hasattr(obj, "build_for") and hasattr(obj, "parsed")


def _is_local_bytes(cb: Any, func: ast.expr) -> bool:
    try:
        v = cb.value(func)
    except Exception:  # noqa: BLE001 - not a compile-time name: not local_bytes
        return False
    return isinstance(v, PyValue) and getattr(v.value, "__clpy_local_bytes__", False)


def _check_capture(cb: Any, b: Builtin, e: Expr, node: ast.AST) -> None:
    st = cb.state
    t = e.type
    if isinstance(t, (PointerType, ArrayType)) and t.space in (
        AddressSpace.LOCAL,
        AddressSpace.PRIVATE,
    ):
        st.fail(
            node,
            f"{b.name}: a block cannot capture {ast.unparse(node)!r}, a pointer to "
            f"{t.space.title} memory (spec §1.13.17); pass Local[T] memory to the child with "
            "clpy.local_bytes(n)",
        )
    bad = _impure(e)
    if bad is not None:
        st.fail(
            node,
            f"{b.name}: the argument {ast.unparse(node)!r} would be evaluated when the child "
            f"runs, not now ({bad}); assign it to a variable first: a block captures values "
            "(spec §1.12.3)",
        )


def _impure(e: Expr) -> str | None:
    """Why ``e`` may give another value inside the block, or None."""
    if isinstance(e, (Const, NamedConst, VarRef)):
        return None
    if isinstance(e, (Binary, Compare, Logical)):
        return _impure(e.left) or _impure(e.right)
    if isinstance(e, Unary):
        return _impure(e.operand)
    if isinstance(e, Cast):
        return _impure(e.value)
    if isinstance(e, Select):
        return _impure(e.cond) or _impure(e.if_true) or _impure(e.if_false)
    if isinstance(e, (Swizzle, Field)):
        return _impure(e.base)
    if isinstance(e, (VectorCons, StructCons)):
        parts = e.parts if isinstance(e, VectorCons) else e.fields
        return next((r for r in map(_impure, parts) if r), None)
    if isinstance(e, CallBuiltin):
        if e.builtin.family in _PURE_FAMILIES and not e.builtin.writes_args:
            return next((r for r in map(_impure, e.args) if r), None)
        return f"it calls {e.builtin.name}"
    return "it reads memory or calls a function"


def _block(
    cb: Any, child: Any, captures: list[Expr], local_at: tuple[int, ...], node: ast.Call
) -> BlockLiteral:
    st = cb.state
    names: list[str] = child.param_names
    kind = "kernel" if child.is_kernel else "device function"
    if len(names) != len(captures) + len(local_at):
        st.fail(
            node,
            f"child {kind} {child.__name__} takes {len(names)} argument(s), got "
            f"{len(captures) + len(local_at)}",
        )
    anns = child.annotations()
    types: list[tuple[str, Type]] = []
    cargs: list[Expr] = []
    ci = 0
    for pos, name in enumerate(names):
        ann = anns.get(name)
        if ann is not None and not isinstance(ann, Type):
            st.fail(
                node,
                f"child {kind} {child.__name__}: constexpr parameter {name!r} "
                "cannot be passed through a block; make it a plain parameter",
            )
        if pos in local_at:
            if not (isinstance(ann, PointerType) and ann.space is AddressSpace.LOCAL):
                st.fail(
                    node,
                    f"parameter {name!r} of {child.__name__} receives clpy.local_bytes(...): "
                    "annotate it clpy.Local[T]",
                )
            types.append((name, ann))
            continue
        e = captures[ci]
        ci += 1
        t = ann if ann is not None else e.type
        if isinstance(t, ArrayType):  # a global array decays to a pointer (never here today)
            t = PointerType(t.elem, t.space)
        types.append((name, t))
        cargs.append(cb.coerce(e, t, node))
    ref = _child_ref(cb, child, tuple(types), node)
    fn = ref.function
    for (name, t), pos in zip(types, range(len(types))):
        if pos in local_at or not isinstance(t, PointerType):
            continue
        arg = cargs[pos - sum(1 for k in local_at if k < pos)]
        writes = name in fn.written if fn is not None else t.space is not AddressSpace.CONSTANT
        if writes and isinstance(arg.type, PointerType):
            cb.note_write(arg, node)
    return BlockLiteral(BlockType(len(local_at)), st.loc(node), ref, tuple(cargs), local_at)


def _child_ref(cb: Any, child: Any, types: tuple[tuple[str, Type], ...], node: ast.AST) -> Any:
    st = cb.state
    session: CompileSession = st.session
    key = _key(child.parsed, types)
    ref = session.blocks.get(key)
    if ref is None:
        if child.is_kernel:
            child.build_for(types, session, st.loc(node))
            ref = session.blocks[key]
        else:
            ref = FunctionRef(child.__name__, child.build_for(types, session, st.loc(node)))
            session.blocks[key] = ref
    fn = ref.function
    if fn is not None:  # built (not an enclosing build still in progress): emit it with us
        for f in (fn, *fn.callees):
            if f not in st.callees:
                st.callees.append(f)
    return ref


def _key(parsed: Any, types: tuple[tuple[str, Type], ...]) -> tuple[Any, ...]:
    return (id(parsed), tuple(t for _, t in types))


def begin_kernel(
    session: CompileSession, parsed: Any, params: Any, constexprs: dict[str, Any]
) -> FunctionRef | None:
    """Called as a kernel's build starts: registers the ``FunctionRef`` blocks enqueuing this
    kernel (with these parameter types) refer to. None for constexpr specializations, which
    a block cannot name."""
    if constexprs:
        return None
    key = _key(parsed, tuple(params))
    ref = session.blocks.get(key)
    if ref is None:
        ref = FunctionRef(parsed.tree.name)
        session.blocks[key] = ref
    return ref if ref.function is None else None


def finish_kernel(ref: FunctionRef | None, fn: Function) -> None:
    if ref is not None and ref.function is None:
        ref.function = fn


def _ndrange(cb: Any, b: Builtin, node: ast.Call) -> Expr:
    """``ndrange_2D((gx, gy))``, ``((gx, gy), (lx, ly))``, ``((ox, oy), (gx, gy), (lx, ly))``:
    each argument a tuple of as many sizes as dimensions, passed flat to the built-in."""
    st = cb.state
    dims = int(b.name[len("ndrange_")])
    args: list[Expr] = []
    for a in node.args:
        if isinstance(a, (ast.Tuple, ast.List)) and len(a.elts) == dims:
            args.extend(cb.expr(x) for x in a.elts)
            continue
        st.fail(
            a,
            f"{b.name} takes tuples of {dims} sizes: {b.name}((g0, ...), [(l0, ...)]) or "
            "(offset, global, local)",
        )
    result: Expr = cb.call_builtin(b, args, node)
    return result


def rebuilt_kernel(
    session: CompileSession, parsed: Any, params: Any, old: Function, new: Function
) -> None:
    """A pass replaced a kernel's function (``fp_contract``): blocks enqueuing the kernel
    itself run the new one."""
    ref = session.blocks.get(_key(parsed, tuple(params)))
    if ref is not None and ref.function is old:
        ref.function = new
