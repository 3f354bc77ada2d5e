"""Typed IR expressions → OpenCL C expression text (precedence-aware, readable)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from clpy.emit.blocks import block_text, enqueue_text, ndrange_text
from clpy.emit.lower_narrow import convert_spelled
from clpy.emit.lower_negation import NARROW, negation_call
from clpy.emit.lower_vector_mask import opaque_mask, wants_opaque_mask
from clpy.emit.names import Namer
from clpy.errors import CompileError
from clpy.ir.blocks import BlockLiteral
from clpy.ir.nodes import (
    Binary,
    CallBuiltin,
    CallFunc,
    Cast,
    Compare,
    Const,
    Expr,
    Field,
    Index,
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
from clpy.types import rules
from clpy.types.core import ArrayType, PointerType, ScalarType, Type, VectorType
from clpy.types.pipes import reserve_id_t

# C operator precedence (higher binds tighter).
_PREC = {
    "*": 13,
    "/": 13,
    "%": 13,
    "+": 12,
    "-": 12,
    "<<": 11,
    ">>": 11,
    "<": 10,
    "<=": 10,
    ">": 10,
    ">=": 10,
    "==": 9,
    "!=": 9,
    "&": 8,
    "^": 7,
    "|": 6,
    "and": 5,
    "or": 4,
}
_UNARY = 15
_POSTFIX = 16
_TERNARY = 3
# An operand of a relational operator binds tighter than it (a for loop's `i < stop`).
RELATIONAL_OPERAND = _PREC["<"] + 1
_BITWISE = ("&", "^", "|", "<<", ">>")
_XYZW = "xyzw"
# A C expression that ends in a vector component selection (OpenCL C §6.1.7).
_SWIZZLE_END = re.compile(r"\.(?:[xyzw]{1,4}|s[0-9A-Fa-f]{1,16}|lo|hi|even|odd)$")


def type_name(t: Type) -> str:
    """C spelling of a value type (pointers with their address space)."""
    return t.cl_name


def const_text(value: Any, t: Type) -> str:
    """A C literal of type ``t``: suffixes keep the type exact (``1u``, ``2L``, ``0.5f``)."""
    if isinstance(t, ScalarType):
        if t.is_bool:
            return "true" if value else "false"
        if t.is_float:
            return _float_text(float(value), t)
        v = int(value)
        if t.bits == 64:
            if t.is_signed:
                return "(-9223372036854775807L - 1)" if v == -(2**63) else f"{v}L"
            return f"{v}UL"
        if not t.is_signed:
            return f"{v}u" if t.bits == 32 else f"(({t.name}){v}u)"
        if v == -(2**31):
            return "(-2147483647 - 1)"
        return f"{v}" if t.bits == 32 else f"(({t.name}){v})"
    raise CompileError(f"cannot write a constant of type {t}")


def _float_text(v: float, t: ScalarType) -> str:
    if math.isnan(v):
        return "NAN" if t is C.float_ else f"(({t.name})NAN)"
    if math.isinf(v):
        s = "INFINITY" if t is C.float_ else f"(({t.name})INFINITY)"
        return s if v > 0 else f"(-{s})"
    text = repr(v)
    if t is not C.double:
        # the shortest decimal text that rounds to the same float/half value
        np_t = np.float32 if t is C.float_ else np.float16
        with np.errstate(over="ignore"):  # candidates past the type's max round to inf
            for digits in range(1, 18):
                cand = f"{v:.{digits}g}"
                if np_t(float(cand)) == np_t(v):
                    text = cand
                    break
    if "e" not in text and "." not in text and "inf" not in text:
        text += ".0"
    if t is C.float_:
        return text + "f"
    if t is C.half:
        return f"(half){text}f"
    return text


def swizzle_text(base_type: VectorType, lanes: tuple[int, ...]) -> str:
    if base_type.n <= 4 and all(i < 4 for i in lanes):
        return "".join(_XYZW[i] for i in lanes)
    return "s" + "".join("0123456789ABCDEF"[i] for i in lanes)


class ExprEmitter:
    """Writes expressions. ``call_hook`` lets lowering passes take over a built-in call."""

    def __init__(
        self,
        names: Namer,
        helpers: set[tuple[str, Type]],
        call_hook: Callable[[ExprEmitter, CallBuiltin], str | None] | None = None,
    ) -> None:
        self.names = names
        self.helpers = helpers
        self.call_hook = call_hook
        # C names of device functions (unique in the program, clear of built-in names).
        self.fn_names: dict[Any, str] = {}

    def __call__(self, e: Expr) -> str:
        return self.emit(e)[0]

    def sub(self, e: Expr, min_prec: int, parent_op: str | None = None) -> str:
        text, prec = self.emit(e)
        if prec < min_prec or (parent_op is not None and _needs_clarity(parent_op, e)):
            return f"({text})"
        return text

    def emit(self, e: Expr) -> tuple[str, int]:
        method = getattr(self, f"e_{type(e).__name__}")
        result: tuple[str, int] = method(e)
        return result

    def e_Const(self, e: Const) -> tuple[str, int]:
        t = e.type
        if e.weak and isinstance(t, ScalarType) and t.is_int and -(2**31) < e.value < 2**31:
            # An untyped literal in an integer context reads best as plain decimal; C's own
            # conversion gives the same value.
            text = str(int(e.value))
        else:
            text = const_text(e.value, t)
        return text, (_UNARY if text[0] in "-(" else _POSTFIX)

    def e_NamedConst(self, e: NamedConst) -> tuple[str, int]:
        return e.name, (_PREC["|"] if "|" in e.name else _POSTFIX)

    def e_VarRef(self, e: VarRef) -> tuple[str, int]:
        return self.names(e.var), _POSTFIX

    def e_Binary(self, e: Binary) -> tuple[str, int]:
        if e.op in ("floordiv", "floormod"):
            self.helpers.add((e.op, e.type))
            return f"clpy_{e.op}_{e.type.cl_name}({self(e.left)}, {self(e.right)})", _POSTFIX
        p = _PREC[e.op]
        if e.op in ("<<", ">>"):
            lhs, rhs = _shift_operands(e)
        else:
            lhs, rhs = implicit_operands(e.type, e.left, e.right)
        left = self.sub(lhs, p, e.op)
        right = self.sub(rhs, p + 1, e.op)
        if right.startswith("-"):
            right = f"({right})"
        return f"{left} {e.op} {right}", p

    def e_Compare(self, e: Compare) -> tuple[str, int]:
        p = _PREC[e.op]
        common = e.left.type
        lhs, rhs = implicit_operands(common, e.left, e.right)
        text = f"{self.sub(lhs, p + 1, e.op)} {e.op} {self.sub(rhs, p + 1, e.op)}"
        if wants_opaque_mask(e.type, self.call_hook):  # lower_vector_mask.py
            assert isinstance(e.type, VectorType)
            return opaque_mask(e.type, text), _POSTFIX
        return text, p

    def e_Logical(self, e: Logical) -> tuple[str, int]:
        p = _PREC[e.op]
        op = "&&" if e.op == "and" else "||"
        return f"{self.sub(e.left, p, e.op)} {op} {self.sub(e.right, p + 1, e.op)}", p

    def e_Unary(self, e: Unary) -> tuple[str, int]:
        if e.op == "-" and isinstance(e.type, ScalarType) and e.type.cl_name in ("int", "long"):
            lowered = self._lowered_negation(e.type, e.operand)
            if lowered is not None:
                return lowered, _POSTFIX
        op = "!" if e.op == "not" else e.op
        inner = self.sub(e.operand, _UNARY)
        if op in "+-" and inner.startswith(op):
            inner = f"({inner})"
        if op == "!" and wants_opaque_mask(e.type, self.call_hook):  # lower_vector_mask.py
            assert isinstance(e.type, VectorType)
            return opaque_mask(e.type, f"!{inner}"), _POSTFIX
        return f"{op}{inner}", _UNARY

    def e_Select(self, e: Select) -> tuple[str, int]:
        text = (
            f"{self.sub(e.cond, _TERNARY + 1)} ? {self.sub(e.if_true, _TERNARY + 1)} : "
            f"{self.sub(e.if_false, _TERNARY)}"
        )
        t = e.type
        if isinstance(t, ScalarType) and t.is_int and t.size < 4:
            # C promotes char/short operands of ?: to int (C99 6.5.15p5); the IR's type is
            # the narrow one, so say it: min(short, c ? s : s) is otherwise ambiguous and
            # clz(c ? uc : uc) counts the zeros of an int (found by clpy.fuzz).
            return f"({t.cl_name})({text})", _UNARY
        return text, _TERNARY

    def e_Cast(self, e: Cast) -> tuple[str, int]:
        narrow = narrow_negation(e)
        if narrow is not None:
            assert isinstance(e.type, ScalarType)
            lowered = self._lowered_negation(e.type, narrow)
            if lowered is not None:
                return lowered, _POSTFIX
        if convert_spelled(e, self.target_info()):  # a device's narrowing quirk (lower_narrow)
            return f"convert_{e.type.cl_name}({self(e.value)})", _POSTFIX
        src, dst = e.value.type, e.type
        if isinstance(dst, VectorType):
            if isinstance(src, VectorType):
                return f"convert_{dst.cl_name}({self(e.value)})", _POSTFIX
            # a cast, not a postfix expression: `(int4)(x).s1` would swizzle x
            return f"({dst.cl_name})({self(e.value)})", _UNARY
        if isinstance(dst, PointerType):
            if isinstance(src, ArrayType):  # an array as a pointer: C decays it by itself
                return self.sub(e.value, _POSTFIX), _POSTFIX
            return f"({dst.cl_name}){self.sub(e.value, _UNARY)}", _UNARY
        return f"({dst.cl_name}){self.sub(e.value, _UNARY)}", _UNARY

    def e_CallBuiltin(self, e: CallBuiltin) -> tuple[str, int]:
        if self.call_hook is not None:
            text = self.call_hook(self, e)
            if text is not None:
                return text, _POSTFIX
        if e.builtin.emit:
            return CUSTOM_EMIT[e.builtin.emit](self, e), _POSTFIX
        args = ", ".join(self(a) for a in e.args)
        return f"{e.builtin.spell(e.overload)}({args})", _POSTFIX

    def e_CallFunc(self, e: CallFunc) -> tuple[str, int]:
        name = self.fn_names.get(e.func, e.func.name)
        return f"{name}({', '.join(self(self.implicit(a)) for a in e.args)})", _POSTFIX

    def e_Index(self, e: Index) -> tuple[str, int]:
        return f"{self.sub(e.base, _POSTFIX)}[{self(e.index)}]", _POSTFIX

    def e_Field(self, e: Field) -> tuple[str, int]:
        return f"{self.sub(e.base, _POSTFIX)}.{e.name}", _POSTFIX

    def e_Swizzle(self, e: Swizzle) -> tuple[str, int]:
        bt = e.base.type
        assert isinstance(bt, VectorType)
        base = e.base
        if (
            isinstance(base, VectorCons)
            and len(base.parts) == 1
            and not isinstance(base.parts[0].type, VectorType)
        ):
            # Every lane of a broadcast is its scalar: `((ushort4)(x)).zy` is `(ushort2)(x)`
            # (x evaluated once either way). PoCL 3.0's compiler crashes on the swizzle form
            # as a later part of a vector literal (found by clpy.fuzz, seed 1001511).
            part = base.parts[0]
            if part.type == e.type:  # one lane: the scalar itself
                return self.emit(part)
            return f"({e.type.cl_name})({self(part)})", _UNARY
        return f"{self.sub(e.base, _POSTFIX)}.{swizzle_text(bt, e.lanes)}", _POSTFIX

    def e_VectorCons(self, e: VectorCons) -> tuple[str, int]:
        # a vector literal is a cast expression (OpenCL C §6.1.6): `(int4)(a, b, c, d).s1`
        # would apply .s1 to d (found by clpy.fuzz)
        parts = [self._literal_part(p) for p in e.parts] if len(e.parts) > 1 else [self(e.parts[0])]
        return f"({e.type.cl_name})({', '.join(parts)})", _UNARY

    def _literal_part(self, p: Expr) -> str:
        """One part of a vector literal of several parts. A swizzle of a computed vector is
        parenthesized, `(long4)((long2)(5L), ((t + t).xw))`: PoCL 3.0's compiler segfaults on
        `(long4)((long2)(5L), (t + t).xw)`, a constant vector part followed by such a swizzle
        (clang's shortcut for a swizzle directly inside a vector initializer, which the
        parentheses turn off; a swizzle of a variable builds). Fuzz seeds 310046, 311478,
        311871; tests/test_fuzz_regressions.py."""
        text, prec = self.emit(p)
        if prec >= _POSTFIX and _SWIZZLE_END.search(text) and not _is_lvalue(p):
            return f"({text})"
        return text

    def operand(self, e: Expr) -> str:
        """``e`` as the operand of a cast or unary operator (parenthesized unless tighter)."""
        return self.sub(e, _UNARY)

    def target_info(self) -> Mapping[str, Any]:
        """The target's ``info`` (device quirks), empty when emitting for no device."""
        tgt = getattr(self.call_hook, "tgt", None)
        return tgt.info if tgt is not None else {}

    def implicit(self, e: Expr) -> Expr:
        """``implicit_value(e)``, except a conversion the target spells out (lower_narrow)."""
        return e if convert_spelled(e, self.target_info()) else implicit_value(e)

    def _lowered_negation(self, t: ScalarType, operand: Expr) -> str | None:
        """``-operand`` in ``t`` as a helper call where the target's device gets a signed
        negation wrong (``Target.info["lower_negation"]``; clpy/emit/lower_negation.py)."""
        info = self.target_info()
        if t.cl_name not in info.get("lower_negation", ()):
            return None
        spelling = str(info.get("negation_spelling", "volatile"))
        text, helper = negation_call(spelling, t, self(operand))
        self.helpers.add(helper)
        return text

    def e_BlockLiteral(self, e: BlockLiteral) -> tuple[str, int]:
        return block_text(self, e, self.implicit), _POSTFIX

    def e_StructCons(self, e: StructCons) -> tuple[str, int]:
        return f"({e.type.cl_name}){{{', '.join(self(p) for p in e.fields)}}}", _POSTFIX


