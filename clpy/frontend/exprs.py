"""Python expressions → typed IR expressions: names, attributes, subscripts, operators.

``ExprBuilder`` owns a ``CallBuilder`` (calls.py) for every ``f(...)``; the statement builder
(stmts.py) holds an ``ExprBuilder``. Per-function state lives in ``FuncState`` (context.py).
"""

from __future__ import annotations

import ast
import builtins as py_builtins
import types as py_types
from typing import Any

import numpy as np

from clpy.builtins.constants import NamedConstant
from clpy.builtins.samplers import SamplerSpec
from clpy.errors import ConstantError, UndefinedNameError, UnsupportedSyntaxError
from clpy.frontend import pointers, program_data, signs
from clpy.frontend.calls import CallBuilder
from clpy.frontend.context import FuncState, PyValue
from clpy.frontend.helpers import (
    as_scalar,
    elem_type,
    is_int,
    is_weak,
    known_nonneg,
    logical,
    with_elem,
)
from clpy.frontend.powers import power
from clpy.ir import fold
from clpy.ir.nodes import (
    Binary,
    Cast,
    Compare,
    Const,
    Expr,
    Field,
    Index,
    NamedConst,
    Select,
    Swizzle,
    Unary,
    VarRef,
)
from clpy.types import catalog as C
from clpy.types import rules
from clpy.types.core import ArrayType, PointerType, ScalarType, Type, VectorType
from clpy.types.structs import StructType

BINOPS: dict[type, str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.Pow: "**",
    ast.MatMult: "@",
}
_CMPOPS: dict[type, str] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
}
_UNSUPPORTED: dict[type, str] = {
    ast.ListComp: "list comprehension",
    ast.SetComp: "set comprehension",
    ast.DictComp: "dict comprehension",
    ast.GeneratorExp: "generator expression",
    ast.Lambda: "lambda",
    ast.Dict: "dict display",
    ast.Set: "set display",
    ast.List: "list display",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield from",
    ast.JoinedStr: "f-string",
    ast.Starred: "starred expression",
    ast.NamedExpr: "assignment expression (:=)",
    ast.Slice: "slice",
}
_SWIZZLE_XYZW = {"x": 0, "y": 1, "z": 2, "w": 3}
_VECTOR_SIZES = (2, 3, 4, 8, 16)


def swizzle_lanes(t: VectorType, name: str) -> tuple[int, ...] | None:
    """Lane indices for a component selector (spec §1.1.7), or None if it is not one."""
    n = t.n
    if name in ("lo", "hi", "even", "odd"):
        half = (n + 1) // 2 if n != 3 else 2
        if name == "lo":
            return tuple(range(half))
        if name == "even":
            return tuple(range(0, n if n != 3 else 4, 2))[:half]
        if n == 3:
            return None  # .hi/.odd of a 3-vector include the undefined 4th lane
        return tuple(range(half, n)) if name == "hi" else tuple(range(1, n, 2))
    if name[0] in "sS" and len(name) > 1 and all(c in "0123456789abcdefABCDEF" for c in name[1:]):
        return tuple(int(c, 16) for c in name[1:])
    if all(c in _SWIZZLE_XYZW for c in name):
        return tuple(_SWIZZLE_XYZW[c] for c in name)
    return None


