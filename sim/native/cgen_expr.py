"""Typed IR expressions → C expressions of one work-item (the native engine's code generator,
sim/native/cgen.py holds the statements).

Every expression gives the NumPy engine's value (sim/exprs.py, sim/ops.py) with checks off:
integers wrap, shift counts are masked to the result's width, integer division by zero divides
by 1, an element index outside its memory or array dimension is element 0. A pointer is a
``Ptr``: C texts of its base, its memory's element count and its element offset.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from clpy.ir.nodes import (
    Binary,
    CallBuiltin,
    CallFunc,
    Cast,
    Compare,
    Const,
    Expr,
    Index,
    Logical,
    NamedConst,
    Select,
    Stmt,
    Swizzle,
    Unary,
    Var,
    VarRef,
    VectorCons,
)
from clpy.ir.walk import children
from clpy.types.core import ArrayType, PointerType, ScalarType, Type, VectorType
from clpy_sim.native.builtins import c_cast
from clpy_sim.native.ctypes_c import (
    Unsupported,
    c_type,
    scalar_c,
    scalar_literal,
    unsigned_of,
)

_DIV = {"/": "div", "%": "rem", "floordiv": "fdiv", "floormod": "fmod"}
_ARITH = ("+", "-", "*", "&", "|", "^")


@dataclass(frozen=True)
class Ptr:
    """A pointer value: ``base`` (C pointer text), ``count`` (elements of its memory, C text),
    ``off`` (element offset, C int64 text)."""

    base: str
    count: str
    off: str

    def at(self, index: str) -> str:
        o = index if self.off == "0" else f"{self.off} + (int64_t)({index})"
        return f"{self.base}[clpy_ix({o}, {self.count})]"


@dataclass(frozen=True)
class ArrayRef:
    """An array (local or private) or a row of one: storage text, dims left, element offset."""

    base: str
    dims: tuple[int, ...]
    off: str
    count: int  # elements of the whole array


def _elem(t: Type) -> ScalarType:
    if isinstance(t, VectorType):
        return t.elem
    assert isinstance(t, ScalarType)
    return t


class ExprGen:
    """Expressions of one work-item; subclasses say how variables and queries are spelled."""

    # ------------------------------------------------------------------ hooks

    def var(self, v: Var, loc: Any) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def var_ptr(self, v: Var, loc: Any) -> Ptr:  # pragma: no cover - overridden
        raise NotImplementedError

    def var_array(self, v: Var, loc: Any) -> ArrayRef:  # pragma: no cover - overridden
        raise NotImplementedError

    def builtin(self, e: CallBuiltin) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def call_func(self, e: CallFunc) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def checked_ix(self, i: str, n: str, e: Expr) -> str:
        """The element index ``i`` (C text of IR index ``e``) into a memory of ``n`` elements,
        made 0 when out of range (the region generator may prove it in range instead)."""
        return f"clpy_ix({i}, {n})"

    # ------------------------------------------------------------------ dispatch

    def expr(self, e: Expr) -> str:
        m = getattr(self, f"x_{type(e).__name__}", None)
        if m is None:
            raise Unsupported(f"expression {type(e).__name__}", e.loc)
        out: str = m(e)
        return out

    def cond(self, e: Expr) -> str:
        """A scalar condition as C truth (0/1)."""
        if isinstance(e.type, PointerType):
            raise Unsupported("pointer used as a condition", e.loc)
        if isinstance(e.type, ScalarType) and e.type.is_bool:
            return self.expr(e)
        return f"({self.expr(e)} != 0)"

    def x_Const(self, e: Const) -> str:
        t = e.type
        if isinstance(t, VectorType):
            vals = e.value if isinstance(e.value, (tuple, list)) else (e.value,) * t.n
            parts = ", ".join(scalar_literal(v, t.elem) for v in vals)
            return f"(({c_type(t, e.loc)}){{{parts}}})"
        if isinstance(t, ScalarType):
            scalar_c(t, e.loc)
            return scalar_literal(e.value, t)
        raise Unsupported(f"constant of type {t}", e.loc)

    def x_NamedConst(self, e: NamedConst) -> str:
        if not isinstance(e.type, ScalarType):
            raise Unsupported(f"constant {e.name}", e.loc)
        return scalar_literal(e.value, e.type)

    def x_VarRef(self, e: VarRef) -> str:
        if isinstance(e.type, (PointerType, ArrayType)):
            raise Unsupported(f"pointer or array `{e.var.name}` used as a value", e.loc)
        return self.var(e.var, e.loc)

    def ptr(self, e: Expr) -> Ptr:
        """A pointer-typed expression."""
        if isinstance(e, VarRef) and isinstance(e.type, ArrayType) or isinstance(e, Index):
            a = self.array(e)  # an array (or a row of one) as a pointer to its first element
            return Ptr(a.base, str(a.count), a.off)
        if isinstance(e, VarRef):
            return self.var_ptr(e.var, e.loc)
        if isinstance(e, Cast):
            if isinstance(e.value.type, ArrayType):
                a = self.array(e.value)
                return Ptr(a.base, str(a.count), a.off)
            if isinstance(e.value.type, PointerType):
                if e.value.type.elem != _ptr_elem(e.type):
                    raise Unsupported("pointer cast to another element type", e.loc)
                return self.ptr(e.value)
        if isinstance(e, Binary) and isinstance(e.left.type, PointerType):
            p = self.ptr(e.left)
            k = f"(int64_t)({self.expr(e.right)})"
            sign = "+" if e.op == "+" else "-"
            off = f"{k}" if p.off == "0" and sign == "+" else f"({p.off} {sign} {k})"
            return Ptr(p.base, p.count, off)
        if isinstance(e, Binary) and isinstance(e.right.type, PointerType) and e.op == "+":
            p = self.ptr(e.right)
            k = f"(int64_t)({self.expr(e.left)})"
            return Ptr(p.base, p.count, k if p.off == "0" else f"({p.off} + {k})")
        if isinstance(e, Select):
            pt, pf = self.ptr(e.if_true), self.ptr(e.if_false)
            if pt.base != pf.base or pt.count != pf.count:
                raise Unsupported("a choice between pointers into different memories", e.loc)
            c = self.cond(e.cond)
            return Ptr(pt.base, pt.count, f"({c} ? {pt.off} : {pf.off})")
        raise Unsupported(f"pointer expression {type(e).__name__}", e.loc)

    def array(self, e: Expr) -> ArrayRef:
        """An array-typed expression (a local/private array or a row of one)."""
        if isinstance(e, VarRef):
            return self.var_array(e.var, e.loc)
        if isinstance(e, Index) and isinstance(e.base.type, ArrayType):
            a = self.array(e.base)
            stride = 1
            for d in a.dims[1:]:
                stride *= d
            i = self.checked_ix(f"(int64_t)({self.expr(e.index)})", str(a.dims[0]), e.index)
            term = i if stride == 1 else f"{i} * {stride}"
            off = term if a.off == "0" else f"{a.off} + {term}"
            return ArrayRef(a.base, a.dims[1:], off, a.count)
        raise Unsupported(f"array expression {type(e).__name__}", e.loc)

    def lvalue(self, e: Expr) -> str:
        """An assignable scalar/vector place."""
        if isinstance(e, VarRef):
            return self.var(e.var, e.loc)
        if isinstance(e, Index):
            bt = e.base.type
            if isinstance(bt, ArrayType):
                a = self.array(e)
                if a.dims:
                    raise Unsupported("a whole array row as a value", e.loc)
                return f"{a.base}[{a.off}]"
            if isinstance(bt, PointerType):
                p = self.ptr(e.base)
                i = self.expr(e.index)
                if p.off == "0":
                    return f"{p.base}[{self.checked_ix(i, p.count, e.index)}]"
                return p.at(i)
        if isinstance(e, Swizzle) and len(e.lanes) == 1:
            return f"{self.lvalue(e.base)}[{e.lanes[0]}]"
        raise Unsupported(f"assignment to {type(e).__name__}", e.loc)

    def x_Index(self, e: Index) -> str:
        if isinstance(e.type, (ArrayType, PointerType)):
            raise Unsupported("an array row or pointer element as a value", e.loc)
        return self.lvalue(e)

    # ------------------------------------------------------------------ operators

    def x_Binary(self, e: Binary) -> str:
        t = e.type
        if isinstance(t, PointerType) or isinstance(e.left.type, PointerType):
            if isinstance(e.left.type, PointerType) and isinstance(e.right.type, PointerType):
                a, b = self.ptr(e.left), self.ptr(e.right)
                return f"(({a.off}) - ({b.off}))"
            raise Unsupported("pointer arithmetic as a value", e.loc)
        return self.binop(
            e.op, t, self.expr(e.left), self.expr(e.right), e, e.right.type, e.left.type
        )

    def compound(self, op: str, t: Type, place: str, value: Expr, loc: Any) -> str:
        """The new value of ``place op= value`` for a target of type ``t``, cast to ``t``:
        integer operands of the target and a wider (or as wide, unsigned) value operate in the
        value's type, and a shift count is masked to the target's width (the NumPy engine's
        compound assignment)."""
        ct = c_type(t, loc)
        vt = value.type
        wt = t
        if (
            isinstance(t, ScalarType)
            and isinstance(vt, ScalarType)
            and t.is_int
            and vt.is_int
            and (vt.bits > t.bits or (vt.bits == t.bits and not vt.is_signed))
        ):
            wt = vt
        val = self.expr(value)
        if op in ("<<", ">>") and wt is not t:
            assert isinstance(t, ScalarType)
            val = f"((int64_t)({val}) & {t.bits - 1})"
            res = self.binop(op, t, place, val, value, vt)
        else:
            res = self.binop(op, wt, f"({c_type(wt, loc)}){place}", val, value, vt)
        return f"({ct})({res})"

    def binop(
        self, op: str, t: Type, a: str, b: str, e: Expr | Stmt, bt: Type, at: Type | None = None
    ) -> str:
        """``a op b`` computed as the NumPy engine's ``ops.binary(op, t, a, b)``."""
        if not isinstance(t, (ScalarType, VectorType)):
            raise Unsupported(f"operator {op} on {t}", e.loc)
        if isinstance(t, VectorType):
            # (a scalar operand: GCC broadcasts it; a cast of a scalar to a vector is an error)
            el = scalar_c(t.elem, e.loc)
            if at is not None and not isinstance(at, VectorType):
                a = f"({el})({a})"
            if not isinstance(bt, VectorType):
                b = f"({el})({b})"
            return self.vec_binop(op, t, a, b, e)
        ct = scalar_c(t, e.loc)
        if t.is_float:
            if op == "-" and isinstance(e, Binary) and _folded_nan_risk(e.right):
                b = f"clpy_opq_{ct}(({ct})({b}))"
            if op in ("+", "-", "*", "/"):
                return f"(({ct})({a}) {op} ({ct})({b}))"
            if op == "%":
                fn = "fmodf" if ct == "float" else "fmod"
                return f"{fn}(({ct})({a}), ({ct})({b}))"
            if op in ("floordiv", "floormod"):
                name = "ffloordiv" if op == "floordiv" else "ffloormod"
                return f"clpy_{name}_{ct}(({ct})({a}), ({ct})({b}))"
            raise Unsupported(f"operator {op} on floats", e.loc)
        if t.is_bool:
            raise Unsupported(f"operator {op} on bool", e.loc)
        if op in ("<<", ">>"):
            k = f"((int64_t)({b}) & {t.bits - 1})"
            if op == "<<":
                return f"(({ct})(({unsigned_of(t)})({a}) << {k}))"
            return f"(({ct})(({ct})({a}) >> {k}))"
        if op in _ARITH:
            if op in ("+", "-", "*") and t.bits >= 32:
                # (unsigned arithmetic: wraps, and no int promotion of narrow types)
                ut = unsigned_of(t)
                return f"(({ct})(({ut})({a}) {op} ({ut})({b})))"
            return f"(({ct})(({ct})({a}) {op} ({ct})({b})))"
        if op in _DIV:
            return f"clpy_{_DIV[op]}_{ct}(({ct})({a}), ({ct})({b}))"
        raise Unsupported(f"operator {op}", e.loc)

    def vec_binop(self, op: str, t: VectorType, a: str, b: str, e: Expr | Stmt) -> str:
        ct = c_type(t, e.loc)
        if t.elem.is_float:
            if op in ("+", "-", "*", "/"):
                return f"(({ct})(({a}) {op} ({b})))"
            raise Unsupported(f"vector operator {op}", e.loc)
        if op in ("&", "|", "^", "+", "-", "*"):
            return f"(({ct})(({a}) {op} ({b})))"
        if op in ("<<", ">>"):
            return f"(({ct})(({a}) {op} (({b}) & {t.elem.bits - 1})))"
        raise Unsupported(f"vector operator {op}", e.loc)

    def x_Unary(self, e: Unary) -> str:
        t = e.type
        if isinstance(e.operand.type, PointerType):
            raise Unsupported("unary operator on a pointer", e.loc)
        v = self.expr(e.operand)
        if e.op == "+":
            return v
        if e.op == "not":
            if isinstance(t, VectorType):
                raise Unsupported("`not` on a vector", e.loc)
            return f"(!{self.cond(e.operand)})"
        ct = c_type(t, e.loc)
        if e.op == "-":
            if isinstance(t, ScalarType) and t.is_int and t.bits >= 32:
                return f"(({ct})(0 - ({unsigned_of(t)})({v})))"
            return f"(({ct})(-({v})))"
        if e.op == "~":
            if isinstance(t, ScalarType) and (t.is_float or t.is_bool):
                raise Unsupported("~ on this type", e.loc)
            return f"(({ct})~({v}))"
        raise Unsupported(f"unary operator {e.op}", e.loc)

    def x_Compare(self, e: Compare) -> str:
        lt, rt = e.left.type, e.right.type
        if isinstance(lt, PointerType) or isinstance(rt, PointerType):
            if isinstance(lt, PointerType) and isinstance(rt, PointerType):
                pa, pb = self.ptr(e.left), self.ptr(e.right)
                return f"(({pa.off}) {e.op} ({pb.off}))"
            raise Unsupported("pointer compared with a non-pointer", e.loc)
        if isinstance(e.type, VectorType):
            ct = c_type(e.type, e.loc)
            return f"(({ct})({self.expr(e.left)} {e.op} {self.expr(e.right)}))"
        a, b = self.expr(e.left), self.expr(e.right)
        if lt != rt:
            a, b = _common(a, b, lt, rt, e)
        return f"({a} {e.op} {b})"

    def x_Logical(self, e: Logical) -> str:
        c = "&&" if e.op == "and" else "||"
        return f"({self.cond(e.left)} {c} {self.cond(e.right)})"

    def x_Select(self, e: Select) -> str:
        if isinstance(e.type, (PointerType, ArrayType)):
            raise Unsupported("a choice between pointers as a value", e.loc)
        ct = c_type(e.type, e.loc)
        return (
            f"({self.cond(e.cond)} ? ({ct})({self.expr(e.if_true)}) : "
            f"({ct})({self.expr(e.if_false)}))"
        )

    def x_Cast(self, e: Cast) -> str:
        src, dst = e.value.type, e.type
        if isinstance(dst, (PointerType, ArrayType)) or isinstance(src, ArrayType):
            raise Unsupported("pointer conversion as a value", e.loc)
        v = self.expr(e.value)
        if src is dst:
            return v
        return self.convert(v, src, dst, e)

    def convert(self, v: str, src: Type, dst: Type, e: Expr) -> str:
        out = c_cast(v, src, dst)
        if out is not None:
            return out
        return basic_cast(v, src, dst, e)

    def x_Swizzle(self, e: Swizzle) -> str:
        b = self.expr(e.base)
        if len(e.lanes) == 1:
            return f"({b})[{e.lanes[0]}]"
        ct = c_type(e.type, e.loc)
        tmp = "clpy_sw"
        parts = ", ".join(f"{tmp}[{i}]" for i in e.lanes)
        bt = c_type(e.base.type, e.loc)
        return f"({{ {bt} {tmp} = {b}; ({ct}){{{parts}}}; }})"

    def x_VectorCons(self, e: VectorCons) -> str:
        t = e.type
        assert isinstance(t, VectorType)
        ct = c_type(t, e.loc)
        el = scalar_c(t.elem, e.loc)
        if len(e.parts) == 1 and not isinstance(e.parts[0].type, VectorType):
            v = f"({el})({self.expr(e.parts[0])})"
            return (
                f"(({ct}){{{', '.join([v] * t.n)}}})"
                if t.n != 3
                else (f"(({ct}){{{v}, {v}, {v}, 0}})")
            )
        items: list[str] = []
        for p in e.parts:
            if isinstance(p.type, VectorType):
                pv = self.expr(p)
                pt = c_type(p.type, p.loc)
                items.extend(f"(({el})(({pt})({pv}))[{i}])" for i in range(p.type.n))
            else:
                items.append(f"({el})({self.expr(p)})")
        if t.n == 3:
            items.append("0")
        return f"(({ct}){{{', '.join(items)}}})"