def _is_lvalue(e: Expr) -> bool:
    """A variable, element or field, or a swizzle of one (C's lvalues among expressions)."""
    while isinstance(e, (Swizzle, Field, Index)):
        if isinstance(e, Index):
            return True
        e = e.base
    return isinstance(e, VarRef)


def _emit_pipe_packet(ex: ExprEmitter, call: CallBuiltin) -> str:
    """read_pipe/write_pipe: ``&buf[i]`` for the index forms; the rest as written."""
    args = list(call.args)
    reserved = call.overload.params[1] is reserve_id_t
    head = args[:3] if reserved else args[:1]
    tail = args[len(head) :]
    parts = [ex(a) for a in head]
    if len(tail) == 2:
        base, idx = tail
        parts.append(f"&{ex.sub(base, _POSTFIX)}[{ex(idx)}]")
    elif isinstance(tail[0].type, ArrayType):  # clang's pipe built-ins take no array: &a[0]
        parts.append(f"&{ex.sub(tail[0], _POSTFIX)}[0]")
    else:
        parts.append(ex(tail[0]))
    return f"{call.builtin.cl_name}({', '.join(parts)})"


def _emit_async_copy(ex: ExprEmitter, call: CallBuiltin) -> str:
    """async_work_group_(strided_)copy: the event argument is 0 when left out."""
    args = [ex(a) for a in call.args]
    if len(args) == (5 if "strided" in call.builtin.name else 4) - 1:
        args.append("0")
    return f"{call.builtin.cl_name}({', '.join(args)})"


