"""Build one typed ``Function`` from a parsed Python function and concrete parameter types."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from clpy.builtins.registry import REGISTRY
from clpy.errors import CompileError, KernelTypeError, UnsupportedSyntaxError
from clpy.frontend.blocks import begin_kernel, finish_kernel
from clpy.frontend.context import (
    CompileSession,
    FuncState,
    Restart,
    assigned_once,
    block_paths,
)
from clpy.frontend.definite import check_definite_assignment
from clpy.frontend.exprs import ExprBuilder
from clpy.frontend.source import ParsedFunction
from clpy.frontend.stmts import StmtBuilder
from clpy.ir.blocks import FunctionRef
from clpy.ir.nodes import Function, Stmt, Var
from clpy.ir.walk import collect_structs, walk
from clpy.types import catalog as C
from clpy.types.core import Type

_MAX_RESTARTS = 8


def check_signature(parsed: ParsedFunction) -> None:
    """Reject parameter forms kernels cannot have (``*args``, defaults, keyword-only ...)."""
    a = parsed.tree.args
    bad = None
    if a.vararg is not None:
        bad = a.vararg
    elif a.kwarg is not None:
        bad = a.kwarg
    elif a.kwonlyargs:
        bad = a.kwonlyargs[0]
    elif a.posonlyargs:
        bad = a.posonlyargs[0]
    if bad is not None:
        raise UnsupportedSyntaxError(
            "kernel and device-function parameters must be plain positional names "
            "(no *args, **kwargs, keyword-only or positional-only markers)",
            parsed.loc(bad),
        )
    if a.defaults:
        raise UnsupportedSyntaxError(
            "default parameter values are not supported in kernels", parsed.loc(a.defaults[0])
        )
    for dec in parsed.tree.decorator_list:
        del dec  # decorators are ours; nothing to check


def build_function(
    parsed: ParsedFunction,
    params: Sequence[tuple[str, Type]],
    constexprs: dict[str, Any],
    is_kernel: bool,
    session: CompileSession,
    ret: Type | None = None,
    name: str | None = None,
) -> Function:
    """Type-check and translate ``parsed`` for the given parameter types.

    Variables first assigned from an untyped literal are widened when a later assignment needs
    it (``acc = 0; acc += x[i]`` with float ``x`` makes ``acc`` a float); that restarts the
    build with a type hint, at most a few times.
    """
    if is_kernel and parsed.tree.name in REGISTRY:
        # C hosts call a kernel by its name, so it is not renamed like a device function;
        # OpenCL compilers refuse a kernel named like a built-in (PoCL: INVALID_KERNEL_NAME).
        raise KernelTypeError(
            f"kernel name {parsed.tree.name!r} is an OpenCL built-in: a kernel cannot have "
            "that name; rename the function",
            parsed.loc(parsed.tree),
        )
    # blocks enqueuing this kernel (itself included) refer to it before it is built
    self_ref = begin_kernel(session, parsed, params, constexprs) if is_kernel else None
    hints: dict[str, Type] = {}
    decl_block = block_paths(parsed.tree)
    once = assigned_once(parsed.tree)
    refuted: set[str] = set()
    # Each restart widens one variable, at most twice (int → float → double), or drops one
    # assumed range fact (clpy/frontend/ranges.py).
    for _ in range(_MAX_RESTARTS + 3 * len(decl_block)):
        state = FuncState(
            parsed,
            session,
            is_kernel,
            constexprs,
            hints,
            ret_type=ret,
            ret_annotated=ret is not None,
        )
        state.decl_block = decl_block
        state.assigned_once = once
        state.nonneg_refuted = refuted
        param_vars = []
        for pname, ptype in params:
            v = Var(pname, ptype, parsed.loc(_arg_node(parsed.tree, pname)), is_param=True)
            param_vars.append(v)
            state.vars[pname] = v
        builder = StmtBuilder(state, ExprBuilder(state))
        try:
            body = builder.block(parsed.tree.body, ())
        except Restart:
            continue
        except CompileError:
            if state.restart_pending:  # an error caused by a variable not yet widened
                continue
            raise
        if state.restart_pending:
            continue
        break
    else:  # pragma: no cover - widening converges in at most a couple of rounds
        raise KernelTypeError("type inference did not converge", parsed.loc(parsed.tree))
    ret_type = C.void if is_kernel else (state.ret_type or C.void)
    fn = Function(
        name=name or parsed.tree.name,
        params=tuple(param_vars),
        ret=ret_type,
        body=body,
        is_kernel=is_kernel,
        loc=parsed.loc(parsed.tree),
        source_file=parsed.file,
        written=frozenset(_close_written(state.written, state.aliases)),
        callees=_live_callees(body, state.callees),
    )
    check_definite_assignment(fn, state.annotated, state.folded_reads)
    fn = _with_structs(fn)
    finish_kernel(self_ref, fn)
    return fn


def _live_callees(body: tuple[Stmt, ...], callees: list[Function]) -> tuple[Function, ...]:
    """The device functions the finished body still reaches, in the order they were met.

    The builder notes a callee when it types the call, also in a branch of a compile-time
    condition that it then folds away (``if RAKE: rake(...)`` with ``RAKE`` a Python
    constant); such a function is not part of the program and is not emitted. References are
    calls, user-defined reduction combiners and device-enqueued children (any IR field holding
    a ``Function`` or a built ``FunctionRef``); each callee's own ``callees`` is already live.
    """
    live: set[int] = set()
    todo: list[Function] = []
    for n in walk(body):
        for v in n.__dict__.values():
            if isinstance(v, FunctionRef):
                v = v.function
            if isinstance(v, Function) and id(v) not in live:
                live.add(id(v))
                todo.append(v)
    while todo:
        for c in todo.pop().callees:
            if id(c) not in live:
                live.add(id(c))
                todo.append(c)
    return tuple(f for f in callees if id(f) in live)


def _close_written(written: set[str], aliases: dict[str, frozenset[str]]) -> set[str]:
    """Writing through a local pointer writes what it may point into, even when the alias
    was made after the write in program order (a loop that re-points ``p``)."""
    out = set(written)
    changed = True
    while changed:
        changed = False
        for name, roots in aliases.items():
            if name in out and not roots <= out:
                out |= roots
                changed = True
    return out


def _with_structs(fn: Function) -> Function:
    return replace(fn, structs=collect_structs(fn))


def _arg_node(tree: ast.FunctionDef, name: str) -> ast.AST:
    for a in tree.args.args:
        if a.arg == name:
            return a
    return tree
