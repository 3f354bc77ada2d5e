"""A whole OpenCL C program for one kernel specialization: pragmas, structs, helpers, device
functions in dependency order, then the kernel."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from clpy.builtins.registry import REGISTRY
from clpy.builtins.samplers import SamplerSpec
from clpy.emit import program_vars
from clpy.emit.blocks import forward_declarations
from clpy.emit.c_exprs import ExprEmitter, type_name
from clpy.emit.c_stmts import StmtEmitter, declaration
from clpy.emit.helpers import helper_source
from clpy.emit.lowering import call_hook_for, needs_lowering_call
from clpy.emit.names import RESERVED, Namer
from clpy.emit.targets import Target, target_of
from clpy.emit.writer import Writer
from clpy.errors import FeatureError
from clpy.ir.nodes import CallBuiltin, CallFunc, Expr, Function, NamedConst, Var
from clpy.ir.walk import all_types, scalar_elems, walk
from clpy.types import catalog as C
from clpy.types.core import AddressSpace, PointerType, Type, VectorType
from clpy.types.images import ImageType
from clpy.types.pipes import PipeType, reserve_id_t
from clpy.types.structs import StructType


def ordered_functions(kernel: Function, *more: Function) -> list[Function]:
    """Device functions before their callers, the kernel(s) last (each after its callees).
    One specialization appears once even when it was built twice (see ``_same_as``)."""
    out: list[Function] = []

    def visit(f: Function) -> None:
        if f in out or _same_as(f, out) is not None:
            return
        for c in f.callees:
            visit(c)
        out.append(f)

    for k in (kernel, *more):
        visit(k)
    return out


def _spec_key(f: Function) -> tuple[Any, ...]:
    return (
        f.is_kernel,
        f.name,
        f.source_file,
        f.loc,
        tuple(p.type for p in f.params),
        f.ret,
        f.noalias,
    )


def _same_as(f: Function, fns: list[Function]) -> Function | None:
    """The function of ``fns`` that is the same specialization as ``f``: the same Python
    function for the same parameter types. A kernel named both on its own and as the child of
    a device-side enqueue (``clpy emit`` of a module) is built once per compile session, so
    two IR objects stand for one C function, which is emitted once."""
    key = _spec_key(f)
    return next((g for g in fns if _spec_key(g) == key), None)


def _reachable(kernels: Sequence[Function]) -> list[Function]:
    seen: list[Function] = []
    todo = list(kernels)
    while todo:
        f = todo.pop()
        if f not in seen:
            seen.append(f)
            todo.extend(f.callees)
    return seen


def required_features(fns: list[Function]) -> dict[str, Any]:
    """Optional features the program uses → the first place that uses each (for errors)."""
    need: dict[str, Any] = {}
    for fn in fns:
        for p in fn.params:  # a parameter's type is the clearest place to point at
            _type_features(p.type, p.loc, need)
        for n in walk(fn.body):
            if isinstance(n, Expr):
                _type_features(n.type, n.loc, need)
                _image_features(n, need)
                if isinstance(n, CallBuiltin) and n.builtin.lowering is None:
                    for feat in n.builtin.features:
                        need.setdefault(feat, n.loc)
        program_vars.require(program_vars.collect([fn]), need)
        for p in fn.params:
            _type_features(p.type, p.loc, need)
            if isinstance(p.type, PointerType) and p.type.space is AddressSpace.GENERIC:
                need.setdefault("__opencl_c_generic_address_space", p.loc)
    return need


def _image_features(n: Any, need: dict[str, Any]) -> None:
    """Writes to 3-D images need ``__opencl_c_3d_image_writes`` (an extension before 2.0)."""
    if isinstance(n, CallBuiltin) and n.builtin.family == "images" and n.args:
        t = n.args[0].type
        if n.builtin.name.startswith("write_image") and isinstance(t, ImageType):
            if t.kind.dims == 3:
                need.setdefault("__opencl_c_3d_image_writes", n.loc)


def _samplers(fns: list[Function]) -> list[SamplerSpec]:
    """The constant samplers the program uses (declared once each at program scope)."""
    out: list[SamplerSpec] = []
    for fn in fns:
        for n in walk(fn.body):
            if isinstance(n, NamedConst) and n.type is C.sampler_t:
                spec = SamplerSpec.from_bits(n.value)
                if spec not in out:
                    out.append(spec)
    return out


def _type_features(t: Type, loc: Any, need: dict[str, Any]) -> None:
    if isinstance(t, ImageType):  # images: core before 3.0, the device answers formats
        need.setdefault("__opencl_c_images", loc)
        if t.access == "read_write":
            need.setdefault("__opencl_c_read_write_images", loc)
        return
    if isinstance(t, PipeType) or t is reserve_id_t:
        need.setdefault("__opencl_c_pipes", loc)
        t = t.elem if isinstance(t, PipeType) else C.int_
    if isinstance(t, PointerType):
        # Pointers to half/double only move data (vload_half ...): no arithmetic extension.
        if t.space is AddressSpace.GENERIC:
            need.setdefault("__opencl_c_generic_address_space", loc)
        if any(e is C.double for e in scalar_elems(t.elem)):
            need.setdefault("cl_khr_fp64", loc)
        return
    for e in scalar_elems(t):
        if e is C.double:
            need.setdefault("cl_khr_fp64", loc)
        elif e is C.half:
            need.setdefault("cl_khr_fp16", loc)


_PRAGMA_EXTENSIONS = (
    "cl_khr_fp64",
    "cl_khr_fp16",
    "cl_khr_int64_base_atomics",
    "cl_khr_int64_extended_atomics",
    "cl_khr_subgroups",
    "cl_khr_3d_image_writes",
)


def emit_program(
    kernel: Function | Sequence[Function],
    target: Any = "opencl-c-2.0",
    line_directives: bool = True,
    line_file: Callable[[str], str] | None = None,
) -> str:
    """The program for one kernel, or for several sharing structs, helpers and device
    functions (``clpy emit``). ``line_file`` renames the file ``#line`` directives name."""
    kernels = (kernel,) if isinstance(kernel, Function) else tuple(kernel)
    kernel = kernels[0]
    tgt = target_of(target)
    fns = ordered_functions(*kernels)
    need = required_features(fns)
    pvars = program_vars.collect(fns)
    program_vars.check(pvars, tgt)  # errors naming the variable
    _check_target(need, tgt)
    if "__opencl_c_3d_image_writes" in need and tgt.version < (2, 0):
        need.setdefault("cl_khr_3d_image_writes", need["__opencl_c_3d_image_writes"])
    if tgt.has("cl_khr_subgroups") and _native_use(fns, tgt, "__opencl_c_subgroups"):
        need.setdefault("cl_khr_subgroups", kernel.loc)  # 2.0 devices: the extension pragma
    helpers: set[tuple[str, Type]] = set()
    fn_names = function_names(fns)
    for f in _reachable(kernels):  # a duplicate dropped above is called by the kept one's name
        if f not in fn_names:
            same = _same_as(f, fns)
            if same is not None:
                fn_names[f] = fn_names[same]
    taken = _called_names(fns) | frozenset(fn_names.values())
    pv_names = program_vars.c_names(pvars, taken)
    taken |= frozenset(pv_names.values())
    bodies = Writer(line_directives, line_file=line_file)
    for fn in fns:
        names = Namer(taken)
        for pv in pvars:
            names.fix(pv, pv_names[pv.key])
        hook = _lowering_hook(tgt, fn)
        ex = ExprEmitter(names, helpers, hook)
        ex.fn_names = fn_names
        start = len(bodies.lines)
        StmtEmitter(fn, bodies, ex, vector_printf=not tgt.info.get("no_vector_printf")).function()
        hook.finish(bodies, start)  # declares __local scratch for lowered collectives
        bodies.raw("")
    out = Writer(line_directives)
    src = os.path.basename(kernel.source_file)
    knames = ", ".join(k.name for k in kernels)
    out.raw(f"// Generated by clpy from {src} ({knames}) for {tgt.name}.")
    # clpy owns contraction (DESIGN.md "Semantics"): `a*b + c` is two roundings unless the
    # kernel asked for fp_contract, and then the IR already holds explicit fma calls.
    out.raw("#pragma OPENCL FP_CONTRACT OFF")
    for ext in _PRAGMA_EXTENSIONS:
        if ext in need:
            out.raw(f"#pragma OPENCL EXTENSION {ext} : enable")
    structs: list[StructType] = []
    for fn in fns:
        for st in fn.structs:
            if isinstance(st, StructType) and st not in structs:
                structs.append(st)
    out.raw("")
    for st in structs:
        out.raw("typedef struct {")
        for fname, ft in st.fields:
            out.raw(f"    {declaration(ft, fname)};")
        out.raw(f"}} {st.name};")
        out.raw("")
    samplers = _samplers(fns)
    for smp in samplers:
        out.raw(f"__constant sampler_t {smp.c_name} = {smp.flags_text};")
    if samplers:
        out.raw("")
    for line in program_vars.declarations(pvars, pv_names):
        out.raw(line)
    if pvars:
        out.raw("")
    protos = forward_declarations(fns, lambda f, p: _param_text(f, p, taken), fn_names)
    for line in protos:  # kernels that blocks call before their definition
        out.raw(line)
    if protos:
        out.raw("")
    for kind, t in sorted(helpers, key=lambda h: (h[0], h[1].cl_name)):
        out.raw(helper_source(kind, t))
        out.raw("")
    return out.text() + bodies.text().rstrip("\n") + "\n"