def _emit_wait_events(ex: ExprEmitter, call: CallBuiltin) -> str:
    """wait_group_events: the spec's (num, list) form as written; events given one by one go
    through ``clpy_wait_events<k>`` (clpy/emit/helpers.py), which puts them in an array."""
    if call.overload.params[0] is not C.event_t:
        return f"wait_group_events({ex(call.args[0])}, {ex(call.args[1])})"
    k = len(call.args)
    ex.helpers.add((f"wait_events{k}", C.event_t))
    return f"clpy_wait_events{k}({', '.join(ex(a) for a in call.args)})"


# ``Builtin.emit`` → the custom emission used on every target.
CUSTOM_EMIT: dict[str, Callable[[ExprEmitter, CallBuiltin], str]] = {
    "pipe_packet": _emit_pipe_packet,
    "ndrange": ndrange_text,
    "enqueue": enqueue_text,
    "async_copy": _emit_async_copy,
    "wait_events": _emit_wait_events,
}


def _c_common(a: Type, b: Type) -> Type | None:
    """The type C's usual arithmetic conversions give ``a op b`` (None: not C-implicit)."""
    if isinstance(a, ScalarType) and isinstance(b, ScalarType):
        if a is C.void or b is C.void:
            return None
        return rules.common_scalar(a, b)
    if isinstance(a, VectorType) and isinstance(b, VectorType):
        return a if a is b else None
    # vector op scalar: the scalar converts to the element type (spec §1.3); only
    # rely on it when the scalar already has that element type.
    vec, other = (a, b) if isinstance(a, VectorType) else (b, a)
    if isinstance(vec, VectorType) and other is vec.elem:
        return vec
    return None


