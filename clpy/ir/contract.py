"""Floating-point contraction as an IR pass: ``a*b + c`` → ``fma(a, b, c)``, only on request.

clpy owns contraction (DESIGN.md "Semantics", floats). By default a kernel computes ``a*b + c``
with two roundings, as Python does, and the emitted C says ``#pragma OPENCL FP_CONTRACT OFF``
so no device compiler fuses behind the user's back. A kernel declared
``@clpy.kernel(fp_contract=True)`` (or launched with ``fp_contract=True``, or declared while
``CLPY_FP_CONTRACT=1``) is rewritten by ``contract_function`` before it is emitted or
simulated, so every device and the simulator run the same explicit ``fma`` calls and give the
same bits (``fma`` is correctly rounded everywhere: spec §2.4, table 36).

The rule, applied bottom-up to every expression of the kernel and of the device functions it
calls, where ``a``, ``b``, ``c`` and the result all have one floating type (``half``,
``float``, ``double`` or a vector of one):

=====================  ======================
``a*b + c``            ``fma(a, b, c)``
``c + a*b``            ``fma(a, b, c)``
``a*b - c``            ``fma(a, b, -c)``
``c - a*b``            ``fma(-a, b, c)``
``t += a*b``           ``t = fma(a, b, t)``
``t -= a*b``           ``t = fma(-a, b, t)``
=====================  ======================

When both operands of ``+`` are products the left one is fused (``a*b + c*d`` →
``fma(a, b, c*d)``). Only a product written directly as an operand fuses: a product stored in a
variable, passed through a conversion (``float(a*b) + c``) or in parentheses with another
operator is rounded as written. A compound assignment fuses only when its target has no side
effects (a variable, or an element, field or component addressed by side-effect-free
expressions), since the rewritten form reads the target as an operand. Negation is exact, so
each form is the correctly rounded ``a*b ± c``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from clpy.builtins.registry import REGISTRY, ArgInfo
from clpy.ir.nodes import (
    Assign,
    Binary,
    CallBuiltin,
    CallFunc,
    Cast,
    Compare,
    Const,
    Expr,
    Field,
    Function,
    Index,
    NamedConst,
    Select,
    Stmt,
    Swizzle,
    Unary,
    VarRef,
)
from clpy.types.core import ScalarType, Type, VectorType, element_of


def contract_function(fn: Function) -> Function:
    """``fn`` with ``a*b ± c`` fused into ``fma`` by the rule above (callees included)."""
    return _Contractor().function(fn)


def _is_float(t: Type) -> bool:
    return isinstance(t, (ScalarType, VectorType)) and element_of(t).is_float


def _is_product(e: Expr, t: Type) -> bool:
    return isinstance(e, Binary) and e.op == "*" and e.type == t and _same(e.left, e.right, t)


def _same(a: Expr, b: Expr, t: Type) -> bool:
    return a.type == t and b.type == t


def _neg(e: Expr) -> Expr:
    if isinstance(e, Unary) and e.op == "-":
        return e.operand
    return Unary(e.type, e.loc, "-", e)


def _fma(t: Type, loc: Any, a: Expr, b: Expr, c: Expr) -> Expr:
    fma = REGISTRY["fma"]
    ov = fma.resolve([ArgInfo(t)] * 3)
    return CallBuiltin(t, loc, fma, ov, (a, b, c))


def _fuse(e: Binary) -> Expr:
    """The fused form of ``e`` (already rewritten below), or ``e``."""
    t = e.type
    if e.op not in ("+", "-") or not _is_float(t) or not _same(e.left, e.right, t):
        return e
    left, right = e.left, e.right
    if _is_product(left, t):
        assert isinstance(left, Binary)
        c = right if e.op == "+" else _neg(right)
        return _fma(t, e.loc, left.left, left.right, c)
    if _is_product(right, t):
        assert isinstance(right, Binary)
        a = right.left if e.op == "+" else _neg(right.left)
        return _fma(t, e.loc, a, right.right, left)
    return e


def _pure(e: Expr) -> bool:
    """No side effects and no writes: the expression may be evaluated twice."""
    if isinstance(e, (VarRef, Const, NamedConst)):
        return True
    if isinstance(e, (Binary, Compare)):
        return _pure(e.left) and _pure(e.right)
    if isinstance(e, (Unary,)):
        return _pure(e.operand)
    if isinstance(e, Cast):
        return _pure(e.value)
    if isinstance(e, Index):
        return _pure(e.base) and _pure(e.index)
    if isinstance(e, (Field, Swizzle)):
        return _pure(e.base)
    if isinstance(e, Select):
        return _pure(e.cond) and _pure(e.if_true) and _pure(e.if_false)
    if isinstance(e, CallBuiltin):
        b = e.builtin
        side = b.writes_args or b.atomic or b.collective or b.uniform
        return not side and all(_pure(a) for a in e.args)
    return False


class _Contractor:
    """One rewrite of a program: each device function is rewritten once, and every call
    and callee list points at the rewritten copy."""

    def __init__(self) -> None:
        self.done: dict[int, Function] = {}

    def function(self, fn: Function) -> Function:
        out = self.done.get(id(fn))
        if out is None:
            callees = tuple(self.function(c) for c in fn.callees)
            body = tuple(self.stmt(s) for s in fn.body)
            out = dataclasses.replace(fn, body=body, callees=callees)
            self.done[id(fn)] = out
        return out

    def stmt(self, s: Stmt) -> Stmt:
        s = self._fields(s)
        if isinstance(s, Assign) and s.op in ("+", "-"):
            t = s.target.type
            v = s.value
            if _is_float(t) and _is_product(v, t) and _pure(s.target):
                assert isinstance(v, Binary)
                a = v.left if s.op == "+" else _neg(v.left)
                return Assign(s.loc, s.target, _fma(t, v.loc, a, v.right, s.target))
        return s

    def expr(self, e: Expr) -> Expr:
        e = self._fields(e)
        if isinstance(e, Binary):
            return _fuse(e)
        if isinstance(e, CallFunc):
            return dataclasses.replace(e, func=self.function(e.func))
        if isinstance(e, CallBuiltin) and e.combiner is not None:
            return dataclasses.replace(e, combiner=self.function(e.combiner))
        return e

    def _fields(self, node: Any) -> Any:
        changes: dict[str, Any] = {}
        for f in dataclasses.fields(node):
            if f.name in ("type", "loc"):
                continue
            v = getattr(node, f.name)
            nv = self._value(v)
            if nv is not v:
                changes[f.name] = nv
        return dataclasses.replace(node, **changes) if changes else node

    def _value(self, v: Any) -> Any:
        if isinstance(v, Expr):
            return self.expr(v)
        if isinstance(v, Stmt):
            return self.stmt(v)
        if type(v) is tuple and v and isinstance(v[0], (Expr, Stmt)):
            new = tuple(self._value(x) for x in v)
            return v if all(a is b for a, b in zip(new, v)) else new
        return v