def _native_use(fns: list[Function], tgt: Target, feature: str) -> bool:
    """Some call of a built-in needing ``feature`` is emitted natively (not lowered)."""
    return any(
        isinstance(n, CallBuiltin)
        and feature in n.builtin.features
        and not needs_lowering_call(n, tgt)
        for fn in fns
        for n in walk(fn.body)
    )


def _check_target(need: dict[str, Any], tgt: Target) -> None:
    for feat, loc in need.items():
        if feat == "cl_khr_fp16" and tgt.has("__opencl_c_fp16"):
            continue
        if feat == "cl_khr_fp64" and tgt.has("__opencl_c_fp64"):
            continue
        if feat == "__opencl_c_images" and tgt.version < (3, 0):
            continue  # core before OpenCL C 3.0; a device without images has no formats
        if feat == "__opencl_c_3d_image_writes" and tgt.version < (2, 0):
            if tgt.has("cl_khr_3d_image_writes"):
                continue
        if not tgt.has(feat):
            what = {
                "cl_khr_fp64": "double precision (cl_khr_fp64)",
                "cl_khr_fp16": "half precision arithmetic (cl_khr_fp16)",
                "__opencl_c_device_enqueue": "device-side enqueue (__opencl_c_device_enqueue)",
                "__opencl_c_generic_address_space": (
                    "the generic address space (__opencl_c_generic_address_space)"
                ),
            }.get(feat, feat)
            raise FeatureError(f"target {tgt} lacks {what}, which this kernel uses", loc)


