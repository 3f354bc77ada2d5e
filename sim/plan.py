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
from clpy.types.core import PointerType
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


def _float_valued(t: Any) -> bool:
    """A float, a pointer to floats or a float atomic (what a float atomic acts on)."""
    while isinstance(t, PointerType):
        t = t.elem
    t = getattr(t, "value", t)  # AtomicType
    return bool(getattr(t, "is_float", False))


class Plan:
    """``body`` runs the kernel on a frame. ``serial_checked``: with the race checker on, the
    batches run one after another. ``batch_free``: with every checker off and atomics in
    work-item order, the results do not depend on how the work-groups are cut into batches
    (sim/parallel.py ``split``): no float atomic (whose rounding may follow the batch's lanes
    when many addresses are hit) and no device-side enqueue (children numbered per batch)."""

    def __init__(
        self,
        fn: Function,
        body: Callable[[Frame], Any],
        serial: bool = False,
        batch_free: bool = True,
    ) -> None:
        self.fn = fn
        self.body = body
        self.serial_checked = serial
        self.batch_free = batch_free
        # launches with threads left to the default: how they run, per (work-groups, ways)
        # (sim/parallel.py Tuner)
        self.tuners: dict[tuple[int, int], Any] = {}


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
        self.batch_free = True

    def build(self) -> Plan:
        body = self.stmts.block(self.fn.body)
        return Plan(self.fn, body, self.serial, self.batch_free)

    def builtin_call(
        self, e: CallBuiltin, args: list[Callable[[Frame], Value]]
    ) -> Callable[[Frame], Value]:
        impl = e.builtin.sim_impl()  # named by the registry entry (tests/test_registry_complete.py)
        if e.builtin.name in _SERIAL_CHECKED:
            self.serial = True
        if e.builtin.name.startswith("enqueue") or (
            e.builtin.atomic is not None and any(_float_valued(a.type) for a in e.args)
        ):
            self.batch_free = False
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
        self.batch_free = self.batch_free and plan.batch_free
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