def _uncast(e: Expr) -> Expr | None:
    """The operand under an implicit-looking conversion (scalar→scalar, scalar→vector)."""
    if (
        isinstance(e, Cast)
        and isinstance(e.value.type, ScalarType)
        and isinstance(e.type, (ScalarType, VectorType))
        and e.value.type is not C.bool_
        # the signed conversion of a work-item query stays visible: (int)get_global_id(0)
        and not (isinstance(e.value, CallBuiltin) and e.value.builtin.index)
    ):
        return e.value
    return None


def implicit_operands(t: Type, left: Expr, right: Expr) -> tuple[Expr, Expr]:
    """Drop conversions of binary operands that C's usual arithmetic conversions redo.

    The IR makes every conversion explicit; the C text leaves out those the compiler applies
    anyway (``(float)i * x`` → ``i * x``), keeping one where the result type depends on it
    (``(float)a / b`` for true division of two ints).
    """
    ul, ur = _uncast(left), _uncast(right)
    if ul is None and ur is None:
        return left, right
    for cand_l, cand_r in ((ul, ur), (left, ur), (ul, right)):
        if cand_l is None or cand_r is None:
            continue
        if _c_common(_c_type(cand_l), _c_type(cand_r)) is t:
            return cand_l, cand_r
    return left, right


