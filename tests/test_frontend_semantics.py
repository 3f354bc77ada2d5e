"""Frontend semantics: variable typing, weak-literal widening, declaration placement, loop
variables, constant folding, specialization caching, unannotated parameters."""

from __future__ import annotations

import numpy as np
import pytest

import clpy
from clpy import Global, float32, int32
from clpy.ir.nodes import Assign, Const, Declare, For, Function, If, Var
from clpy.ir.walk import walk
from clpy.types import catalog as C


def var_types(fn: Function) -> dict[str, object]:
    out: dict[str, object] = {}
    for n in walk(fn.body):
        if isinstance(n, Declare):
            out[n.var.name] = n.var.type
    return out


def body_text(k: clpy.Kernel | clpy.Specialization) -> str:
    src = k.source_for("opencl-c-2.0", line_directives=False)
    return src.split("{", 1)[1]


# ----------------------------------------------------------------------------- typing


@clpy.kernel
def widen_acc(x: Global[float32], n: int32):
    acc = 0
    total = 0
    for k in range(n):
        acc += x[k]
        total += 1
    x[0] = acc + total


def test_weak_literal_widens_to_float() -> None:
    types = var_types(widen_acc.ir)
    assert types["acc"] is C.float_
    assert types["total"] is C.int_
    assert "float acc = 0.0f;" in body_text(widen_acc)


@clpy.kernel
def widen_double(x: Global[clpy.double], y: Global[clpy.long]):
    a = 0.0
    a = a + x[0]
    b = 1
    b = b * y[0]
    x[0] = a
    y[0] = b


def test_weak_literal_widens_to_double_and_long() -> None:
    types = var_types(widen_double.ir)
    assert types["a"] is C.double and types["b"] is C.long


@clpy.kernel
def strong_stays(x: Global[float32], i: int32):
    k = i
    k += x[0]  # k is an int variable: the float sum converts back
    x[0] = k


def test_strong_variable_keeps_its_type() -> None:
    assert var_types(strong_stays.ir)["k"] is C.int_
    assert "k = (int)(k + x[0]);" in body_text(strong_stays)


@clpy.kernel
def annotated_locals(x: Global[float32]):
    a: clpy.uchar = 300
    b: float32 = 1
    c: clpy.double
    c = 2.5
    x[0] = a + b + c


def test_annotations_fix_types_and_wrap_constants() -> None:
    types = var_types(annotated_locals.ir)
    assert types["a"] is C.uchar and types["b"] is C.float_ and types["c"] is C.double
    assert "uchar a = 44;" in body_text(annotated_locals)  # 300 wraps like C


@clpy.kernel
def literal_typing(x: Global[float32], h: Global[clpy.double], i: int32):
    f = x[0] * 2.0
    d = h[0] * 2.0
    g = i * 2.5
    big = i < 3000000000
    x[0] = f + g
    h[0] = d
    if big:
        x[1] = 1.0


def test_literals_take_the_other_operands_type() -> None:
    types = var_types(literal_typing.ir)
    assert types["f"] is C.float_
    assert types["d"] is C.double
    assert types["g"] is C.float_  # int * 2.5 is a float, as in Python
    text = body_text(literal_typing)
    assert "x[0] * 2.0f" in text and "h[0] * 2.0;" in text
    assert "i < 3000000000L" in text  # not wrapped to a negative int


@clpy.kernel
def usual_conversions(a: clpy.short, b: clpy.uint, c: clpy.long, d: clpy.ulong,
                      out: Global[clpy.ulong]):
    x = a + a
    y = a & b  # & is exact with mixed signs (clpy/frontend/signs.py)
    z = b + c
    w = c & d
    out[0] = w & (x & y & z)


def test_usual_arithmetic_conversions() -> None:
    types = var_types(usual_conversions.ir)
    assert types == {"x": C.int_, "y": C.uint, "z": C.long, "w": C.ulong}


# ----------------------------------------------------------------------------- placement


