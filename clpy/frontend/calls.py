"""Calls in kernel code: built-ins, type constructors, Python built-ins, ``@clpy.func``.

``CallBuilder`` is owned by the expression builder (exprs.py), which hands every ``ast.Call``
to it; it reaches back for sub-expressions through the narrow ``ExprSide`` interface.
"""

from __future__ import annotations

import ast
import builtins as py_builtins
from collections.abc import Callable
from typing import Any, Protocol

from clpy.builtins.python_aliases import PYTHON_ALIASES
from clpy.builtins.registry import REGISTRY, ArgInfo, Builtin, NoMatch, Overload
from clpy.errors import ConstantError, UnsupportedSyntaxError
from clpy.frontend import blocks, pointers
from clpy.frontend.context import FuncState, PyValue
from clpy.frontend.helpers import elem_type, is_weak
from clpy.ir.fold import cast_const
from clpy.ir.nodes import (
    CallBuiltin,
    Cast,
    Compare,
    Const,
    Expr,
    NamedConst,
    StructCons,
    VarRef,
    VectorCons,
)
from clpy.types import catalog as C
from clpy.types.annotations import resolve_annotation
from clpy.types.core import ArrayType, ScalarType, Type, VectorType
from clpy.types.structs import StructType


class ExprSide(Protocol):
    """What building a call needs from the expression builder."""

    state: FuncState

    def value(self, node: ast.expr) -> Expr | PyValue: ...

    def expr(self, node: ast.expr) -> Expr: ...

    def coerce(self, e: Expr, t: Type, node: ast.AST) -> Expr: ...

    def join(self, a: Expr, b: Expr, node: ast.AST) -> Type: ...