class ExprBuilder:
    """Visits expression nodes (one ``visit_<ast class>`` each) and returns typed IR, or a
    ``PyValue`` for a compile-time Python object (a module, a type, a built-in). Calls go to
    its ``CallBuilder``; the statement builder uses ``expr``, ``value``, ``condition``,
    ``coerce``, ``binary``, ``const_int`` and ``nonneg``."""

    def __init__(self, state: FuncState) -> None:
        self.state = state
        self.calls = CallBuilder(self)

    # ------------------------------------------------------------------ entry points

    def expr(self, node: ast.expr) -> Expr:
        """``node`` as a typed IR expression (a kernel value, not a Python object)."""
        v = self.value(node)
        if isinstance(v, PyValue):
            self.state.fail(node, f"{_describe(v.value)} is not a value in kernel code")
        return v

    def value(self, node: ast.expr) -> Expr | PyValue:
        """``node`` as a typed IR expression or, for a compile-time object, a ``PyValue``."""
        method = getattr(self, f"visit_{type(node).__name__}", None)
        if method is None:
            what = _UNSUPPORTED.get(type(node), type(node).__name__)
            self.state.fail(node, f"{what} is not supported in kernels", UnsupportedSyntaxError)
        result: Expr | PyValue = method(node)
        return result

    # ------------------------------------------------------------------ leaves

    def visit_Constant(self, node: ast.Constant) -> Expr | PyValue:
        v = node.value
        if isinstance(v, str):
            return PyValue(v, self.state.loc(node))
        if v is None or isinstance(v, (bytes, complex)) or v is Ellipsis:
            self.state.fail(
                node, f"constant {v!r} is not supported in kernels", UnsupportedSyntaxError
            )
        return self.literal(v, node)

    def literal(self, v: Any, node: ast.AST, weak: bool = True) -> Const:
        try:
            t = rules.literal_type(v)
        except rules.RuleError as e:
            self.state.fail(node, str(e))
        return Const(t, self.state.loc(node), v, weak and not isinstance(v, bool))

    def visit_Name(self, node: ast.Name) -> Expr | PyValue:
        st = self.state
        name = node.id
        var = st.vars.get(name)
        if var is not None:
            return VarRef(var.type, st.loc(node), var)
        if name in st.constexprs:  # constexpr parameters and constant samplers
            return self.from_python(st.constexprs[name], node)
        if name in st.decl_block:
            st.fail(
                node, f"local variable {name!r} is used before it is assigned", UndefinedNameError
            )
        data = program_data.lookup(st, name, node)  # a table or global at program scope
        if data is not None:
            return data
        if name in st.parsed.closure:
            return self.from_python(st.parsed.closure[name], node)
        if name in st.parsed.globals:
            return self.from_python(st.parsed.globals[name], node)
        if hasattr(py_builtins, name):
            return PyValue(getattr(py_builtins, name), st.loc(node))
        st.fail(node, f"name {name!r} is not defined", UndefinedNameError)

    def from_python(self, v: Any, node: ast.AST) -> Expr | PyValue:
        """A Python value seen from kernel code: numbers become constants."""
        loc = self.state.loc(node)
        if isinstance(v, NamedConstant):
            return NamedConst(v.type, loc, v.name, v.value)
        if isinstance(v, SamplerSpec):  # clpy.sampler(...) made outside the kernel
            return v.as_expr(loc)
        if isinstance(v, (bool, int, float)) and not isinstance(v, np.generic):
            return self.literal(v, node)
        if isinstance(v, np.generic):
            st = C.scalar_for_dtype(v.dtype)
            if st is None:
                self.state.fail(node, f"NumPy scalar of dtype {v.dtype} is not supported")
            return Const(st, loc, v.item())
        return PyValue(v, loc)

    # ------------------------------------------------------------------ calls

    def visit_Call(self, node: ast.Call) -> Expr | PyValue:
        return self.calls.call(node)

    # ------------------------------------------------------------------ attributes

    def visit_Attribute(self, node: ast.Attribute) -> Expr | PyValue:
        base = self.value(node.value)
        if isinstance(base, PyValue):
            obj = base.value
            if not isinstance(obj, (py_types.ModuleType, type, StructType)) and not hasattr(
                obj, "__clpy_namespace__"
            ):
                self.state.fail(
                    node,
                    f"attribute .{node.attr} of {_describe(obj)} is not available in kernel code",
                    UnsupportedSyntaxError,
                )
            data = program_data.attribute(self.state, obj, node.attr, node)
            if data is not None:
                return data
            try:
                return self.from_python(getattr(obj, node.attr), node)
            except AttributeError as e:
                detail = str(e).partition("': ")[2]  # clpy's own hint, if any
                self.state.fail(
                    node,
                    f"{_describe(obj)} has no attribute {node.attr!r}"
                    + (f": {detail}" if detail else ""),
                    UndefinedNameError,
                )
        return self.member(base, node.attr, node)

    def member(self, base: Expr, name: str, node: ast.AST) -> Expr:
        t = base.type
        loc = self.state.loc(node)
        if isinstance(t, VectorType):
            lanes = swizzle_lanes(t, name)
            if lanes is None and t.n == 3 and name in ("hi", "odd"):
                self.state.fail(
                    node,
                    f".{name} of the 3-component {t} would read its undefined "
                    "4th lane; select the components you need (.z, .yz ...)",
                )
            if lanes is None:
                self.state.fail(node, f"{name!r} is not a component of {t}")
            for lane in lanes:
                if lane >= t.n:
                    self.state.fail(
                        node, f"component .{name} is out of range for {t} (it has {t.n} components)"
                    )
            if isinstance(base, Swizzle):  # v.even.odd.s1 selects lanes of v directly
                lanes = tuple(base.lanes[lane] for lane in lanes)
                base = base.base
            if len(lanes) == 1:
                return Swizzle(t.elem, loc, base, lanes)
            if len(lanes) not in _VECTOR_SIZES:
                self.state.fail(
                    node, f".{name} selects {len(lanes)} components; a vector has 2, 3, 4, 8 or 16"
                )
            return Swizzle(VectorType(t.elem, len(lanes)), loc, base, lanes)
        if isinstance(t, StructType):
            ft = t.field(name)
            if ft is None:
                self.state.fail(node, f"struct {t.name} has no field {name!r}")
            return Field(ft, loc, base, name)
        self.state.fail(node, f"{t} has no attribute {name!r}")

    # ------------------------------------------------------------------ subscripts

    def visit_Subscript(self, node: ast.Subscript) -> Expr | PyValue:
        pv = self.value(node.value)
        if isinstance(pv, PyValue):  # a compile-time object: Global[float32] in annotations
            return pointers.subscript_value(self, pv, node)
        base = pv
        idx_nodes = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        out = base
        for idx_node in idx_nodes:
            out = self.index(out, idx_node, node)
        return out

    def index(self, base: Expr, idx_node: ast.expr, node: ast.AST) -> Expr:
        t = base.type
        if isinstance(idx_node, ast.Slice):
            self.state.fail(
                idx_node,
                "slices are not supported in kernels: index one element",
                UnsupportedSyntaxError,
            )
        idx = self.expr(idx_node)
        it = idx.type
        if not isinstance(it, ScalarType) or not (it.is_int or it.is_bool):
            self.state.fail(idx_node, f"index must be an integer, got {it}")
        if isinstance(t, PointerType):
            return Index(t.elem, self.state.loc(node), base, idx)
        item = program_data.tuple_item(base, idx)  # SHAPE[0] of a module tuple: a constant
        if item is not None:
            return self.literal(item, node)
        if isinstance(t, ArrayType):
            elem = t.elem if len(t.shape) == 1 else ArrayType(t.elem, t.shape[1:], t.space)
            if isinstance(idx, Const) and not 0 <= idx.value < t.shape[0]:
                self.state.fail(
                    idx_node, f"index {idx.value} is out of bounds for an array of {t.shape[0]}"
                )
            return Index(elem, self.state.loc(node), base, idx)
        self.state.fail(node, f"{t} cannot be indexed")

    # ------------------------------------------------------------------ operators

    def visit_BinOp(self, node: ast.BinOp) -> Expr:
        op = BINOPS[type(node.op)]
        if op == "@":
            self.state.fail(
                node, "operator @ is not supported in kernels; use clpy.dot", UnsupportedSyntaxError
            )
        return self.binary(op, self.expr(node.left), self.expr(node.right), node)

    def binary(self, op: str, left: Expr, right: Expr, node: ast.AST) -> Expr:
        loc = self.state.loc(node)
        lt, rt = left.type, right.type
        if op in ("+", "-") and (pointers.is_decayable(left) or pointers.is_decayable(right)):
            # an array used as a value is a pointer to its first element: hist + k
            if pointers.is_decayable(left):
                left = pointers.decay(self.state, left, node)
            if op == "+" and pointers.is_decayable(right):
                right = pointers.decay(self.state, right, node)
            lt, rt = left.type, right.type
        if isinstance(lt, PointerType) or isinstance(rt, PointerType):
            return self.pointer_arith(op, left, right, node)
        if isinstance(lt, (ArrayType, StructType)) or isinstance(rt, (ArrayType, StructType)):
            self.state.fail(node, f"operator {op} does not apply to {lt} and {rt}")
        if op == "**":
            return power(self, left, right, node)
        lw, rw = is_weak(left), is_weak(right)
        t: Type
        try:
            if op in ("<<", ">>"):
                rules.require_integer(lt, op)
                rules.require_integer(rt, op)
                # The result has the (promoted) type of the left operand; the count is masked
                # to its width (spec §1.3).
                t = lt if isinstance(lt, VectorType) else rules.promote_int(as_scalar(lt))
                if lw and not rw and isinstance(rt, ScalarType) and rt.bits > 32:
                    t = rt
                right = self.coerce(
                    right,
                    t if isinstance(rt, VectorType) or isinstance(t, ScalarType) else as_scalar(rt),
                    node,
                )
                return fold.binary(op, t, loc, self.coerce(left, t, node), right)
            t = rules.arithmetic(lt, lw, rt, rw, op)
            if op in ("&", "|", "^"):
                rules.require_integer(t, op)
        except rules.RuleError as e:
            self.state.fail(node, str(e))
        signs.check_arithmetic(self, op, left, right, node)
        if op == "/" and not elem_type(t).is_float:
            # Python's true division: int / int is a float.
            t = with_elem(t, C.float_)
        if (
            op in ("//", "%", "/")
            and not elem_type(t).is_float
            and isinstance(right, Const)
            and right.value == 0
        ):
            self.state.fail(node, "integer division by zero")
        if op in ("//", "%"):
            if elem_type(t).is_float:
                op = "floordiv" if op == "//" else "floormod"
            elif elem_type(t).is_signed and not (self.nonneg(left) and self.nonneg(right)):
                op = "floordiv" if op == "//" else "floormod"
            elif op == "//":
                op = "/"
        return fold.binary(op, t, loc, self.coerce(left, t, node), self.coerce(right, t, node))

    def nonneg(self, e: Expr) -> bool:
        """Provably non-negative: unsigned, a non-negative constant, or a loop counter that
        starts non-negative and counts up (``for k in range(n)``)."""
        if isinstance(e, VarRef) and e.var in self.state.nonneg_vars:
            return True
        if (
            isinstance(e, Cast)
            and isinstance(e.value.type, ScalarType)
            and isinstance(e.type, ScalarType)
            and e.type.bits > e.value.type.bits
        ):
            return self.nonneg(e.value)
        if isinstance(e, Binary) and e.op in signs.NONNEG_OPS:
            # sums, products, quotients of non-negative values (16 * gid + lid); one
            # non-negative operand of & bounds the result, a positive divisor Python's %
            if e.op == "&":
                return self.nonneg(e.left) or self.nonneg(e.right)
            if e.op == "floormod":
                return self.nonneg(e.right)
            return self.nonneg(e.left) and self.nonneg(e.right)
        return known_nonneg(e)

    def pointer_arith(self, op: str, left: Expr, right: Expr, node: ast.AST) -> Expr:
        lt, rt = left.type, right.type
        loc = self.state.loc(node)
        if op == "-" and isinstance(lt, PointerType) and isinstance(rt, PointerType):
            if lt.elem is not rt.elem:
                self.state.fail(node, f"cannot subtract pointers to different types {lt}, {rt}")
            return Binary(C.ptrdiff_t, loc, "-", left, right)
        if op in ("+", "-") and isinstance(lt, PointerType) and is_int(rt):
            return Binary(lt, loc, op, left, right)
        if op == "+" and isinstance(rt, PointerType) and is_int(lt):
            return Binary(rt, loc, op, right, left)
        self.state.fail(node, f"operator {op} does not apply to {lt} and {rt}")

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Expr:
        operand = self.expr(node.operand)
        t = operand.type
        loc = self.state.loc(node)
        if isinstance(node.op, ast.Not):
            if isinstance(t, VectorType):
                return Unary(rules.relational_result(t), loc, "not", operand)
            self.require_condition(operand, node.operand)
            return fold.unary("not", C.bool_, loc, operand)
        if not isinstance(t, (ScalarType, VectorType)) or elem_type(t) is C.void:
            self.state.fail(node, f"unary operator does not apply to {t}")
        if isinstance(node.op, ast.Invert):
            try:
                rules.require_integer(t, "~")
            except rules.RuleError as e:
                self.state.fail(node, str(e))
        op = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~"}[type(node.op)]
        rt = (
            t
            if isinstance(t, VectorType) or is_weak(operand) or elem_type(t).is_float
            else rules.promote_int(as_scalar(t))
        )
        return fold.unary(op, rt, loc, self.coerce(operand, rt, node))

    def visit_BoolOp(self, node: ast.BoolOp) -> Expr:
        op = "and" if isinstance(node.op, ast.And) else "or"
        out = self.condition(node.values[0])
        for v in node.values[1:]:
            out = logical(op, self.state.loc(node), out, self.condition(v))
        return out

    def condition(self, node: ast.expr) -> Expr:
        e = self.expr(node)
        self.require_condition(e, node)
        return e

    def require_condition(self, e: Expr, node: ast.AST) -> None:
        t = e.type
        if not isinstance(t, (ScalarType, PointerType)) or t is C.void:
            hint = " (use clpy.any/clpy.all for vectors)" if isinstance(t, VectorType) else ""
            self.state.fail(node, f"a condition must be a scalar, got {t}{hint}")

    def visit_Compare(self, node: ast.Compare) -> Expr:
        left = self.expr(node.left)
        out: Expr | None = None
        for op_node, right_node in zip(node.ops, node.comparators):
            op = _CMPOPS[type(op_node)]
            if op in ("is", "is not", "in", "not in"):
                self.state.fail(
                    node, f"operator {op!r} is not supported in kernels", UnsupportedSyntaxError
                )
            right = self.expr(right_node)
            cmp = self.compare(op, left, right, node)
            out = cmp if out is None else logical("and", self.state.loc(node), out, cmp)
            left = right
        assert out is not None
        return out

    def compare(self, op: str, left: Expr, right: Expr, node: ast.AST) -> Expr:
        loc = self.state.loc(node)
        lt, rt = left.type, right.type
        if isinstance(lt, PointerType) or isinstance(rt, PointerType):
            left, right = pointers.decay_operands(self.state, left, right, node)  # p != a
            lt, rt = left.type, right.type
            if not (isinstance(lt, PointerType) and isinstance(rt, PointerType)):
                self.state.fail(node, f"cannot compare {lt} with {rt}")
            return Compare(C.bool_, loc, op, left, right)
        exact = signs.math_compare(self, op, left, right, node)
        if exact is not None:
            return exact
        try:
            t = rules.arithmetic(lt, is_weak(left), rt, is_weak(right), op)
        except rules.RuleError as e:
            self.state.fail(node, str(e))
        return fold.compare(
            op,
            rules.relational_result(t),
            loc,
            self.coerce(left, t, node),
            self.coerce(right, t, node),
        )

    def visit_IfExp(self, node: ast.IfExp) -> Expr:
        cond = self.condition(node.test)
        a, b = self.expr(node.body), self.expr(node.orelse)
        if isinstance(cond, Const):  # decided at compile time (constexpr, constants)
            return a if cond.value else b
        t = self.join(a, b, node)
        return Select(
            t, self.state.loc(node), cond, self.coerce(a, t, node), self.coerce(b, t, node)
        )

    def join(self, a: Expr, b: Expr, node: ast.AST) -> Type:
        """The common type of two alternatives (``a if c else b``, different returns)."""
        if a.type is b.type:
            return a.type
        if isinstance(a.type, (PointerType, StructType, ArrayType)) or isinstance(
            b.type, (PointerType, StructType, ArrayType)
        ):
            self.state.fail(
                node, f"the two alternatives have different types {a.type} and {b.type}"
            )
        signs.check_arithmetic(self, "?:", a, b, node)  # min(i, u), i if c else u
        try:
            return rules.arithmetic(a.type, is_weak(a), b.type, is_weak(b), "?:")
        except rules.RuleError as e:
            self.state.fail(node, str(e))

    def visit_Tuple(self, node: ast.Tuple) -> Expr:
        self.state.fail(
            node,
            "tuples are not values in kernels (use a vector type such as "
            "float4(...) or a @clpy.struct)",
            UnsupportedSyntaxError,
        )

    # ------------------------------------------------------------------ conversions

    def coerce(self, e: Expr, t: Type, node: ast.AST) -> Expr:
        """Implicitly convert ``e`` to ``t`` (C assignment/arithmetic conversion rules)."""
        if e.type is t:
            return e
        if isinstance(t, PointerType) and isinstance(e.type, ArrayType):
            e = pointers.decay(self.state, e, node)  # an array where a pointer is expected
        if isinstance(t, PointerType) and isinstance(e.type, PointerType):
            if e.type.elem is t.elem and (t.space is e.type.space or t.space.value == ""):
                return e
            self.state.fail(node, f"cannot convert {e.type} to {t}")
        if not rules.can_assign(t, e.type):
            hint = ""
            if isinstance(t, VectorType) and isinstance(e.type, VectorType):
                hint = f"; use convert_{t.cl_name}(...) or as_{t.cl_name}(...)"
            self.state.fail(node, f"cannot convert {e.type} to {t}{hint}")
        if isinstance(e, Const) and isinstance(t, ScalarType):
            return fold.cast_const(e, t)
        retyped = signs.retype_index(e, t)  # (uint)(int)get_sub_group_size()
        if retyped is not None:
            return retyped
        return Cast(t, e.loc, e)

    def const_int(self, node: ast.expr, what: str) -> int:
        e = self.expr(node)
        if not isinstance(e, Const) or not isinstance(e.value, int) or isinstance(e.value, bool):
            self.state.fail(node, f"{what} must be a compile-time integer constant", ConstantError)
        return int(e.value)


# ----------------------------------------------------------------------------- helpers


def _describe(obj: Any) -> str:
    if isinstance(obj, py_types.ModuleType):
        return f"module {obj.__name__!r}"
    name = getattr(obj, "__name__", None) or getattr(obj, "name", None)
    return f"{type(obj).__name__} {name!r}" if name else repr(obj)


__all__ = ["BINOPS", "ExprBuilder", "swizzle_lanes"]
