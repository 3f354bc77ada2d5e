"""The built-in registry: every entry is complete, and overload resolution picks what the spec
says for a sample of built-ins from each family (OpenCL C 2.0 §1.2.3, §1.2.4, §1.13)."""

from __future__ import annotations

from typing import Any

import pytest

import clpy
from clpy.builtins.conversions import missing_conversion_hint
from clpy.builtins.registry import REGISTRY, ArgInfo, Builtin, NoMatch, Overload
from clpy.types import catalog as C
from clpy.types.core import AddressSpace, ArrayType, PointerType, Type, VectorType

V = VectorType
FAMILIES = {"math", "integer", "common", "integer/common", "geometric", "relational",
            "conversions", "vload/vstore", "misc-vector", "address-space", "work-item",
            "synchronization"}


def resolve(name: str, *types: Type, weak: tuple[int, ...] = ()) -> Overload:
    return REGISTRY[name].resolve([ArgInfo(t, i in weak) for i, t in enumerate(types)])


def ret(name: str, *types: Type, weak: tuple[int, ...] = ()) -> Type:
    return resolve(name, *types, weak=weak).ret


# ----------------------------------------------------------------------------- completeness


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_entry_is_complete(name: str) -> None:
    b = REGISTRY[name]
    assert isinstance(b, Builtin) and b.name == name
    assert b.overloads or b.rule is not None, "no signatures and no type rule"
    assert b.cl_name, "no OpenCL spelling"
    assert b.doc and len(b.doc.strip()) >= 5, "docstring missing"
    assert b.__doc__ == b.doc
    assert b.family
    for ov in b.overloads:
        assert all(isinstance(p, Type) for p in ov.params) and isinstance(ov.ret, Type)
        assert b.spell(ov)
    if not b.overloads:
        assert b.signature, ("a built-in with a type rule and no overloads gives its "
                             "signature as text in Builtin.signature")
    assert getattr(clpy, name) is b


def test_every_family_is_present() -> None:
    assert FAMILIES <= {b.family for b in REGISTRY.values()}


# The spec's lists (§1.13.3 to §1.13.12) for the families declared by this module set.
SPEC_NAMES = """
abs abs_diff add_sat hadd rhadd clamp clz ctz mad_hi mad_sat max min mul_hi rotate sub_sat
upsample popcount mad24 mul24 degrees mix radians step smoothstep sign cross dot distance length
normalize fast_distance fast_length fast_normalize isequal isnotequal isgreater isgreaterequal
isless islessequal islessgreater isfinite isinf isnan isnormal isordered isunordered signbit any
all bitselect select vload2 vload3 vload4 vload8 vload16 vstore2 vstore3 vstore4 vstore8 vstore16
vload_half vload_half2 vload_half16 vloada_half3 vloada_half16 vstore_half vstore_half_rte
vstore_half_rtz vstore_half_rtp vstore_half_rtn vstore_half4 vstore_half4_rtn vstorea_half3_rtp
vstorea_half16 shuffle shuffle2 vec_step to_global to_local to_private get_fence fabs
""".split()


def test_spec_names_declared() -> None:
    assert [n for n in SPEC_NAMES if n not in REGISTRY] == []


def test_conversion_names() -> None:
    conv = [n for n, b in REGISTRY.items() if b.family == "conversions"]
    # 8 integer types x 6 widths x 10 forms + 3 float types x 6 widths x 5 forms + 66 as_T.
    assert len(conv) == 8 * 6 * 10 + 3 * 6 * 5 + 66
    for n in ("convert_char16_sat_rtn", "convert_ulong3_rtp", "convert_double2",
              "convert_float4_rte", "as_half2", "as_ulong16", "as_char3"):
        assert n in REGISTRY
    for n in ("convert_float_sat", "convert_double4_sat_rte", "convert_half_sat", "as_bool",
              "convert_bool", "convert_int5"):
        assert n not in REGISTRY
    assert "integer" in (missing_conversion_hint("convert_float_sat") or "")
    assert missing_conversion_hint("sin") is None


# ----------------------------------------------------------------------------- resolution


def test_integer_resolution() -> None:
    assert ret("abs", C.int_) is C.uint
    assert ret("abs", V(C.char, 4)) is V(C.uchar, 4)
    assert ret("abs_diff", C.long, C.long) is C.ulong
    assert ret("clz", C.int_, weak=(0,)) is C.int_  # a bare literal is int, not char
    assert ret("popcount", V(C.ushort, 8)) is V(C.ushort, 8)
    assert ret("upsample", C.char, C.uchar) is C.short
    assert ret("upsample", V(C.uint, 2), V(C.uint, 2)) is V(C.ulong, 2)
    assert ret("upsample", C.int_, C.uint) is C.long
    assert ret("mad24", C.uint, C.uint, C.uint) is C.uint
    with pytest.raises(NoMatch):
        resolve("mul24", C.long, C.long)  # 32-bit only (table 11)
    with pytest.raises(NoMatch):
        resolve("upsample", V(C.int_, 4), V(C.int_, 4))  # lo must be unsigned
    with pytest.raises(NoMatch):
        resolve("popcount", C.float_)
    lowering = REGISTRY["ctz"].lowering
    assert lowering is not None and lowering.min_version == (2, 0)


