"""Python statements → typed IR statements: blocks, variables, assignment, loops.

``StmtBuilder`` holds an ``ExprBuilder`` (exprs.py) for every expression it meets, as the
emitter's ``StmtEmitter`` holds an ``ExprEmitter``; per-function state is ``FuncState``.
"""

from __future__ import annotations

import ast
import builtins as py_builtins
from typing import Any

from clpy.builtins.samplers import SamplerSpec
from clpy.errors import ConstantError, UndefinedNameError, UnsupportedSyntaxError
from clpy.frontend import program_data, ranges
from clpy.frontend.context import FuncState, PyValue
from clpy.frontend.exprs import BINOPS, ExprBuilder
from clpy.frontend.helpers import c_compound, elem_type, is_weak, pure, range_type
from clpy.ir.nodes import (
    Assert,
    Assign,
    Binary,
    Break,
    Const,
    Continue,
    Declare,
    Expr,
    ExprStmt,
    Field,
    For,
    If,
    Index,
    NamedConst,
    Print,
    Return,
    Stmt,
    Swizzle,
    Var,
    VarRef,
    While,
)
from clpy.types import catalog as C
from clpy.types import rules
from clpy.types.annotations import resolve_annotation
from clpy.types.core import AddressSpace, ArrayType, PointerType, ScalarType, Type, VectorType
from clpy.types.images import ImageType

_UNSUPPORTED_STMTS: dict[type, str] = {
    ast.ClassDef: "class definition",
    ast.FunctionDef: "nested function definition",
    ast.AsyncFunctionDef: "async function",
    ast.Try: "try statement",
    ast.With: "with statement",
    ast.AsyncWith: "async with",
    ast.AsyncFor: "async for",
    ast.Raise: "raise statement",
    ast.Import: "import statement",
    ast.ImportFrom: "import statement",
    ast.Global: "global statement",
    ast.Nonlocal: "nonlocal statement",
    ast.Delete: "del statement",
}
if hasattr(ast, "Match"):
    _UNSUPPORTED_STMTS[ast.Match] = "match statement"
if hasattr(ast, "TryStar"):
    _UNSUPPORTED_STMTS[ast.TryStar] = "try statement"

# Widening of a variable first assigned from an untyped literal (``acc = 0`` then ``acc += x``
# with x float): the variable takes the wider type, as a Python user expects.
_WIDEN_INT = (C.long, C.ulong, C.uint, C.float_, C.double, C.half)


