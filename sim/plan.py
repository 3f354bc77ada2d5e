"""Execution plans: a ``Function`` compiled once (per set of enabled checks) to closures.

``PlanBuilder`` wires the compilers together, none of which inherits another: a
``StmtCompiler`` (``sim/stmts.py``) holds an ``ExprCompiler`` (``sim/exprs.py``), which holds
an ``LvalueCompiler`` (``sim/lvalues.py``) and compiles call sites through the builder
(``builtin_call``, ``func_call``). Plans are cached per ``Function`` object (weakly, so they
die with the kernel's cache).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from clpy.ir.nodes import CallBuiltin, CallFunc, Function
from clpy.types.structs import StructType
from clpy_sim import ops
from clpy_sim.call import Call
from clpy_sim.exprs import ExprCompiler
from clpy_sim.frame import Frame
from clpy_sim.privmem import escaped_private
from clpy_sim.stmts import StmtCompiler
from clpy_sim.values import RET, struct_zero

Value = Any
_PLANS: weakref.WeakKeyDictionary[Function, dict[frozenset[str], Plan]] = (
    weakref.WeakKeyDictionary()
)


class Plan:
    def __init__(self, fn: Function, body: Callable[[Frame], Any]) -> None:
        self.fn = fn
        self.body = body


class PlanBuilder:
    """Compiles one ``Function``: the statement and expression compilers, and the call sites
    of built-ins (their simulator implementations) and device functions (their plans)."""

    def __init__(self, fn: Function, checks: frozenset[str]) -> None:
        self.fn = fn
        self.checks = checks
        escaped = escaped_private(fn)  # private arrays used as pointers: in memory
        self.exprs = ExprCompiler(self, checks, escaped)
        self.stmts = StmtCompiler(self.exprs, checks, escaped)

    def build(self) -> Plan:
        return Plan(self.fn, self.stmts.block(self.fn.body))

    def builtin_call(
        self, e: CallBuiltin, args: list[Callable[[Frame], Value]]
    ) -> Callable[[Frame], Value]:
        impl = e.builtin.sim_impl()  # named by the registry entry (tests/test_registry_complete.py)
        call = Call(e, self.checks)
        special = getattr(impl, "specialize", None)
        if special is not None:
            fast: Callable[[Frame], Value] | None = special(call, args)
            if fast is not None:
                return fast
        if not args:
            return lambda fr: impl(call, fr, [])
        if len(args) == 1:
            a0 = args[0]
            return lambda fr: impl(call, fr, [a0(fr)])
        return lambda fr: impl(call, fr, [a(fr) for a in args])

    def func_call(
        self, e: CallFunc, args: list[Callable[[Frame], Value]]
    ) -> Callable[[Frame], Value]:
        callee = e.func
        plan = get_plan(callee, self.checks)
        params = callee.params
        ret_t = callee.ret
        void = getattr(ret_t, "cl_name", "void") == "void"
        zero = (
            None
            if void
            else (struct_zero(ret_t) if isinstance(ret_t, StructType) else ops.zeros(ret_t))
        )

        def call(fr: Frame) -> Value:
            vals = [a(fr) for a in args]
            sub = fr.scope()
            env = sub.env
            for p, v in zip(params, vals):
                env[p] = v
            if not void:
                env[RET] = zero
            plan.body(sub)
            return None if void else env[RET]

        return call


def get_plan(fn: Function, checks: frozenset[str]) -> Plan:
    """The plan of ``fn`` with the checkers ``checks`` on, compiled on first use."""
    per = _PLANS.get(fn)
    if per is None:
        per = {}
        _PLANS[fn] = per
    plan = per.get(checks)
    if plan is None:
        plan = PlanBuilder(fn, checks).build()
        per[checks] = plan
    return plan