def function_names(fns: list[Function]) -> dict[Function, str]:
    """C names for the program's functions. The kernel keeps its name; a device function
    keeps the user's name unless it clashes with an OpenCL built-in, a C keyword or another
    function (``dot`` → ``dot_``). Specializations of one ``@clpy.func`` are told apart by
    their parameter types (``square_float``, ``square_int``)."""
    used: set[str] = set()
    out: dict[Function, str] = {}
    for f in reversed([f for f in fns if f.is_kernel]):  # the launched kernel(s) come last
        name = f.name
        if name in used:  # a child of device-side enqueue, specialized for other types
            name = "_".join([f.name, *(_type_tag(p.type) for p in f.params)])
            while name in used or name in REGISTRY:
                name += "_"
        used.add(name)
        out[f] = name
    by_name: dict[str, list[Function]] = {}
    for f in fns:
        if not f.is_kernel:
            by_name.setdefault(f.name, []).append(f)
    for base, group in by_name.items():
        for f in group:
            name = base
            if len(group) > 1:
                name = "_".join([base, *(_type_tag(p.type) for p in f.params)])
            while name in RESERVED or name in REGISTRY or name in used or name.startswith("clpy_"):
                name += "_"
            used.add(name)
            out[f] = name
    return out


def _type_tag(t: Type) -> str:
    if isinstance(t, PointerType):
        return f"{t.space.title.lower()}_{_type_tag(t.elem)}p"
    return t.cl_name.replace(" ", "_").replace("*", "p")


def _called_names(fns: list[Function]) -> frozenset[str]:
    names: set[str] = set()
    for fn in fns:
        names.add(fn.name)
        for n in walk(fn.body):
            if isinstance(n, CallBuiltin):
                names.add(n.builtin.spell(n.overload))
            elif isinstance(n, CallFunc):
                names.add(n.func.name)
    return frozenset(names)


def _param_text(fn: Function, p: Var, taken: frozenset[str]) -> str:
    """A parameter as the function's definition declares it (for a prototype)."""
    return StmtEmitter(fn, Writer(False), ExprEmitter(Namer(taken), set())).param(p)


def _lowering_hook(tgt: Target, fn: Function) -> Any:
    """Per-target lowering of built-in calls (collectives, atomics) plugs in here."""
    return call_hook_for(tgt, fn)


__all__ = ["emit_program", "ordered_functions", "type_name", "VectorType", "all_types"]