class StmtBuilder:
    """Builds a function body block by block; expressions go to its ``ExprBuilder``."""

    def __init__(self, state: FuncState, ex: ExprBuilder) -> None:
        self.state = state
        self.ex = ex
        # The block being built (a path as in ``context.block_paths``) and, per enclosing
        # block, the variables to declare there before the statement being built.
        self._path: tuple[Any, ...] = ()
        self._hoisted: dict[tuple[Any, ...], list[Var]] = {}

    # ------------------------------------------------------------------ blocks

    def block(self, stmts: list[ast.stmt], path: tuple[Any, ...]) -> tuple[Stmt, ...]:
        """The statements of one block; ``path`` names it (``()`` for the function body)."""
        saved = self._path
        self._path = path
        out: list[Stmt] = []
        pending = self._hoisted.setdefault(path, [])
        for st in stmts:
            before = len(pending)
            stmts_out = self.stmt(st)
            # Variables first assigned inside ``st`` but used after it are declared just
            # before it (C scopes by block, Python by function).
            out.extend(Declare(v.loc, v, None) for v in pending[before:])
            out.extend(stmts_out)
        self._path = saved
        self._hoisted.pop(path, None)
        return tuple(out)

    def stmt(self, node: ast.stmt) -> list[Stmt]:
        """One statement → zero or more IR statements (``stmt_<ast class>`` each)."""
        kind = _UNSUPPORTED_STMTS.get(type(node))
        if kind is not None:
            self.state.fail(node, f"{kind} is not supported in kernels", UnsupportedSyntaxError)
        method = getattr(self, f"stmt_{type(node).__name__}", None)
        if method is None:
            self.state.fail(
                node,
                f"{type(node).__name__} statement is not supported in kernels",
                UnsupportedSyntaxError,
            )
        result: list[Stmt] = method(node)
        return result

    # ------------------------------------------------------------------ simple statements

    def stmt_Pass(self, node: ast.Pass) -> list[Stmt]:
        return []

    def stmt_Expr(self, node: ast.Expr) -> list[Stmt]:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return []  # docstring or string statement
        if isinstance(node.value, ast.Call):
            f = self.ex.value(node.value.func)
            if isinstance(f, PyValue) and f.value is py_builtins.print:
                return [self.print_stmt(node.value)]
        e = self.ex.value(node.value)
        if isinstance(e, PyValue):
            return []
        return [ExprStmt(self.state.loc(node), e)]

    def print_stmt(self, call: ast.Call) -> Stmt:
        sep, end = " ", "\n"
        for kw in call.keywords:
            if (
                kw.arg not in ("sep", "end")
                or not isinstance(kw.value, ast.Constant)
                or not isinstance(kw.value.value, str)
            ):
                self.state.fail(
                    kw.value,
                    "print() accepts only constant string sep= and end=",
                    UnsupportedSyntaxError,
                )
            if kw.arg == "sep":
                sep = kw.value.value
            else:
                end = kw.value.value
        args: list[Any] = []
        for a in call.args:
            v = self.ex.value(a)
            if isinstance(v, PyValue):
                if not isinstance(v.value, str):
                    self.state.fail(a, "print() arguments must be values or string constants")
                args.append(Const(C.void, v.loc, v.value))
            else:
                if not isinstance(v.type, (ScalarType, VectorType, PointerType)):
                    self.state.fail(a, f"print() cannot format a value of type {v.type}")
                args.append(v)
        return Print(self.state.loc(call), tuple(args), sep, end)

    def stmt_Assert(self, node: ast.Assert) -> list[Stmt]:
        cond = self.ex.condition(node.test)
        msg = ast.unparse(node.test)
        if node.msg is not None:
            if not (isinstance(node.msg, ast.Constant) and isinstance(node.msg.value, str)):
                self.state.fail(node.msg, "assert message must be a constant string")
            msg = node.msg.value
        return [Assert(self.state.loc(node), cond, msg)]

    def stmt_Return(self, node: ast.Return) -> list[Stmt]:
        st = self.state
        if node.value is None:
            if not st.is_kernel and st.ret_type not in (None, C.void):
                st.fail(node, f"this function returns {st.ret_type}: return a value")
            if not st.is_kernel:
                st.ret_type = C.void
            return [Return(st.loc(node), None)]
        if st.is_kernel:
            st.fail(node, "a kernel cannot return a value (write results through a pointer)")
        v = self.ex.expr(node.value)
        if isinstance(v.type, PointerType):
            # The caller may write through a returned pointer: its roots cannot be const.
            st.written |= st.pointer_roots(v)
        if st.ret_type is None:
            st.ret_type = st.hints.get(_RETURN, v.type)
        elif st.ret_type is C.void:
            st.fail(node, "this function returns nothing elsewhere; return a value everywhere")
        elif not st.ret_annotated and v.type is not st.ret_type:
            # Unannotated: the result type joins every return (``return 1`` ... ``return
            # 2.5`` is a float function), as Python would return either value.
            try:
                joined = rules.arithmetic(
                    st.ret_type, False, v.type, isinstance(v, Const) and v.weak, "return"
                )
            except rules.RuleError:
                joined = st.ret_type
            if joined is not st.ret_type and rules.can_assign(joined, st.ret_type):
                st.hints[_RETURN] = joined
                st.restart_pending = True
        return [Return(st.loc(node), self.ex.coerce(v, st.ret_type, node))]

    def stmt_Break(self, node: ast.Break) -> list[Stmt]:
        return [Break(self.state.loc(node))]

    def stmt_Continue(self, node: ast.Continue) -> list[Stmt]:
        return [Continue(self.state.loc(node))]

    # ------------------------------------------------------------------ assignment

    def stmt_Assign(self, node: ast.Assign) -> list[Stmt]:
        if len(node.targets) != 1:
            self.state.fail(
                node,
                "chained assignment a = b = c is not supported in kernels",
                UnsupportedSyntaxError,
            )
        target = node.targets[0]
        if isinstance(target, (ast.Tuple, ast.List)):
            self.state.fail(
                target, "tuple unpacking is not supported in kernels", UnsupportedSyntaxError
            )
        return self.assign(target, node.value, None, node)

    def stmt_AnnAssign(self, node: ast.AnnAssign) -> list[Stmt]:
        if not isinstance(node.target, ast.Name):
            self.state.fail(node.target, "only a plain name can be annotated")
        ann = self.annotation(node.annotation)
        name = node.target.id
        if name in self.state.vars:
            self.state.fail(node, f"{name!r} is already declared; annotate its first assignment")
        self.state.annotated.add(name)
        if node.value is None:
            var = self.new_var(name, ann, node)
            return [] if self.hoist(name, var) else [Declare(self.state.loc(node), var, None)]
        return self.assign(node.target, node.value, ann, node)

    def annotation(self, node: ast.expr) -> Type:
        v = self.ex.value(node)
        t: Type | None = None
        if isinstance(v, PyValue) and v.value is not None:
            try:
                t = resolve_annotation(v.value)
            except TypeError:
                t = None
        if t is None or t is C.void:
            self.state.fail(node, f"{ast.unparse(node)!r} is not a clpy type")
        return t

    def stmt_AugAssign(self, node: ast.AugAssign) -> list[Stmt]:
        op = BINOPS[type(node.op)]
        target = self.lvalue(node.target)
        value = self.ex.expr(node.value)
        combined = self.ex.binary(op, target, value, node)
        self.maybe_widen(node.target, combined.type, node)
        if isinstance(target, VarRef):
            ranges.store(self.state, self.ex, target.var, combined)  # s *= 2 keeps s >= 0
        loc = self.state.loc(node)
        if c_compound(target, combined):
            assert isinstance(combined, Binary)
            return [Assign(loc, target, combined.right, combined.op)]
        # Python semantics (floor division and modulo, pow) need the full expression, and
        # the target appears twice in it.
        if not pure(target):
            self.state.fail(
                node.target,
                f"{ast.unparse(node.target)} {op}= ... repeats the "
                "target, which has side effects: give it a name first",
            )
        return [Assign(loc, target, self.ex.coerce(combined, target.type, node))]

    def assign(
        self, target: ast.expr, value_node: ast.expr, ann: Type | None, node: ast.stmt
    ) -> list[Stmt]:
        st = self.state
        if isinstance(target, ast.Name) and target.id in st.constexprs:
            st.fail(target, f"constexpr parameter {target.id!r} cannot be assigned")
        if isinstance(target, ast.Name) and target.id not in st.vars:
            return self.first_assign(target.id, value_node, ann, node)
        lhs = self.lvalue(target)
        self.check_storable(lhs.type, node)
        value = self.ex.expr(value_node)
        stored = self.ex.coerce(value, lhs.type, node)
        if isinstance(target, ast.Name):
            self.maybe_widen(target, value.type, node, value)
            self.state.note_alias(target.id, value)
            if isinstance(lhs, VarRef):
                ranges.store(st, self.ex, lhs.var, stored)
        return [Assign(st.loc(node), lhs, stored)]

    def first_assign(
        self, name: str, value_node: ast.expr, ann: Type | None, node: ast.stmt
    ) -> list[Stmt]:
        st = self.state
        arr = self.array_decl(value_node)
        if arr is not None:
            if ann is not None:
                st.fail(node, "local_array/private_array carry their own type: drop the annotation")
            var = self.new_var(name, arr, node)
            if self.hoist(name, var):
                st.fail(
                    node,
                    "an array must be declared at the level where it is used (not "
                    "inside a branch used outside it)",
                )
            return [Declare(st.loc(node), var, None)]
        value = self.ex.expr(value_node)
        if isinstance(value.type, ArrayType) and not isinstance(ann, PointerType):
            st.fail(
                node,
                "arrays cannot be copied; index them instead, or annotate a pointer to "
                f"the first element: {name}: Private[T] = ... (Local[T] for local arrays)",
            )
        if value.type is C.sampler_t and isinstance(value, NamedConst):
            # a constant sampler: the name stands for it (emitted once at program scope)
            st.constexprs = {**st.constexprs, name: SamplerSpec.from_bits(value.value)}
            return []
        self.check_storable(value.type, node)
        t = ann if ann is not None else st.hints.get(name, value.type)
        if t is C.void:
            st.fail(value_node, "this call returns nothing; it has no value to assign")
        if ann is None and isinstance(value, Const) and value.weak:
            st.weak_vars.add(name)
        init = self.ex.coerce(value, t, node)
        var = self.new_var(name, t, node)
        self.state.note_alias(name, value)
        ranges.declare(st, self.ex, var, init)  # i = get_global_id(0): C's i / 2 is i // 2
        if name in st.assigned_once and isinstance(init, (Const, NamedConst)):
            st.const_values[var] = init  # flags = CLK_LOCAL_MEM_FENCE | ...
        if self.hoist(name, var):
            return [Assign(st.loc(node), VarRef(t, st.loc(node), var), init)]
        return [Declare(st.loc(node), var, init)]

    def check_storable(self, t: Type, node: ast.AST) -> None:
        """Images and samplers live in parameters only (spec §1.9 restrictions)."""
        if isinstance(t, ImageType):
            self.state.fail(
                node,
                f"an image ({t!r}) cannot be stored in a variable; use the kernel "
                "parameter itself (spec §1.9: images are parameters only)",
            )
        if t is C.sampler_t:
            self.state.fail(
                node,
                "a sampler cannot be stored in a variable; use the parameter or a constant "
                "clpy.sampler(...) directly",
            )

    def array_decl(self, node: ast.expr) -> ArrayType | None:
        """``clpy.local_array(T, shape)`` / ``clpy.private_array(T, shape)`` → its type."""
        if not isinstance(node, ast.Call):
            return None
        f = self.ex.value(node.func)
        kind = getattr(f.value, "__clpy_array__", None) if isinstance(f, PyValue) else None
        if kind is None:
            return None
        if len(node.args) != 2 or node.keywords:
            self.state.fail(node, f"{kind}_array(dtype, shape) takes two arguments")
        elem = self.annotation(node.args[0])
        shape_nodes = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
        shape = tuple(self.ex.const_int(s, "an array size") for s in shape_nodes)
        if not shape:
            self.state.fail(node.args[1], "an array needs at least one dimension", ConstantError)
        if any(n <= 0 for n in shape):
            self.state.fail(
                node.args[1], f"array sizes must be positive, got {shape}", ConstantError
            )
        space = AddressSpace.LOCAL if kind == "local" else AddressSpace.PRIVATE
        if space is AddressSpace.LOCAL and self.state.loop_depth:
            self.state.fail(node, "local arrays must be declared outside loops")
        return ArrayType(elem, shape, space)

    def new_var(self, name: str, t: Type, node: ast.AST) -> Var:
        var = Var(name, t, self.state.loc(node))
        self.state.vars[name] = var
        return var

    def hoist(self, name: str, var: Var) -> bool:
        """Declare ``var`` (without a value) in the enclosing block that holds all its uses,
        just before the statement being built there, if that is not this block."""
        decl = self.state.decl_block.get(name, self._path)
        if decl == self._path:
            return False
        self._hoisted.setdefault(decl, []).append(var)
        return True

    def maybe_widen(
        self, target: ast.expr, t: Type, node: ast.AST, value: Expr | None = None
    ) -> None:
        if not isinstance(target, ast.Name):
            return
        name = target.id
        st = self.state
        var = st.vars.get(name)
        if var is None or name not in st.weak_vars or var.type is t:
            return
        if value is not None and isinstance(value, Const) and value.weak:
            return
        cur = var.type
        if (
            isinstance(cur, ScalarType)
            and isinstance(t, ScalarType)
            and ((cur is C.int_ and t in _WIDEN_INT) or (cur is C.float_ and t is C.double))
        ):
            # Finish this attempt (more variables may need widening), then rebuild once.
            st.hints[name] = t
            st.restart_pending = True

    def lvalue(self, node: ast.expr) -> Expr:
        st = self.state
        if isinstance(node, ast.Name):
            if node.id in st.constexprs:
                st.fail(node, f"constexpr parameter {node.id!r} cannot be assigned")
            var = st.vars.get(node.id)
            if var is None:
                if node.id in st.decl_block:
                    st.fail(
                        node,
                        f"local variable {node.id!r} is used before it is assigned",
                        UndefinedNameError,
                    )
                st.fail(node, f"name {node.id!r} is not defined", UndefinedNameError)
            if (
                var.is_param
                and isinstance(var.type, PointerType) is False
                and node.id in st.constexprs
            ):
                st.fail(node, f"constexpr parameter {node.id!r} cannot be assigned")
            if isinstance(var.type, ArrayType):
                st.fail(node, f"array {node.id!r} cannot be assigned as a whole")
            return VarRef(var.type, st.loc(node), var)
        if isinstance(node, ast.Name) or not isinstance(node, (ast.Subscript, ast.Attribute)):
            st.fail(node, f"cannot assign to {ast.unparse(node)}", UnsupportedSyntaxError)
        e = self.ex.expr(node)
        self.check_assignable(e, node)
        return e

    def check_assignable(self, e: Expr, node: ast.AST, top: bool = True) -> None:
        st = self.state
        if isinstance(e, Index):
            if top and isinstance(e.type, ArrayType):
                st.fail(node, "cannot assign a whole array row; index every dimension")
            bt = e.base.type
            if isinstance(bt, PointerType):
                self.state.note_write(e.base, node)
            elif isinstance(bt, ArrayType):
                self.check_assignable(e.base, node, False)
            return
        if isinstance(e, Swizzle):
            if len(set(e.lanes)) != len(e.lanes):
                st.fail(node, "cannot assign to a swizzle that repeats a component")
            self.check_assignable(e.base, node, False)
            return
        if isinstance(e, Field):
            self.check_assignable(e.base, node, False)
            return
        if isinstance(e, VarRef):
            if e.var.name in st.constexprs:
                st.fail(node, f"constexpr parameter {e.var.name!r} cannot be assigned")
            program_data.check_write(st, e, node)
            return
        st.fail(node, "this expression is not assignable (it is a computed value)")

    # ------------------------------------------------------------------ control flow

    def stmt_If(self, node: ast.If) -> list[Stmt]:
        cond = self.ex.condition(node.test)
        body = self.block(node.body, (*self._path, (id(node), "body")))
        orelse = self.block(node.orelse, (*self._path, (id(node), "orelse")))
        if isinstance(cond, Const):  # compile-time branch (e.g. on a constexpr)
            return list(body if cond.value else orelse)
        return [If(self.state.loc(node), cond, body, orelse)]

    def stmt_While(self, node: ast.While) -> list[Stmt]:
        if node.orelse:
            self.state.fail(
                node, "while ... else is not supported in kernels", UnsupportedSyntaxError
            )
        cond = self.ex.condition(node.test)
        self.state.loop_depth += 1
        body = self.block(node.body, (*self._path, (id(node), "body")))
        self.state.loop_depth -= 1
        return [While(self.state.loc(node), cond, body)]

    def stmt_For(self, node: ast.For) -> list[Stmt]:
        st = self.state
        if node.orelse:
            st.fail(node, "for ... else is not supported in kernels", UnsupportedSyntaxError)
        it = node.iter
        f = self.ex.value(it.func) if isinstance(it, ast.Call) else None
        if not (isinstance(f, PyValue) and f.value is py_builtins.range):
            st.fail(it, "kernels can only loop over range(...)", UnsupportedSyntaxError)
        assert isinstance(it, ast.Call)
        if not 1 <= len(it.args) <= 3 or it.keywords:
            st.fail(it, "range() takes 1 to 3 positional arguments")
        args = [self.ex.expr(a) for a in it.args]
        for a, a_node in zip(args, it.args):
            if not (isinstance(a.type, ScalarType) and a.type.is_int):
                st.fail(a_node, f"range() arguments must be integers, got {a.type}")
        start = args[0] if len(args) > 1 else Const(C.int_, st.loc(it), 0, True)
        stop = args[1] if len(args) > 1 else args[0]
        step = args[2] if len(args) == 3 else Const(C.int_, st.loc(it), 1, True)
        if isinstance(step, Const) and step.value == 0:
            st.fail(it, "range() step must not be zero")
        if not isinstance(node.target, ast.Name):
            st.fail(node.target, "the loop variable must be a plain name", UnsupportedSyntaxError)
        t = range_type(start, stop, step)
        if (
            isinstance(t, ScalarType)
            and not t.is_signed
            and any(
                not is_weak(e) and elem_type(e.type).is_signed and not self.ex.nonneg(e)
                for e in (start, stop, step)
            )
        ):
            # range(i - 3, n) with n: uint: the counter must hold the negative start (signs.py)
            t = C.long if t.bits <= 32 else C.signed_of(t)
        name = node.target.id
        body_path = (*self._path, (id(node), "body"))
        tloc = st.loc(node.target)
        var = st.vars.get(name)
        existed = var is not None
        if var is None:
            var = Var(name, st.hints.get(name, t), tloc)
            st.vars[name] = var
        elif not (isinstance(var.type, ScalarType) and var.type.is_int):
            st.fail(node.target, f"loop variable {name!r} already has type {var.type}")
        vt = var.type
        used_after = st.decl_block.get(name, body_path) != body_path
        # Python's loop variable keeps the last value it took (not stop) and assigning to it
        # in the body does not change the iteration: then C loops on a counter of its own and
        # copies it to the user's variable at the start of each iteration.
        own_counter = existed or used_after or _assigns(node.body, name)
        counter = Var(f"{name}_", vt, tloc) if own_counter else var
        c_start = self.ex.coerce(start, vt, it)
        ascending = ranges.positive(self.ex, step)
        if ascending and self.ex.nonneg(c_start):
            st.nonneg_vars.add(counter)
        prologue: list[Stmt] = []
        if own_counter:
            ref = VarRef(vt, tloc, counter)
            if existed:
                ranges.store(st, self.ex, var, ref)
            else:
                ranges.declare(st, self.ex, var, ref)
            if not existed and not used_after:
                prologue.append(Declare(tloc, var, ref))
            else:
                if not existed:  # declared before the loop, in the block that uses it after
                    decl = st.decl_block.get(name, self._path)
                    self._hoisted.setdefault(decl, []).append(var)
                prologue.append(Assign(tloc, VarRef(vt, tloc, var), ref))
        st.loop_depth += 1
        body = self.block(node.body, body_path)
        st.loop_depth -= 1
        return [
            For(
                st.loc(node),
                counter,
                c_start,
                self.ex.coerce(stop, vt, it),
                self.ex.coerce(step, vt, it),
                (*prologue, *body),
                True,
                ascending,
            )
        ]


def _assigns(body: list[ast.stmt], name: str) -> bool:
    """Whether ``body`` assigns ``name`` (plain, augmented or as an inner loop variable)."""
    for st in body:
        for n in ast.walk(st):
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store):
                return True
    return False


_RETURN = "<return>"  # key of the result type in FuncState.hints

__all__ = ["StmtBuilder"]