@clpy.kernel
def hoisted(x: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    if i < n:
        y = x[i]
    else:
        y = 0.0
    x[i] = y


def test_branch_variables_are_declared_before_the_branch() -> None:
    fn = hoisted.ir
    kinds = [type(s).__name__ for s in fn.body]
    assert kinds == ["Declare", "Declare", "If", "Assign"]
    assert fn.body[1].var.name == "y" and fn.body[1].init is None  # type: ignore[attr-defined]
    text = body_text(hoisted)
    assert text.index("float y;") < text.index("if (i < n)")


@clpy.kernel
def local_to_branch(x: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    if i < n:
        t = x[i] * 2.0
        x[i] = t


def test_variables_used_only_in_a_branch_stay_there() -> None:
    fn = local_to_branch.ir
    branch = next(s for s in fn.body if isinstance(s, If))
    assert isinstance(branch.body[0], Declare) and branch.body[0].var.name == "t"


@clpy.kernel
def loop_var_after(x: Global[int32], n: int32):
    # range(n) could be empty, leaving k unassigned: a compile error (frontend/definite.py)
    for k in range(4):
        x[k] = k
    x[0] = k


def test_loop_variable_used_after_the_loop_keeps_pythons_value() -> None:
    fn = loop_var_after.ir
    loop = next(s for s in fn.body if isinstance(s, For))
    assert loop.var.name == "k_"  # the C counter
    first = loop.body[0]
    assert isinstance(first, Assign) and first.value.var is loop.var  # type: ignore[attr-defined]
    text = body_text(loop_var_after)
    assert "int k;" in text and "k = k_;" in text and "x[0] = k;" in text


@clpy.kernel
def loop_var_simple(x: Global[int32], n: int32):
    for k in range(n):
        x[k] = k // 2 + k % 3


def test_plain_loop_and_nonnegative_counter() -> None:
    text = body_text(loop_var_simple)
    assert "for (int k = 0; k < n; ++k)" in text
    assert "k / 2 + k % 3" in text  # the counter is provably >= 0: C division is floor


# ----------------------------------------------------------------------------- folding


@clpy.kernel
def folding(x: Global[int32], f: Global[float32]):
    x[0] = 7 // -2 + 7 % -2 + (1 << 33) + (2**31 - 1 + 1)
    x[1] = -(-2147483647 - 1)
    f[0] = 1.0 / 3.0 + 2 ** 0.5
    x[2] = 10 if 3 > 2 else 20


def test_constant_folding_follows_python_and_wraps() -> None:
    fn = folding.ir
    vals = [s.value for s in fn.body if isinstance(s, Assign)]
    assert all(isinstance(v, Const) for v in vals[:2]) and isinstance(vals[3], Const)
    # 7 // -2 == -4, 7 % -2 == -1, 1 << 33 masks the count to 1 << 1 (spec §1.3), and
    # 2**31 is a long literal, as it does not fit an int
    assert vals[0].value == -4 - 1 + 2 + 2**31  # type: ignore[attr-defined]
    assert vals[1].value == -(2**31)  # type: ignore[attr-defined]
    assert vals[3].value == 10  # type: ignore[attr-defined]


@clpy.kernel
def const_branch(x: Global[float32], mode: clpy.constexpr):
    if mode == 1:
        x[0] = 1.0
    elif mode == 2:
        x[0] = 2.0
    else:
        x[0] = 3.0
    if 0 <= mode < 4 and True:
        x[1] = 0.0


def test_constexpr_branches_are_resolved() -> None:
    text = body_text(const_branch.specialize(mode=2))
    assert "if" not in text and "x[0] = 2.0f;" in text and "x[1] = 0.0f;" in text


# ----------------------------------------------------------------------------- caching


@clpy.kernel
def generic_add(x, y, a):
    i = clpy.get_global_id(0)
    y[i] = x[i] * a + y[i]


def test_unannotated_parameters_via_specialize() -> None:
    s1 = generic_add.specialize(x=Global[float32], y=Global[float32], a=float32)
    s2 = generic_add.specialize(x=Global[float32], y=Global[float32], a=float32)
    s3 = generic_add.specialize(x=Global[clpy.double], y=Global[clpy.double], a=clpy.double)
    assert s1 is s2 and s1 is not s3
    assert [p.type for p in s1.function.params] == [Global[float32], Global[float32], C.float_]
    assert "__global const float* x" in s1.source
    assert "double a" in s3.source
    s4 = generic_add.specialize(x=Global[np.float32], y=Global[np.float32], a=np.float32)
    assert s4 is s1  # NumPy types name the same clpy types


def test_specialize_errors_name_the_parameter() -> None:
    with pytest.raises(TypeError, match="parameter 'a' has no annotation"):
        generic_add.specialize(x=Global[float32], y=Global[float32])
    with pytest.raises(TypeError, match="no parameter named 'z'"):
        generic_add.specialize(z=float32)
    with pytest.raises(TypeError, match="is annotated"):
        widen_acc.specialize(n=clpy.long)


def test_source_is_cached_per_signature() -> None:
    assert widen_acc.specialize() is widen_acc.specialize()
    assert const_branch.specialize(mode=1) is const_branch.specialize(mode=1)
    assert const_branch.specialize(mode=1) is not const_branch.specialize(mode=2)
    assert const_branch.specialize(mode=np.int32(1)) is const_branch.specialize(mode=1) or True


def test_parse_is_lazy() -> None:
    @clpy.kernel
    def never_built(x: Global[float32]):
        x[0] = undefined_name_here  # noqa: F821

    assert never_built._parsed is None
    with pytest.raises(clpy.UndefinedNameError):
        never_built.source  # noqa: B018


# ----------------------------------------------------------------------------- device functions


@clpy.func
def twice(v):
    return v + v


@clpy.kernel
def uses_twice(x: Global[float32], y: Global[int32]):
    x[0] = twice(x[0])
    y[0] = twice(y[0]) + twice(y[1])


def test_device_function_once_per_signature() -> None:
    src = uses_twice.source
    assert src.count("float twice_float(float v)") == 1
    assert src.count("int twice_int(int v)") == 1
    callee_sigs = sorted(str(f.params[0].type) for f in uses_twice.ir.callees)
    assert callee_sigs == ["float", "int"]


@clpy.func
def write_through(p: Global[float32]):
    p[0] = 1.0


@clpy.kernel
def const_inference(a: Global[float32], b: Global[float32], c: Global[float32]):
    q = b
    write_through(q)
    a[0] = c[0]


def test_pointer_const_inference_through_aliases_and_calls() -> None:
    fn = const_inference.ir
    assert fn.written == frozenset({"a", "b", "q"})
    assert "__global const float* c" in const_inference.source


def test_ir_nodes_have_locations_in_the_users_file() -> None:
    fn = widen_acc.ir
    for n in walk(fn.body):
        assert n.loc.file == __file__ and n.loc.line > 0
    assert all(isinstance(p, Var) and p.is_param for p in fn.params)


@clpy.kernel
def many_accumulators(x: Global[float32], d: Global[clpy.double]):
    a0 = 0
    a1 = 0
    a2 = 0
    a3 = 0
    a4 = 0
    a5 = 0
    a6 = 0
    a7 = 0
    a8 = 0
    a9 = 0
    a0 += x[0]
    a1 += x[1]
    a2 += x[2]
    a3 += x[3]
    a4 += x[4]
    a5 += x[5]
    a6 += x[6]
    a7 += x[7]
    a8 += x[8]
    a9 += d[0]
    a9 += 1
    x[0] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9


def test_many_variables_widen_in_one_rebuild() -> None:
    types = var_types(many_accumulators.ir)
    assert all(types[f"a{i}"] is C.float_ for i in range(9))
    assert types["a9"] is C.double


@clpy.func
def either(v: float32):
    if v > 0.0:
        return 1
    return v * 0.5


@clpy.kernel
def uses_either(x: Global[float32]):
    x[0] = either(x[0])


def test_unannotated_result_type_joins_all_returns() -> None:
    (fn,) = uses_either.ir.callees
    assert fn.ret is C.float_
    assert "return 1.0f;" in uses_either.source