def _folded_nan_risk(e: Expr) -> bool:
    """A constant the C compiler computes that may be a NaN (not a plain literal): ``x - e``
    must not be folded into ``x + (-e)``."""
    if isinstance(e, Const):
        v = e.value
        return isinstance(v, float) and v != v
    if isinstance(e, (VarRef, Index)) or not isinstance(e, Expr):
        return False
    if isinstance(e, CallBuiltin) and e.builtin.index:
        return False
    kids = [k for k in children(e) if isinstance(k, Expr)]
    if isinstance(e, CallFunc):
        return False
    return all(_constant(k) for k in kids)


def _constant(e: Expr) -> bool:
    if isinstance(e, (Const, NamedConst)):
        return True
    if isinstance(e, (VarRef, Index, CallFunc)):
        return False
    if isinstance(e, CallBuiltin) and (e.builtin.index or e.builtin.atomic is not None):
        return False
    kids = [k for k in children(e) if isinstance(k, Expr)]
    return all(_constant(k) for k in kids)


def _ptr_elem(t: Type) -> Type:
    return t.elem if isinstance(t, PointerType) else t


def _common(a: str, b: str, lt: Type, rt: Type, e: Expr) -> tuple[str, str]:
    """Operands of a comparison of two scalar types, as NumPy compares them (exactly)."""
    if not (isinstance(lt, ScalarType) and isinstance(rt, ScalarType)):
        raise Unsupported("comparison of different types", e.loc)
    if lt.is_float or rt.is_float:
        if lt.is_float and rt.is_float:
            return f"(double)({a})", f"(double)({b})"
        raise Unsupported("comparison of an integer with a float", e.loc)
    if (lt.bits == 64 and not lt.is_signed) or (rt.bits == 64 and not rt.is_signed):
        if lt.is_signed or rt.is_signed:
            raise Unsupported("comparison of ulong with a signed integer", e.loc)
        return a, b
    return f"(int64_t)({a})", f"(int64_t)({b})"


def basic_cast(v: str, src: Type, dst: Type, e: Expr) -> str:
    """Scalar conversions that are C casts with the NumPy engine's result (``ops.convert``)."""
    if isinstance(dst, VectorType) and isinstance(src, ScalarType):
        ct = c_type(dst, e.loc)
        el = basic_cast(v, src, dst.elem, e)
        tmp = "clpy_bc"
        n = dst.n
        parts = ", ".join([tmp] * n) + (", 0" if n == 3 else "")
        return f"({{ {scalar_c(dst.elem)} {tmp} = {el}; ({ct}){{{parts}}}; }})"
    if not (isinstance(src, ScalarType) and isinstance(dst, ScalarType)):
        raise Unsupported(f"conversion {src} -> {dst}", e.loc)
    dc = scalar_c(dst, e.loc)
    scalar_c(src, e.loc)
    if dst.is_bool:
        return f"(({v}) != 0)"
    if src.is_float and not dst.is_float:
        return f"clpy_f2i_{dc}((double)({v}))"
    return f"(({dc})({v}))"
