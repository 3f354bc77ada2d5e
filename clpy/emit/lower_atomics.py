"""Emission of atomic built-ins for a target (clpy/builtins/atomics.py).

OpenCL C 2.0+ targets get the C11 forms natively (pointers cast to ``volatile atomic_T*`` when
the pointee is a plain type); OpenCL C 1.2 targets get 1.x built-ins: ``atomic_*`` for 32-bit,
``atom_*`` for 64-bit (with the cl_khr_int64 pragmas), volatile loads/stores for
``atomic_load``/``atomic_init``, ``atomic_xchg`` for stores, a helper for
``compare_exchange_strong/weak``, and ``typedef``s so ``atomic_int`` parameters still compile.
Floating-point add (no built-in in OpenCL C 1.2/2.0) is a compare-exchange loop on the bits.
"""

from __future__ import annotations

from clpy.builtins.atomics import value_type
from clpy.emit.c_exprs import ExprEmitter
from clpy.emit.targets import Target
from clpy.ir.nodes import CallBuiltin
from clpy.types import catalog as C
from clpy.types.atomics import AtomicType
from clpy.types.core import AddressSpace, ArrayType, PointerType, ScalarType, Type

_SPACE_KEY = {
    AddressSpace.GLOBAL: "global",
    AddressSpace.LOCAL: "local",
    AddressSpace.GENERIC: "generic",
    AddressSpace.PRIVATE: "private",
}
_SPACE_TEXT = {"global": "__global ", "local": "__local ", "generic": "", "private": ""}
_INT64_PRAGMAS = (
    "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n"
    "#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable"
)


def _bits_type(v: ScalarType) -> str:
    return "ulong" if v.bits == 64 else "uint"


def lower_atomic(ex: ExprEmitter, call: CallBuiltin, tgt: Target) -> str:
    spec = call.builtin.atomic
    assert spec is not None
    args = call.args
    if spec.op == "fence":
        if tgt.version >= (2, 0):
            return f"atomic_work_item_fence({', '.join(ex(a) for a in args)})"
        return f"mem_fence({ex(args[0])})"
    pt = call.overload.params[0]
    if isinstance(pt, ArrayType):  # a 1-D clpy.local_array
        pt = PointerType(pt.elem, pt.space)
    assert isinstance(pt, PointerType)
    v = value_type(pt)
    assert v is not None
    if spec.op.startswith("flag"):
        v = C.int_
    nfixed = 1 + spec.nvals + (len(call.overload.params) - 1 - spec.nvals if spec.explicit else 0)
    indexed = not spec.explicit and len(call.overload.params) == nfixed + 1
    # ``p + i`` with C precedence: the index is parenthesised unless it binds tighter than +
    ptr = f"{ex.sub(args[0], 12)} + {ex.sub(args[1], 13)}" if indexed else ex(args[0])
    rest = list(args[2 if indexed else 1 :])
    vals = [ex(a) for a in rest[: spec.nvals]]
    extra = [ex(a) for a in rest[spec.nvals :]]
    space = _SPACE_KEY[pt.space]
    sp = _SPACE_TEXT[space]
    is64 = v.bits == 64
    if is64:
        ex.helpers.add(("lower:0pragma:int64", C.void))
    if isinstance(pt.elem, AtomicType) and tgt.version < (2, 0):
        ex.helpers.add(("lower:0typedef:", pt.elem))
    plain = f"(volatile {sp}{v.name}*)({ptr})"
    bits = f"(volatile {sp}{_bits_type(v)}*)({ptr})"
    pre = "atom" if is64 else "atomic"
    op = spec.op

    def helper(mode: str, t: Type = v, key: str = space) -> str:
        ex.helpers.add((f"lower:{mode}:{key}", t))
        return f"clpy_{mode}_{key}_{t.cl_name}"

    if spec.c11 and tgt.version >= (2, 0) and not (op == "add" and v.is_float):
        elem = pt.elem
        want = "atomic_flag" if op.startswith("flag") else f"atomic_{v.name}"
        aptr = (
            ptr
            if isinstance(elem, AtomicType) and elem.cl_name == want and not indexed
            else f"(volatile {sp}{want}*)({ptr})"
        )
        return f"{call.builtin.name}({', '.join([aptr, *vals, *extra])})"
    if op == "add" and v.is_float:
        return f"{helper('atomic_addf')}({plain}, {vals[0]})"
    if op == "cmpxchg":
        if v.is_float:
            return f"{helper('atomic_cmpxchgf')}({plain}, {vals[0]}, {vals[1]})"
        return f"{pre}_cmpxchg({plain}, {vals[0]}, {vals[1]})"
    if op in ("cas_strong", "cas_weak"):
        et = call.overload.params[(2 if indexed else 1)]
        assert isinstance(et, (PointerType, ArrayType))
        name = helper("atomic_cas", v, f"{space}_{_SPACE_KEY[et.space]}")
        return f"{name}({plain}, {vals[0]}, {vals[1]})"
    if op == "init":
        return f"(*{plain} = {vals[0]})"
    if op == "load":
        return f"(*{plain})"
    if op in ("store", "xchg"):
        if v.is_float and is64:
            r = f"as_double(atom_xchg({bits}, as_ulong({vals[0]})))"
        else:
            r = f"{pre}_xchg({plain}, {vals[0]})"
        return f"(void){r}" if op == "store" else r
    if op == "flag_set":
        return f"(atomic_xchg({bits}, 1u) != 0u)"
    if op == "flag_clear":
        return f"(void)atomic_xchg({bits}, 0u)"
    return f"{pre}_{op}({', '.join([plain, *vals])})"


