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


# built-ins whose checker state lives on a launch-wide memory object (sim/async_copy.py):
# a launch using them with the race checker on runs its batches one after another
_SERIAL_CHECKED = frozenset({"async_work_group_copy", "async_work_group_strided_copy"})


class Plan:
    def __init__(self, fn: Function, body: Callable[[Frame], Any], serial: bool = False) -> None:
        self.fn = fn
        self.body = body
        self.serial_checked = serial


class PlanBuilder:
    """Compiles one ``Function``: the statement and expression compilers, and the call sites
    of built-ins (their simulator implementations) and device functions (their plans)."""

    def __init__(self, fn: Function, checks: frozenset[str]) -> None:
        self.fn = fn
        self.checks = checks
        escaped = escaped_private(fn)  # private arrays used as pointers: in memory
        self.exprs = ExprCompiler(self, checks, escaped)
        self.stmts = StmtCompiler(self.exprs, checks, escaped)
        self.serial = False

    def build(self) -> Plan:
        body = self.stmts.block(self.fn.body)
        return Plan(self.fn, body, self.serial)

    def builtin_call(
        self, e: CallBuiltin, args: list[Callable[[Frame], Value]]
    ) -> Callable[[Frame], Value]:
        impl = e.builtin.sim_impl()  # named by the registry entry (tests/test_registry_complete.py)
        if e.builtin.name in _SERIAL_CHECKED:
            self.serial = True
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
        self.serial = self.serial or plan.serial_checked
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