def test_min_max_clamp_cover_int_and_float() -> None:
    assert ret("min", C.int_, C.int_) is C.int_
    assert ret("min", C.float_, C.float_) is C.float_
    assert ret("max", V(C.float_, 4), C.float_) is V(C.float_, 4)
    assert ret("max", V(C.uchar, 16), C.uchar) is V(C.uchar, 16)
    assert ret("clamp", V(C.double, 3), C.double, C.double) is V(C.double, 3)
    assert ret("clamp", V(C.float_, 4), C.float_, C.float_, weak=(1, 2)) is V(C.float_, 4)
    assert ret("clamp", V(C.int_, 2), C.int_, C.int_, weak=(1, 2)) is V(C.int_, 2)
    assert ret("min", C.int_, C.int_, weak=(0, 1)) is C.int_
    assert REGISTRY["min"].family == "integer/common"
    with pytest.raises(NoMatch):
        resolve("max", V(C.float_, 4), V(C.float_, 2))


def test_common_resolution() -> None:
    assert ret("mix", V(C.float_, 4), V(C.float_, 4), C.float_) is V(C.float_, 4)
    assert ret("step", C.float_, V(C.float_, 8)) is V(C.float_, 8)
    assert ret("smoothstep", C.double, C.double, V(C.double, 2)) is V(C.double, 2)
    assert ret("sign", C.half) is C.half
    with pytest.raises(NoMatch):
        resolve("degrees", V(C.int_, 4))


def test_geometric_resolution() -> None:
    assert ret("dot", V(C.float_, 4), V(C.float_, 4)) is C.float_
    assert ret("dot", C.double, C.double) is C.double
    assert ret("length", V(C.double, 3)) is C.double
    assert ret("cross", V(C.float_, 3), V(C.float_, 3)) is V(C.float_, 3)
    assert ret("normalize", V(C.float_, 2)) is V(C.float_, 2)
    assert ret("fast_length", V(C.float_, 4)) is C.float_
    for bad in (("dot", V(C.float_, 8), V(C.float_, 8)), ("cross", V(C.float_, 2),
                                                          V(C.float_, 2)),
                ("fast_length", V(C.double, 2)), ("length", V(C.int_, 4))):
        with pytest.raises(NoMatch):
            resolve(bad[0], *bad[1:])


def test_relational_resolution() -> None:
    assert ret("isnan", V(C.float_, 4)) is V(C.int_, 4)
    assert ret("isnan", C.float_) is C.int_
    assert ret("isnan", C.double) is C.int_
    assert ret("isinf", V(C.double, 2)) is V(C.long, 2)
    assert ret("signbit", V(C.half, 8)) is V(C.short, 8)
    assert ret("isless", V(C.float_, 3), V(C.float_, 3)) is V(C.int_, 3)
    assert ret("any", V(C.int_, 4)) is C.int_
    assert ret("all", V(C.char, 16)) is C.int_
    assert ret("bitselect", V(C.uint, 4), V(C.uint, 4), V(C.uint, 4)) is V(C.uint, 4)
    assert ret("select", V(C.float_, 4), V(C.float_, 4), V(C.int_, 4)) is V(C.float_, 4)
    assert ret("select", V(C.float_, 4), V(C.float_, 4), V(C.uint, 4)) is V(C.float_, 4)
    assert ret("select", V(C.double, 2), V(C.double, 2), V(C.ulong, 2)) is V(C.double, 2)
    assert ret("select", C.float_, C.float_, C.bool_) is C.float_
    with pytest.raises(NoMatch):
        resolve("any", V(C.uint, 4))  # igentype only
    with pytest.raises(NoMatch):
        resolve("select", V(C.float_, 4), V(C.float_, 4), V(C.short, 4))  # element size
    with pytest.raises(NoMatch):
        resolve("select", V(C.float_, 4), V(C.float_, 4), V(C.int_, 2))  # lane count
    with pytest.raises(NoMatch):
        resolve("isnan", V(C.int_, 4))