def atomic_helper_source(mode: str, key: str, t: Type) -> str:
    """Helpers registered by ``lower_atomic`` (kinds ``lower:<mode>:<key>``)."""
    if mode == "0pragma":
        return _INT64_PRAGMAS
    if mode == "0typedef":
        assert isinstance(t, AtomicType)
        fp64 = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" if t.value is C.double else ""
        return f"{fp64}typedef {t.value.name} {t.cl_name};"
    assert isinstance(t, ScalarType)
    tn = t.name
    ut = _bits_type(t)
    cas = "atom_cmpxchg" if t.bits == 64 else "atomic_cmpxchg"
    name = f"clpy_{mode}_{key}_{tn}"
    if mode in ("atomic_addf", "atomic_cmpxchgf"):
        sp = _SPACE_TEXT[key]
        bp = f"(volatile {sp}{ut}*)p"
        if mode == "atomic_cmpxchgf":
            return (
                f"{tn} {name}(volatile {sp}{tn}* p, {tn} cmp, {tn} val) {{\n"
                f"    return as_{tn}({cas}({bp}, as_{ut}(cmp), as_{ut}(val)));\n}}"
            )
        return (
            f"{tn} {name}(volatile {sp}{tn}* p, {tn} v) {{\n"
            f"    {tn} old = *p;\n"
            "    for (;;) {  // compare-exchange loop on the bits\n"
            f"        const {ut} seen = {cas}({bp}, as_{ut}(old), as_{ut}(old + v));\n"
            f"        if (seen == as_{ut}(old))\n"
            "            return old;\n"
            f"        old = as_{tn}(seen);\n"
            "    }\n}"
        )
    if mode == "atomic_cas":
        space, espace = key.split("_", 1)
        sp, esp = _SPACE_TEXT[space], _SPACE_TEXT[espace]
        if espace == "private":
            esp = "__private "
        if t.is_float:
            swap = f"as_{tn}({cas}((volatile {sp}{ut}*)p, as_{ut}(*e), as_{ut}(d)))"
            same = f"as_{ut}(old) == as_{ut}(*e)"
        else:
            swap = f"{cas}(p, *e, d)"
            same = "old == *e"
        return (
            f"bool {name}(volatile {sp}{tn}* p, {esp}{tn}* e, {tn} d) {{\n"
            f"    const {tn} old = {swap};\n"
            f"    const bool ok = {same};\n"
            "    *e = old;\n"
            "    return ok;\n}"
        )
    raise ValueError(f"unknown atomic helper {mode!r}")
