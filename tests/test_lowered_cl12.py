"""Every lowering builds under the target it claims (issue 12): each built-in that the
``opencl-c-1.2`` target lowers is called from a small kernel built straight from the IR
(one overload, its arguments as kernel parameters), emitted for OpenCL C 1.2 and built with
``-cl-std=CL1.2`` on PoCL. A built-in that cannot be called this way is listed in ``SKIPPED``
with the reason; a new lowered built-in must either build or be listed."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import clpy
from clpy.builtins.registry import REGISTRY, ArgInfo, Builtin, NoMatch, Overload
from clpy.emit.lowering import needs_lowering
from clpy.emit.program import emit_program
from clpy.emit.targets import target_of
from clpy.ir.nodes import (
    Assign,
    CallBuiltin,
    Cast,
    Const,
    Expr,
    ExprStmt,
    Function,
    Index,
    Loc,
    NamedConst,
    Stmt,
    Var,
    VarRef,
)
from clpy.runtime.api import get_device
from clpy.types import catalog as C
from clpy.types.atomics import AtomicType
from clpy.types.core import AddressSpace, PointerType, ScalarType, Type, VectorType

TARGET = target_of("opencl-c-1.2")
LOC = Loc(__file__, 1)
_G = AddressSpace.GLOBAL

SKIPPED = {
    **{n: "takes a generic pointer, which a kernel parameter cannot be"
       for n in ("to_global", "to_local", "to_private")},
    **{n: "needs an atomic object and an expected-value pointer in private memory"
       for n in ("atomic_compare_exchange_strong", "atomic_compare_exchange_strong_explicit",
                 "atomic_compare_exchange_weak", "atomic_compare_exchange_weak_explicit")},
    **{n: "takes an atomic_flag" for n in ("atomic_flag_test_and_set",
                                          "atomic_flag_test_and_set_explicit")},
    "work_group_broadcast": "variadic work-item ids (covered by tests/test_collectives.py)",
    **{f"sub_group_{a}_{b}_pipe": "pipes are OpenCL 2.0" for a in ("reserve", "commit")
       for b in ("read", "write")},
    **{f"{s}_{m}_user": "needs a @clpy.reduction combiner (tests/test_reductions.py)"
       for s in ("work_group", "sub_group")
       for m in ("reduce", "scan_inclusive", "scan_exclusive")},
}


def _param_ok(t: Type) -> bool:
    if isinstance(t, PointerType):
        return t.space is _G and (isinstance(t.elem, AtomicType) or _param_ok(t.elem))
    if isinstance(t, VectorType):
        t = t.elem
    return isinstance(t, ScalarType) and not (
        t.is_bool or (t.is_float and t.bits != 32) or t in C.SIZE_SCALARS
    )


def _overloads(b: Builtin) -> list[Overload]:
    if b.overloads:
        return list(b.overloads)
    ptrs = [PointerType(C.int_, _G), PointerType(AtomicType(C.int_), _G)]
    cands: list[list[ArgInfo]] = [[ArgInfo(C.int_)], [ArgInfo(C.float_)]]
    for p in ptrs:
        cands.extend([ArgInfo(p)] + [ArgInfo(C.int_, False, 0)] * k for k in range(5))
    out = []
    for c in cands:
        try:
            out.append(b.resolve(c))
        except NoMatch:
            continue
    return out


def kernel_calling(b: Builtin) -> Function | None:
    """``k(a0, a1, ..., out)``: ``out[0] = b(a0, a1, ...)``, or None if no overload fits."""
    ov = next(
        (o for o in _overloads(b) if all(_param_ok(p) for p in o.params)
         and (o.ret is C.void or _param_ok(o.ret) or o.ret in C.SIZE_SCALARS)),
        None,
    )
    if ov is None:
        return None
    params: list[Var] = []
    args: list[Expr] = []
    first_default = len(ov.params) - len(b.defaults)
    for i, p in enumerate(ov.params):
        if i in b.const_args:
            d: Any = b.defaults[i - first_default] if i >= first_default else None
            args.append(NamedConst(d.type, LOC, d.name, d.value) if d is not None
                        else Const(p, LOC, 0))
            continue
        v = Var(f"a{i}", p, LOC, True)
        params.append(v)
        args.append(VarRef(p, LOC, v))
    call = CallBuiltin(ov.ret, LOC, b, ov, tuple(args))
    body: list[Stmt] = []
    if ov.ret is C.void:
        body.append(ExprStmt(LOC, call))
    else:
        rt = C.ulong if ov.ret in C.SIZE_SCALARS else ov.ret
        out = Var("out", PointerType(rt, _G), LOC, True)
        params.append(out)
        target = Index(rt, LOC, VarRef(out.type, LOC, out), Const(C.int_, LOC, 0))
        body.append(Assign(LOC, target, call if rt is ov.ret else Cast(rt, LOC, call)))
    return Function(f"k_{b.name}", tuple(params), C.void, tuple(body), True, LOC, __file__,
                    frozenset({"out"}))


LOWERED = sorted(n for n, b in REGISTRY.items()
                 if b.lowering is not None and needs_lowering(b, TARGET))


def test_the_skip_list_is_exactly_what_cannot_be_built_here() -> None:
    cannot = {n for n in LOWERED if kernel_calling(REGISTRY[n]) is None}
    cannot |= {"to_global", "to_local", "to_private"}  # callable, but not from a parameter
    assert cannot == set(SKIPPED), sorted(cannot ^ set(SKIPPED))


@pytest.mark.parametrize("name", [n for n in LOWERED if n not in SKIPPED])
def test_lowering_builds_under_cl12(name: str, cl_context: Any) -> None:
    import pyopencl as cl

    fn = kernel_calling(REGISTRY[name])
    assert fn is not None
    src = emit_program(fn, TARGET)
    try:
        cl.Program(cl_context, src).build(options="-cl-std=CL1.2")
    except cl.RuntimeError as e:  # pragma: no cover - the failure is the message
        pytest.fail(f"{name} lowered for {TARGET} does not build under CL1.2:\n{src}\n{e}")


def test_max_sub_group_size_uses_only_cl12_functions() -> None:
    fn = kernel_calling(REGISTRY["get_max_sub_group_size"])
    assert fn is not None
    src = emit_program(fn, TARGET)
    assert "get_enqueued_local_size" not in src and "get_local_size(0)" in src
    assert "get_enqueued_local_size" in emit_program(fn, target_of("opencl-c-2.0"))


def test_device_variant_takes_a_target_name(cl_device: Any) -> None:
    dev = get_device(cl_device)
    v = dev.variant(target="opencl-c-1.2")
    assert v.target is not None and v.target.version == (1, 2)
    assert v.target.info == dev.target.info  # the device's limits stay

    @clpy.kernel
    def sizes(x: clpy.Global[clpy.int32]):
        x[clpy.get_global_id(0)] = clpy.get_max_sub_group_size()

    x = np.zeros(16, np.int32)
    sizes[16, 8](x, device=v)  # built with -cl-std=CL1.2
    np.testing.assert_array_equal(x, 8)
    with pytest.raises(ValueError, match="unknown target 'opencl-c-9'"):
        dev.variant(target="opencl-c-9")
