"""Lowerings of single built-ins for older targets (the ``Lowering.kind`` entries of
clpy/emit/lowering.py that are not collectives or atomics).

Each takes ``(ex, call, tgt)`` and returns the replacement C text.
"""

from __future__ import annotations

from clpy.emit.c_exprs import ExprEmitter
from clpy.emit.targets import Target
from clpy.errors import FeatureError
from clpy.ir.nodes import CallBuiltin, CallFunc, Expr
from clpy.ir.walk import children
from clpy.types import catalog as C
from clpy.types.core import AddressSpace, ArrayType, PointerType, Type, VectorType, element_of

# OpenCL C 1.x lacks the linear-id and enqueued-size queries; these spellings are exact there
# (1.x has only uniform work-groups, so the enqueued local size is the local size).
LOCAL_LINEAR = (
    "((get_local_id(2) * get_local_size(1) + get_local_id(1)) * get_local_size(0)"
    " + get_local_id(0))"
)
GLOBAL_LINEAR = (
    "(((get_global_id(2) - get_global_offset(2)) * get_global_size(1)"
    " + (get_global_id(1) - get_global_offset(1))) * get_global_size(0)"
    " + (get_global_id(0) - get_global_offset(0)))"
)


def lower_barrier(ex: ExprEmitter, call: CallBuiltin, tgt: Target) -> str:
    # OpenCL C 1.x has no work_group_barrier; barrier(flags) is the same without a scope.
    return f"barrier({ex(call.args[0])})"


def lower_enqueued_local_size(ex: ExprEmitter, call: CallBuiltin, tgt: Target) -> str:
    return f"get_local_size({ex(call.args[0])})"


def lower_global_linear_id(ex: ExprEmitter, call: CallBuiltin, tgt: Target) -> str:
    return GLOBAL_LINEAR


def lower_local_linear_id(ex: ExprEmitter, call: CallBuiltin, tgt: Target) -> str:
    return LOCAL_LINEAR


def _pure(e: Expr) -> bool:
    """No side effects: the expression may be evaluated twice."""
    if isinstance(e, CallFunc):
        return False
    if isinstance(e, CallBuiltin) and (
        e.builtin.writes_args or e.builtin.uniform or e.builtin.atomic is not None
    ):
        return False
    return all(_pure(c) for c in children(e) if isinstance(c, Expr))


def _unsigned(t: Type) -> Type:
    u = C.unsigned_of(element_of(t))
    return VectorType(u, t.n) if isinstance(t, VectorType) else u


def lower_ctz(ex: ExprEmitter, call: CallBuiltin, tgt: Target) -> str:
    # ctz(x) == popcount(~x & (x - 1)): the mask keeps exactly the trailing zeros, and x == 0
    # gives all ones, i.e. the bit width (spec §1.13.3). Computed on the unsigned type so that
    # x - 1 never overflows a signed type.
    x = call.args[0]
    if not _pure(x):
        raise FeatureError(
            f"ctz is OpenCL C 2.0 and {tgt} lowers it by evaluating its "
            "argument twice; assign the argument to a variable first",
            call.loc,
        )
    t = x.type
    u = _unsigned(t).cl_name
    xs = ex(x)
    ux = f"as_{u}({xs})" if u != t.cl_name else f"({xs})"
    masked = f"~{ux} & ({ux} - ({u})1)"
    if not isinstance(t, VectorType) and element_of(t).bits < 32:
        masked = f"({u})({masked})"  # char/short scalars are promoted to int by ~ and -
    inner = f"popcount({masked})"
    return inner if u == t.cl_name else f"as_{t.cl_name}({inner})"


def _static_space(call: CallBuiltin, tgt: Target) -> AddressSpace:
    t = call.args[0].type
    space = t.space if isinstance(t, (PointerType, ArrayType)) else AddressSpace.GENERIC
    if space is AddressSpace.GENERIC:
        raise FeatureError(
            f"{call.builtin.name} of a generic pointer needs the generic "
            f"address space, which target {tgt} lacks",
            call.loc,
        )
    return space


def lower_to_space(ex: ExprEmitter, call: CallBuiltin, tgt: Target) -> str:
    # Without the generic address space every pointer has a static address space, so the
    # run-time test of to_global/to_local/to_private has a static answer.
    if _static_space(call, tgt) is call.builtin.space:
        return str(ex(call.args[0]))
    return f"(({call.type.cl_name})0)"


def lower_get_fence(ex: ExprEmitter, call: CallBuiltin, tgt: Target) -> str:
    # As implementations do: local memory gets the local fence, everything else the global one.
    local = _static_space(call, tgt) is AddressSpace.LOCAL
    return "CLK_LOCAL_MEM_FENCE" if local else "CLK_GLOBAL_MEM_FENCE"


def lower_sub_group_pipe(ex: ExprEmitter, call: CallBuiltin, tgt: Target) -> str:
    """Without sub-groups a work-group is one sub-group (as clpy lowers the other sub-group
    functions): ``sub_group_reserve_read_pipe`` → ``work_group_reserve_read_pipe``."""
    name = call.builtin.cl_name
    if not tgt.has("cl_khr_subgroups"):
        name = "work_group_" + name[len("sub_group_") :]
    return f"{name}({', '.join(ex(a) for a in call.args)})"