def test_conversion_resolution() -> None:
    assert ret("convert_int4_sat_rte", V(C.float_, 4)) is V(C.int_, 4)
    assert ret("convert_float", C.int_) is C.float_
    assert ret("convert_uchar8_sat", V(C.double, 8)) is V(C.uchar, 8)
    assert ret("convert_float3", V(C.long, 3)) is V(C.float_, 3)
    ov = resolve("convert_int", C.bool_)
    assert ov.params == (C.int_,) and ov.ret is C.int_
    assert resolve("convert_float", C.size_t).params == (C.size_t,)  # no implicit change
    with pytest.raises(NoMatch, match="4 component"):
        resolve("convert_int4", V(C.float_, 3))
    with pytest.raises(NoMatch, match="one argument"):
        resolve("convert_int", C.int_, C.int_)
    conv = REGISTRY["convert_short2_sat_rtp"].conversion
    assert conv is not None and conv.sat
    assert conv.rounding == "rtp"
    conv = REGISTRY["convert_float"].conversion
    assert conv is not None and conv.rounding is None


def test_as_type_resolution() -> None:
    assert ret("as_uint", C.float_) is C.uint
    assert ret("as_float", C.uint) is C.float_
    assert ret("as_int4", V(C.float_, 4)) is V(C.int_, 4)
    assert ret("as_short2", C.int_) is V(C.short, 2)  # same size, lanes differ: legal
    assert ret("as_float3", V(C.int_, 4)) is V(C.float_, 3)  # 3-vectors have 4-vector size
    assert ret("as_int4", V(C.float_, 3)) is V(C.int_, 4)
    assert ret("as_double", C.long) is C.double
    with pytest.raises(NoMatch, match="4 bytes.*double has 8"):
        resolve("as_int", C.double)
    with pytest.raises(NoMatch):
        resolve("as_double4", V(C.float_, 4))  # the spec's own error example
    with pytest.raises(NoMatch, match="bool"):
        resolve("as_uchar", C.bool_)


def _p(elem: Type, space: AddressSpace) -> PointerType:
    return PointerType(elem, space)


def test_vload_vstore_resolution() -> None:
    g, loc, cst, gen = (AddressSpace.GLOBAL, AddressSpace.LOCAL, AddressSpace.CONSTANT,
                        AddressSpace.GENERIC)
    assert ret("vload4", C.size_t, _p(C.float_, g)) is V(C.float_, 4)
    assert ret("vload3", C.int_, _p(C.uchar, cst)) is V(C.uchar, 3)
    assert ret("vload16", C.size_t, _p(C.long, gen)) is V(C.long, 16)
    assert ret("vload_half", C.size_t, _p(C.half, loc)) is C.float_
    assert ret("vloada_half3", C.size_t, _p(C.half, g)) is V(C.float_, 3)
    assert ret("vstore2", V(C.int_, 2), C.size_t, _p(C.int_, loc)) is C.void
    assert ret("vstore_half_rtz", C.float_, C.size_t, _p(C.half, g)) is C.void
    assert ret("vstore_half4_rtn", V(C.double, 4), C.size_t, _p(C.half, g)) is C.void
    assert resolve("vload4", C.size_t, _p(C.float_, g)).params[1].space is g  # exact space
    arr = ArrayType(C.float_, (8,), AddressSpace.PRIVATE)
    assert resolve("vload4", C.size_t, arr).params[1] is arr  # arrays decay
    assert 2 in REGISTRY["vstore4"].writes_args and not REGISTRY["vload4"].writes_args
    with pytest.raises(NoMatch, match="Constant"):
        resolve("vstore4", V(C.float_, 4), C.size_t, _p(C.float_, cst))  # constant: loads
    with pytest.raises(NoMatch):
        resolve("vstore4", V(C.float_, 4), C.size_t, _p(C.int_, g))  # element mismatch
    with pytest.raises(NoMatch):
        resolve("vload_half", C.size_t, _p(C.float_, g))


def test_vector_misc_resolution() -> None:
    assert ret("shuffle", V(C.float_, 4), V(C.uint, 4)) is V(C.float_, 4)
    assert ret("shuffle", V(C.float_, 8), V(C.uint, 2)) is V(C.float_, 2)
    assert ret("shuffle", V(C.short, 16), V(C.ushort, 8)) is V(C.short, 8)
    assert ret("shuffle2", V(C.double, 2), V(C.double, 2), V(C.ulong, 4)) is V(C.double, 4)
    for mask, why in ((V(C.int_, 4), "unsigned"), (V(C.ushort, 4), "element size"),
                      (V(C.uint, 3), "2/4/8/16"), (C.uint, "vector")):
        with pytest.raises(NoMatch, match="mask"):
            resolve("shuffle", V(C.float_, 4), mask)
        assert why
    with pytest.raises(NoMatch):
        resolve("shuffle", V(C.float_, 3), V(C.uint, 4))  # 3-vectors are not shuffle inputs
    with pytest.raises(NoMatch, match="same type"):
        resolve("shuffle2", V(C.float_, 4), V(C.float_, 8), V(C.uint, 4))
    assert ret("vec_step", V(C.float_, 3)) is C.int_
    assert ret("vec_step", C.double) is C.int_


