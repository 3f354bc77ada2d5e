"""Lowering of work-group and sub-group collectives to local memory + barriers.

Used where the target lacks ``__opencl_c_work_group_collective_functions`` (PoCL, OpenCL C 1.2
devices), for reductions with operators OpenCL lacks and for user-defined reductions (always),
and for sub-group functions on targets without ``cl_khr_subgroups``: there the extension's
degenerate case applies (one sub-group per work-group: sub-group size = work-group size), so
sub-group collectives lower to the same work-group code.

Identities: the spec's (§1.13.15) for add/min/max, OpenMP 5.1 table 2.11 for the others
(``mul`` 1, ``and`` ~0, ``or``/``xor`` 0, ``logical_and`` 1, ``logical_or`` 0); the "maximal
representable number" for floating-point min is +INF (and -INF for max), as in OpenCL.
"""

from __future__ import annotations

from typing import Any

from clpy.emit.c_exprs import ExprEmitter, const_text
from clpy.emit.lower_helpers import LID, NITEMS, helper_name
from clpy.emit.targets import Target
from clpy.errors import FeatureError
from clpy.ir.nodes import CallBuiltin
from clpy.ir.operators import identity_value
from clpy.types.core import ScalarType, Type, VectorType

# The work-item functions of a sub-group when one sub-group spans the whole work-group.
DEGENERATE_SUB_GROUP = {
    "get_sub_group_size": f"(uint){NITEMS}",
    "get_max_sub_group_size": "(uint)(get_enqueued_local_size(0) * get_enqueued_local_size(1) "
    "* get_enqueued_local_size(2))",
    "get_num_sub_groups": "1u",
    "get_enqueued_num_sub_groups": "1u",
    "get_sub_group_id": "0u",
    "get_sub_group_local_id": f"(uint){LID}",
}


def identity_text(op: str, t: Type) -> str:
    if isinstance(t, VectorType):
        return f"({t.cl_name})({const_text(identity_value(op, t.elem), t.elem)})"
    assert isinstance(t, ScalarType)
    return const_text(identity_value(op, t), t)


def _scratch(ex: ExprEmitter, t: Type, call: CallBuiltin) -> str:
    hook: Any = ex.call_hook
    return str(hook.scratch(t.size, t.align, t.cl_name, call.loc, f"clpy.{call.builtin.name}"))


def lower_collective(ex: ExprEmitter, call: CallBuiltin, tgt: Target) -> str:
    """Replacement text for one collective call (helpers are registered on ``ex``)."""
    b = call.builtin
    assert b.collective is not None
    scope, mode, op = b.collective.scope, b.collective.mode, b.collective.op
    if scope == "sg" and (tgt.has("__opencl_c_subgroups") or tgt.has("cl_khr_subgroups")):
        raise FeatureError(
            f"clpy.{b.name} with operator {op!r} cannot be lowered on target {tgt}: it has "
            "real sub-groups and clpy lowers sub-group operators other than add/min/max only "
            "where one sub-group spans the work-group (targets without sub-groups)",
            call.loc,
        )
    if mode == "info":  # sub-group work-item functions, degenerate case
        if b.name == "get_max_sub_group_size" and tgt.version < (2, 0):
            # OpenCL C 1.x lacks get_enqueued_local_size; its work-groups are all uniform
            return "(uint)(get_local_size(0) * get_local_size(1) * get_local_size(2))"
        return DEGENERATE_SUB_GROUP[b.name]
    if mode == "barrier":
        return f"barrier({ex(call.args[0])})"
    t = call.args[0].type
    x = ex(call.args[0])
    if mode == "broadcast":
        ids = [ex(a) for a in call.args[1:]]
        if len(ids) == 1:
            lin = ids[0]
        elif len(ids) == 2:
            lin = f"{ids[1]} * get_local_size(0) + {ids[0]}"
        else:
            lin = f"({ids[2]} * get_local_size(1) + {ids[1]}) * get_local_size(0) + {ids[0]}"
        ex.helpers.add(("lower:broadcast:", t))
        return f"{helper_name('broadcast', '', t)}({x}, {lin}, {_scratch(ex, t, call)})"
    if mode in ("all", "any"):
        mode = "reduce"
        x = f"({x}) != 0"
    if op == "user":
        if call.combiner is None:
            raise FeatureError(
                f"clpy.{b.name} is what clpy.{b.name[: -len('_user')]}(x, r) "
                "compiles to for a @clpy.reduction r; call that form",
                call.loc,
            )
        op = f"user={call.combiner.name}"
    ex.helpers.add((f"lower:{mode}:{op}", t))
    name = helper_name(mode, op, t)
    if mode == "scan_exclusive":
        ident = ex(call.args[1]) if op.startswith("user=") else identity_text(op, t)
        return f"{name}({x}, {ident}, {_scratch(ex, t, call)})"
    return f"{name}({x}, {_scratch(ex, t, call)})"