class CallBuilder:
    """Builds calls. It is also the ``builder`` that ``__clpy_call__(builder, node)`` hooks
    receive (``@clpy.func``, reductions): those use ``state``, ``value``, ``expr``,
    ``coerce``, ``call_builtin`` and ``note_write``."""

    def __init__(self, ex: ExprSide) -> None:
        self.state: FuncState = ex.state
        self.value: Callable[[ast.expr], Expr | PyValue] = ex.value
        self.expr: Callable[[ast.expr], Expr] = ex.expr
        self.coerce: Callable[[Expr, Type, ast.AST], Expr] = ex.coerce
        self.join: Callable[[Expr, Expr, ast.AST], Type] = ex.join
        self.note_write: Callable[[Expr, ast.AST], None] = ex.state.note_write

    def call(self, node: ast.Call) -> Expr | PyValue:
        """``f(args)``: ``f`` is a compile-time Python object (never a kernel value)."""
        callee = self.value(node.func)
        if not isinstance(callee, PyValue):
            self.state.fail(node.func, f"a value of type {callee.type} is not callable")
        fn = callee.value
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        ):
            self.state.fail(
                node, "*args and **kwargs are not supported in kernel calls", UnsupportedSyntaxError
            )
        if node.keywords and not getattr(fn, "__clpy_accepts_keywords__", False):
            name = getattr(fn, "name", getattr(fn, "__name__", "this function"))
            self.state.fail(
                node.keywords[0].value if hasattr(node.keywords[0], "value") else node,
                f"keyword arguments are not supported in calls to {name}; pass them by position",
                UnsupportedSyntaxError,
            )
        if isinstance(fn, Builtin) and fn.fold_type is not None:
            return self.fold_type_call(fn, node)
        if isinstance(fn, Builtin) and fn.frontend:  # enqueue_kernel, ndrange_2D ...
            return blocks.build_call(self, fn, node)
        if isinstance(fn, Builtin) and fn.index:
            return self.index_call(fn, node)
        if isinstance(fn, Builtin):
            arg_nodes: list[ast.expr] = list(node.args)
            if fn.spread_sequences:  # wait_group_events([e1, e2])
                arg_nodes = [
                    e
                    for a in arg_nodes
                    for e in (a.elts if isinstance(a, (ast.List, ast.Tuple)) else [a])
                ]
            args = [self.expr(a) for a in arg_nodes]
            defaults = fn.defaults
            fewest = min((len(ov.params) for ov in fn.overloads), default=0)
            if defaults and len(args) < fewest:
                for d in defaults[len(defaults) - (fewest - len(args)) :]:
                    args.append(NamedConst(d.type, self.state.loc(node), d.name, d.value))
            return self.call_builtin(fn, args, node)
        if isinstance(fn, (ScalarType, VectorType, StructType)):
            return self.construct(fn, node)
        if fn in PYTHON_ALIASES:
            return self.python_alias(fn, node)
        if getattr(fn, "__clpy_addr__", False):
            return pointers.address_of(self, node)
        build = getattr(fn, "__clpy_call__", None)
        if build is not None:
            return build(self, node)
        if fn is py_builtins.len:  # len(TABLE), len(tile): an array's first dimension
            if len(node.args) != 1 or node.keywords:
                self.state.fail(node, "len() takes one array")
            arr = self.value(node.args[0])
            t = getattr(arr, "type", None)
            if not isinstance(t, ArrayType):
                self.state.fail(node, "len() of a kernel value needs an array (its size is known)")
            return Const(C.int_, self.state.loc(node), t.shape[0], True)
        if fn is py_builtins.range:
            self.state.fail(
                node,
                "range() is only allowed as the iterable of a for loop",
                UnsupportedSyntaxError,
            )
        if fn is py_builtins.print:
            self.state.fail(
                node, "print() is a statement in kernels, not a value", UnsupportedSyntaxError
            )
        name = getattr(fn, "__name__", repr(fn))
        self.state.fail(
            node.func,
            f"{name!r} cannot be called in kernel code (not a clpy built-in, type or @clpy.func)",
            UnsupportedSyntaxError,
        )

    # ------------------------------------------------------------------ built-ins

    def fold_type_call(self, b: Builtin, node: ast.Call) -> Expr:
        """A built-in like ``vec_step`` that depends only on its operand's type (a value or a
        type, not evaluated, as C's ``sizeof``): folded to a constant."""
        if len(node.args) != 1:
            self.state.fail(node, f"{b.name} takes one argument, got {len(node.args)}")
        v = self.value(node.args[0])
        t: Type
        if isinstance(v, PyValue):
            if not isinstance(v.value, (ScalarType, VectorType)):
                self.state.fail(node.args[0], f"{b.name} takes a value or a scalar/vector type")
            t = v.value
        else:
            t = v.type
        try:
            assert b.fold_type is not None
            value = b.fold_type(b, t)
        except NoMatch as e:
            self.state.fail(node, str(e))
        return Const(C.int_, self.state.loc(node), value)

    def index_call(self, b: Builtin, node: ast.Call) -> Expr:
        """A work-item query: a signed ``int`` unless a last argument names another integer
        type (``get_global_id(0, clpy.size_t)``); converted once at the call (workitem.py)."""
        nparams = max((len(ov.params) for ov in b.overloads), default=0)
        want: ScalarType = C.int_
        arg_nodes = list(node.args)
        if len(arg_nodes) == nparams + 1:
            tnode = arg_nodes.pop()
            v = self.value(tnode)
            t = v.value if isinstance(v, PyValue) else None
            if t is not None and not isinstance(t, ScalarType):
                try:
                    t = resolve_annotation(t)
                except TypeError:
                    t = None
            if not (isinstance(t, ScalarType) and t.is_int and t.bits >= 32):
                self.state.fail(
                    tnode,
                    f"the last argument of {b.name} names its result type: int32, int64, "
                    f"uint32, uint64 or size_t, got {ast.unparse(tnode)!r}",
                )
            want = t
        call = self.call_builtin(b, [self.expr(a) for a in arg_nodes], node)
        return call if call.type is want else Cast(want, call.loc, call)

    def call_builtin(self, b: Builtin, args: list[Expr], node: ast.AST) -> Expr:
        """A call of ``b`` on already-built ``args``: picks the overload, converts the
        arguments to its parameter types, notes the pointers it writes and uniform calls."""
        # a local assigned once from a constant is that constant (flags = A | B; barrier(flags))
        known = self.state.const_values
        folded: list[VarRef] = []
        args = list(args)
        for i, a in enumerate(args):
            if i in b.const_args and isinstance(a, VarRef) and a.var in known:
                folded.append(a)  # still a read of the variable (definite assignment)
                args[i] = known[a.var]
        if folded:
            self.state.folded_reads.setdefault(self.state.loc(node), []).extend(folded)
        infos = [
            ArgInfo(a.type, is_weak(a), a.value if isinstance(a, (Const, NamedConst)) else None)
            for a in args
        ]
        try:
            ov = b.resolve(infos)
        except NoMatch as e:
            ov = self.resolve_decayed(b, args, infos, node, e)
        for i in b.const_args:
            if i < len(args) and not isinstance(args[i], (Const, NamedConst)):
                self.state.fail(
                    node,
                    f"argument {i + 1} of {b.name} must be a compile-time constant",
                    ConstantError,
                )
        cargs = tuple(self.coerce(a, p, node) for a, p in zip(args, ov.params))
        for i in b.writes_args:
            if i < len(cargs):
                self.note_write(cargs[i], node)
        if b.uniform:
            self.state.note_uniform_call(b, node)
        return CallBuiltin(ov.ret, self.state.loc(node), b, ov, cargs)

    def resolve_decayed(
        self, b: Builtin, args: list[Expr], infos: list[ArgInfo], node: ast.AST, err: NoMatch
    ) -> Overload:
        """Retry with arrays as pointers to their first elements (``remquo(x, y, q)`` with
        ``q = clpy.private_array(int32, 1)``; clpy/frontend/pointers.py); coercing the
        arguments to the overload's pointer parameters then does the decay."""
        if not any(pointers.is_decayable(a) for a in args):
            self.state.fail(node, str(err))
        decayed = [
            ArgInfo(pointers.decay(self.state, a, node).type) if pointers.is_decayable(a) else i
            for a, i in zip(args, infos)
        ]
        try:
            return b.resolve(decayed)
        except NoMatch:
            self.state.fail(node, str(err))

    # ------------------------------------------------------------------ constructors

    def construct(self, t: ScalarType | VectorType | StructType, node: ast.Call) -> Expr:
        return self.construct_from(t, [self.expr(a) for a in node.args], node)

    def construct_from(
        self, t: ScalarType | VectorType | StructType, args: list[Expr], node: ast.AST
    ) -> Expr:
        loc = self.state.loc(node)
        if isinstance(t, ScalarType):
            if len(args) != 1:
                self.state.fail(node, f"{t}() takes exactly one argument")
            a = args[0]
            if not isinstance(a.type, ScalarType):
                hint = f"; use convert_{t}(...)" if isinstance(a.type, VectorType) else ""
                self.state.fail(node, f"cannot convert {a.type} to {t}{hint}")
            if t is C.bool_:
                return Compare(C.bool_, loc, "!=", a, Const(a.type, loc, 0))
            if isinstance(a, Const):
                c = cast_const(a, t)
                return Const(t, loc, c.value, False)
            return a if a.type is t else Cast(t, loc, a)
        if isinstance(t, VectorType):
            return self.vector(t, args, node)
        return self.struct_value(t, args, node)

    def vector(self, t: VectorType, args: list[Expr], node: ast.AST) -> Expr:
        loc = self.state.loc(node)
        if len(args) == 1 and isinstance(args[0].type, ScalarType):
            return VectorCons(t, loc, (self.coerce(args[0], t.elem, node),))
        parts: list[Expr] = []
        total = 0
        for a in args:
            at = a.type
            if isinstance(at, VectorType):
                if at.elem is not t.elem:
                    self.state.fail(
                        node,
                        f"{t}(...) part of type {at} has a different element "
                        f"type; use convert_{VectorType(t.elem, at.n)}(...)",
                    )
                parts.append(a)
                total += at.n
            elif isinstance(at, ScalarType):
                parts.append(self.coerce(a, t.elem, node))
                total += 1
            else:
                self.state.fail(node, f"{at} cannot be part of a vector")
        if total != t.n:
            self.state.fail(node, f"{t}(...) needs {t.n} components in all, got {total}")
        return VectorCons(t, loc, tuple(parts))

    def struct_value(self, t: StructType, args: list[Expr], node: ast.AST) -> Expr:
        if len(args) != len(t.fields):
            self.state.fail(
                node,
                f"{t.name}(...) takes {len(t.fields)} fields "
                f"({', '.join(n for n, _ in t.fields)}), got {len(args)}",
            )
        vals = tuple(self.coerce(a, ft, node) for a, (_, ft) in zip(args, t.fields))
        return StructCons(t, self.state.loc(node), vals)

    # ------------------------------------------------------------------ Python built-ins

    def python_alias(self, fn: Any, node: ast.Call) -> Expr:
        name = PYTHON_ALIASES[fn]
        args = [self.expr(a) for a in node.args]
        if name in ("int", "float", "bool"):
            target = {"int": C.int_, "float": C.float_, "bool": C.bool_}[name]
            if len(args) != 1 or not isinstance(args[0].type, ScalarType):
                self.state.fail(node, f"{name}() takes one scalar argument")
            return self.construct_from(target, args, node)
        if name in ("min", "max"):
            if len(args) < 2:
                self.state.fail(node, f"{name}() in kernels takes two or more arguments")
            out = args[0]
            for a in args[1:]:
                t = self.join(out, a, node)
                out = self.call_builtin(
                    REGISTRY[name], [self.coerce(out, t, node), self.coerce(a, t, node)], node
                )
            return out
        if name == "abs":
            if len(args) != 1:
                self.state.fail(node, "abs() takes one argument")
            a = args[0]
            if elem_type(a.type).is_float:
                return self.call_builtin(REGISTRY["fabs"], args, node)
            r = self.call_builtin(REGISTRY["abs"], args, node)
            # Python's abs keeps the type; OpenCL's abs returns the unsigned type.
            return r if r.type is a.type else Cast(a.type, r.loc, r)
        return self.call_builtin(REGISTRY[name], args, node)


__all__ = ["CallBuilder", "ExprSide"]