def test_address_space_resolution() -> None:
    gen = PointerType(C.float_, AddressSpace.GENERIC)
    assert ret("to_global", gen) is PointerType(C.float_, AddressSpace.GLOBAL)
    assert ret("to_local", PointerType(C.int_, AddressSpace.LOCAL)) is PointerType(
        C.int_, AddressSpace.LOCAL)
    assert ret("to_private", PointerType(C.int_, AddressSpace.GLOBAL, True)) is PointerType(
        C.int_, AddressSpace.PRIVATE, True)
    assert ret("get_fence", gen) is C.uint
    assert REGISTRY["to_global"].features == {"__opencl_c_generic_address_space"}
    with pytest.raises(NoMatch, match="Constant"):
        resolve("to_global", PointerType(C.int_, AddressSpace.CONSTANT))
    with pytest.raises(NoMatch, match="pointer"):
        resolve("get_fence", C.int_)


# ----------------------------------------------------------------------------- in kernels


def _errors(fn: Any) -> str:
    with pytest.raises(clpy.CompileError) as info:
        clpy.kernel(fn).source_for("opencl-c-2.0")
    return str(info.value)


def k_as_int_double(x: clpy.Global[clpy.double]):
    x[0] = clpy.as_int(x[0])


def k_shuffle_bad_mask(x: clpy.Global[clpy.float4]):
    x[0] = clpy.shuffle(x[0], clpy.int4(0, 1, 2, 3))


def k_convert_float_sat(x: clpy.Global[clpy.float32]):
    x[0] = clpy.convert_float_sat(x[0])


def k_convert_lanes(x: clpy.Global[clpy.float4], y: clpy.Global[clpy.int32]):
    y[0] = clpy.convert_int(x[0])


def test_kernel_errors_name_the_line() -> None:
    msg = _errors(k_as_int_double)
    assert "test_registry.py" in msg and "as_int reinterprets 4 bytes" in msg
    msg = _errors(k_shuffle_bad_mask)
    assert "mask must be a uint2/4/8/16 vector" in msg
    msg = _errors(k_convert_float_sat)
    assert "convert_float_sat" in msg
    msg = _errors(k_convert_lanes)
    assert "convert_int converts a value with 1 component" in msg


def k_aliases(x: clpy.Global[clpy.float32], i: clpy.Global[clpy.int32]):
    a = i[0]
    x[0] = abs(x[1]) + min(x[2], x[3]) + max(x[4], x[5], x[6])
    i[1] = abs(a) + min(a, 2) + max(a, i[2], 7)


def test_python_aliases_in_kernels() -> None:
    src = clpy.kernel(k_aliases).source_for("opencl-c-2.0", line_directives=False)
    assert "fabs(x[1]) + min(x[2], x[3]) + max(max(x[4], x[5]), x[6])" in src
    assert "(int)abs(a) + min(a, 2) + max(max(a, i[2]), 7)" in src


def k_families(x: clpy.Global[clpy.float32], h: clpy.Global[clpy.half],
               n: clpy.Global[clpy.int32]):
    v = clpy.vload4(0, x)
    clpy.vstore_half4_rte(v, 1, h)
    n[0] = clpy.vec_step(v.xyz) + clpy.convert_int_sat_rtn(clpy.dot(v, v))
    n[1] = clpy.any(clpy.isnan(v)) + clpy.ctz(n[2])
    f = clpy.get_fence(h)
    n[3] = clpy.as_int(x[0]) + clpy.int32(f)


def test_emitted_spellings() -> None:
    k = clpy.kernel(k_families)
    src = k.source_for("opencl-c-2.0", line_directives=False)
    for text in ("vload4(0, x)", "vstore_half4_rte(v, 1, h)",
                 "n[0] = 4 + convert_int_sat_rtn(dot(v, v))",  # vec_step folds, like sizeof
                 "any(isnan(v))", "ctz(n[2])",
                 "get_fence(h)", "as_int(x[0])", "__global half* h"):
        assert text in src
    assert "cl_khr_fp16" not in src  # pointers to half only move data
    src12 = k.source_for("opencl-c-1.2", line_directives=False)
    assert "get_fence" not in src12 and "CLK_GLOBAL_MEM_FENCE" in src12
    assert "popcount(~as_uint(n[2]) & (as_uint(n[2]) - (uint)1))" in src12