def _c_type(e: Expr) -> Type:
    """The type C gives ``e`` as written: a weak integer literal is spelled in plain decimal
    (``e_Const``), an ``int`` whatever its IR type (``(long)u > -1`` must keep its cast)."""
    if (
        isinstance(e, Const)
        and e.weak
        and isinstance(e.type, ScalarType)
        and e.type.is_int
        and -(2**31) < e.value < 2**31
    ):
        return C.int_
    return e.type


def _shift_operands(e: Binary) -> tuple[Expr, Expr]:
    """A shift's result has the promoted left type; the count may have any integer type."""
    left, right = e.left, e.right
    ul = _uncast(left)
    if (
        ul is not None
        and isinstance(ul.type, ScalarType)
        and isinstance(e.type, ScalarType)
        and rules.promote_int(ul.type) is e.type
    ):
        left = ul
    ur = _uncast(right)
    if ur is not None and isinstance(ur.type, ScalarType) and ur.type.is_int:
        vec = e.type if isinstance(e.type, VectorType) else None
        if vec is None or ur.type is vec.elem:
            right = ur
    return left, right


def narrow_negation(e: Expr) -> Expr | None:
    """``a`` of ``(short)-(int)a`` (char or short ``a``, negated in int and converted back),
    else None."""
    if not (isinstance(e, Cast) and isinstance(e.type, ScalarType)):
        return None
    if e.type.cl_name not in NARROW or not isinstance(e.value, Unary) or e.value.op != "-":
        return None
    inner = e.value.operand
    if isinstance(inner, Cast) and inner.value.type == e.type:
        return inner.value
    return None


def implicit_value(e: Expr) -> Expr:
    """Drop a conversion that assignment (or passing to a prototyped parameter) does in C.

    Widening conversions and integer↔integer conversions are left to C; float→int and
    narrowing float conversions stay explicit, since they lose information a reader should
    see. Vector broadcasts of a scalar of the element type are implicit too.
    """
    if narrow_negation(e) is not None:
        return e  # (short)-(int)a: the cast is where a device quirk may lower it
    if (
        isinstance(e, Cast)
        and isinstance(e.value, (Compare, Logical))
        and isinstance(e.type, ScalarType)
        and e.type.is_int
        and e.value.type is C.bool_
    ):
        return e.value  # a C comparison already is an int 0/1
    inner = _uncast(e)
    if inner is None:
        return e
    src, dst = inner.type, e.type
    assert isinstance(src, ScalarType)
    if isinstance(dst, VectorType):
        return inner if src is dst.elem else e
    assert isinstance(dst, ScalarType)
    if dst.is_bool:
        return e
    if src.is_int and (dst.is_int or dst.is_float):
        return inner
    if src.is_float and dst.is_float and dst.bits >= src.bits:
        return inner
    return e


def _needs_clarity(parent: str, child: Expr) -> bool:
    """Parenthesise mixes C programmers misread (``a & b == c``, ``a << b + c``, ``&&`` in
    ``||``), as compilers' -Wparentheses asks."""
    cop = child.op if isinstance(child, (Binary, Compare, Logical)) else None
    if cop is None or cop == parent:
        return False
    if parent in _BITWISE or cop in _BITWISE:
        return True
    return parent == "or" and cop == "and"
