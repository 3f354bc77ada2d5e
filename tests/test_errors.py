"""Malformed kernels: each raises a ``clpy.CompileError`` subclass whose message names the
absolute file:line:col, shows the source line and a caret, and says what is wrong.

Every case is a kernel defined in this file; ``marker`` is a piece of the offending line (the
expected line number is found from it), ``fragment`` a piece of the expected message.
"""

from __future__ import annotations

import math
import os
import re
from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Constant, Global, Local, float32, int32
from clpy.errors import (
    CompileError,
    ConstantError,
    FeatureError,
    KernelTypeError,
    RecursionNotAllowedError,
    UndefinedNameError,
)

# ruff: noqa: F821, F841, B007, B018, E731, C416, UP034, RUF015
from tests import errors_syntax  # noqa: F401  (registers the syntax cases)
from tests.errors_corpus import CASES, Bad, bad, expected_line, source_file

# ----------------------------------------------------------------------------- names


@bad(UndefinedNameError, "undefined_thing", "name 'undefined_thing' is not defined")
@clpy.kernel
def undefined_name(x: Global[float32]):
    x[0] = undefined_thing


@bad(UndefinedNameError, "x[0] = later", "'later' is used before it is assigned")
@clpy.kernel
def use_before_assignment(x: Global[float32]):
    x[0] = later
    later = 1.0


@bad(UndefinedNameError, "math.no_such_fn", "has no attribute 'no_such_fn'")
@clpy.kernel
def missing_module_attribute(x: Global[float32]):
    x[0] = math.no_such_fn(1.0)


# ----------------------------------------------------------------------------- types


@bad(KernelTypeError, "x + 1.5", "operator + does not apply to __global float* and float")
@clpy.kernel
def pointer_plus_float(x: Global[float32]):
    p = x + 1.5


@bad(KernelTypeError, "v.z", "component .z is out of range for float2")
@clpy.kernel
def swizzle_out_of_range(x: Global[float32], v: clpy.float2):
    x[0] = v.z


@bad(KernelTypeError, "c[0] = ", "Constant memory is read-only")
@clpy.kernel
def write_constant(c: Constant[float32]):
    c[0] = 1.0


@bad(KernelTypeError, "v.xx = ", "repeats a component")
@clpy.kernel
def repeated_swizzle_store(x: Global[clpy.float4]):
    v = x[0]
    v.xx = clpy.float2(1.0, 2.0)


@bad(KernelTypeError, "clpy.sin(1.0, 2.0)", "valid signatures:")
@clpy.kernel
def builtin_wrong_arity(x: Global[float32]):
    x[0] = clpy.sin(1.0, 2.0)


@bad(KernelTypeError, "clpy.sqrt(x)", "no signature of sqrt takes (__global float*)")
@clpy.kernel
def builtin_wrong_type(x: Global[float32]):
    x[0] = clpy.sqrt(x)


@bad(KernelTypeError, "a + b", "needs vectors of the same type, got float4 and int4")
@clpy.kernel
def vector_type_mismatch(x: Global[clpy.float4], a: clpy.float4, b: clpy.int4):
    x[0] = a + b


@bad(KernelTypeError, "v: clpy.float4 = ", "use convert_float4(...)")
@clpy.kernel
def vector_assign_mismatch(x: Global[clpy.float4], a: clpy.int4):
    v: clpy.float4 = a
    x[0] = v


@bad(KernelTypeError, "clpy.float4(a, a)", "use convert_float2(...)")
@clpy.kernel
def vector_ctor_mixed_elements(x: Global[clpy.float4], a: clpy.int2):
    x[0] = clpy.float4(a, a)


@bad(KernelTypeError, "clpy.float4(1.0, 2.0, 3.0)", "needs 4 components in all, got 3")
@clpy.kernel
def vector_ctor_count(x: Global[clpy.float4]):
    x[0] = clpy.float4(1.0, 2.0, 3.0)


@bad(KernelTypeError, "a * 1.5", "cannot mix int4 with floating float")
@clpy.kernel
def int_vector_times_float(x: Global[clpy.int4], a: clpy.int4):
    x[0] = a * 1.5


@bad(KernelTypeError, "if v:", "a condition must be a scalar, got float4")
@clpy.kernel
def vector_condition(x: Global[float32], v: clpy.float4):
    if v:
        x[0] = 1.0


@bad(KernelTypeError, "x[1.5]", "index must be an integer, got float")
@clpy.kernel
def float_index(x: Global[float32]):
    x[0] = x[1.5]


@bad(KernelTypeError, "a[4] = ", "index 4 is out of bounds for an array of 4")
@clpy.kernel
def array_out_of_bounds(x: Global[float32]):
    a = clpy.private_array(float32, 4)
    a[4] = 1.0


@bad(KernelTypeError, "x[0] & 1", "needs integer operands, got float")
@clpy.kernel
def bitand_on_float(x: Global[float32]):
    x[0] = x[0] & 1


@bad(KernelTypeError, "return 1.0", "a kernel cannot return a value")
@clpy.kernel
def kernel_returns_value(x: Global[float32]):
    return 1.0


@bad(KernelTypeError, "n = 3", "constexpr parameter 'n' cannot be assigned", n=4)
@clpy.kernel
def assign_constexpr(x: Global[float32], n: clpy.constexpr):
    n = 3
    x[0] = n


@bad(KernelTypeError, "flag: bool", "bool kernel parameters are not allowed")
@clpy.kernel
def bool_parameter(x: Global[float32], flag: bool):
    x[0] = 1.0


@bad(KernelTypeError, "p: clpy.Private", "must be Global, Constant or Local")
@clpy.kernel
def private_pointer_parameter(p: clpy.Private[float32]):
    p[0] = 1.0


@bad(KernelTypeError, "s.foo", "has no attribute 'foo'")
@clpy.kernel
def scalar_attribute(x: Global[float32], s: float32):
    x[0] = s.foo


@bad(KernelTypeError, "Pt(1.0)", "Pt(...) takes 2 fields (x, y), got 1")
@clpy.kernel
def struct_ctor_count(x: Global[float32]):
    p = Pt(1.0)


@bad(KernelTypeError, "p.z", "struct Pt has no field 'z'")
@clpy.kernel
def struct_missing_field(x: Global[float32], p: Pt):  # type: ignore[valid-type]
    x[0] = p.z


@bad(KernelTypeError, "b = a", "arrays cannot be copied")
@clpy.kernel
def array_copy(x: Global[float32]):
    a = clpy.private_array(float32, 4)
    b = a


@bad(KernelTypeError, "y = clpy.barrier()", "returns nothing")
@clpy.kernel
def void_value(x: Global[float32]):
    y = clpy.barrier()


@bad(KernelTypeError, "k ** 20", "constant exponent from 0 to 16")
@clpy.kernel
def int_pow_too_large(x: Global[int32], k: int32):
    x[0] = k ** 20


@bad(KernelTypeError, "x < 1", "cannot compare __global float* with int")
@clpy.kernel
def pointer_vs_int(x: Global[float32]):
    if x < 1:
        x[0] = 1.0


@bad(KernelTypeError, "s(1.0)", "a value of type float is not callable")
@clpy.kernel
def call_a_value(x: Global[float32], s: float32):
    x[0] = s(1.0)


@bad(KernelTypeError, "range(1.5)", "range() arguments must be integers, got float")
@clpy.kernel
def float_range(x: Global[float32]):
    for k in range(1.5):
        x[0] = 1.0


@bad(KernelTypeError, "range(0, 4, 0)", "step must not be zero")
@clpy.kernel
def zero_step(x: Global[float32]):
    for k in range(0, 4, 0):
        x[0] = 1.0


@bad(KernelTypeError, "v: float32 = 2.0", "already declared")
@clpy.kernel
def annotate_twice(x: Global[float32]):
    v = 1.0
    v: float32 = 2.0


@bad(KernelTypeError, "v.hi", "of the 3-component float3 would read its undefined")
@clpy.kernel
def hi_of_three(x: Global[clpy.float2], v: clpy.float3):
    x[0] = v.hi


@bad(KernelTypeError, "return", "returns a value elsewhere", where=None)
@clpy.kernel
def calls_mixed_return(x: Global[float32]):
    x[0] = mixed_return(1.0)


@bad(KernelTypeError, "n // 0", "integer division by zero")
@clpy.kernel
def int_division_by_zero(x: Global[int32], n: int32):
    x[0] = n // 0


@bad(KernelTypeError, "local_array(3, 2)", "'3' is not a clpy type")
@clpy.kernel
def array_of_non_type(x: Global[float32]):
    a = clpy.local_array(3, 2)


@bad(KernelTypeError, "v: 5 = ", "'5' is not a clpy type")
@clpy.kernel
def bad_local_annotation(x: Global[float32]):
    v: 5 = 1.0


# ----------------------------------------------------------------------------- constants


@bad(ConstantError, "private_array(float32, ())", "at least one dimension")
@clpy.kernel
def zero_dimensional_array(x: Global[float32]):
    a = clpy.private_array(float32, ())



@bad(ConstantError, "local_array(float32, n)", "must be a compile-time integer constant")
@clpy.kernel
def dynamic_local_size(x: Global[float32], n: int32):
    buf = clpy.local_array(float32, n)


@bad(ConstantError, "clpy.barrier(flags)", "argument 1 of barrier must be a compile-time")
@clpy.kernel
def dynamic_barrier_flags(x: Global[float32], flags: clpy.uint):
    clpy.barrier(flags)


@bad(ConstantError, "private_array(float32, 0)", "array sizes must be positive")
@clpy.kernel
def zero_array(x: Global[float32]):
    a = clpy.private_array(float32, 0)


# ----------------------------------------------------------------------------- recursion


@clpy.func
def fact(n: int32) -> int32:
    return 1 if n <= 1 else n * fact(n - 1)


@clpy.func
def ping(n: int32) -> int32:
    return 0 if n <= 0 else pong(n - 1)


@clpy.func
def pong(n: int32) -> int32:
    return ping(n - 1)


@clpy.func
def mixed_return(v: float32) -> float32:
    if v > 0.0:
        return v
    return


@bad(RecursionNotAllowedError, "fact(n - 1)", "recursive call fact → fact", where=fact)
@clpy.kernel
def direct_recursion(x: Global[int32]):
    x[0] = fact(5)


@bad(RecursionNotAllowedError, "ping(n - 1)", "recursive call ping → pong → ping", where=pong)
@clpy.kernel
def mutual_recursion(x: Global[int32]):
    x[0] = ping(5)


# ----------------------------------------------------------------------------- targets


@bad(FeatureError, "h = x[0]", "target opencl-c-1.2 lacks half precision", target="opencl-c-1.2")
@clpy.kernel
def half_on_12(x: Global[clpy.half]):
    h = x[0]
    x[0] = h * h


@bad(FeatureError, "p: clpy.Ptr", "__opencl_c_generic_address_space",
     target="opencl-c-3.0", where=None)
@clpy.kernel
def generic_on_30(x: Global[float32]):
    x[0] = generic_store(x, 1.0)


@clpy.func
def generic_store(p: clpy.Ptr[float32], v: float32) -> float32:
    p[0] = v
    return v


@clpy.struct
class Pt:
    x: float32
    y: float32


CASES["mixed_return"] = Bad(calls_mixed_return, KernelTypeError, "    return\n",
                            "this function returns float: return a value", where=mixed_return)
del CASES["calls_mixed_return"]
CASES["generic_on_30"].where = generic_store


def _emit(b: Bad) -> str:
    spec = b.kernel.specialize(**b.specialize)
    return spec.source_for(b.target)  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", sorted(CASES))
def test_malformed_kernel(name: str) -> None:
    b = CASES[name]
    with pytest.raises(CompileError) as info:
        _emit(b)
    err = info.value
    assert type(err) is b.exc, f"{name}: {type(err).__name__}: {err}"
    where = b.where or b.kernel
    line = expected_line(where, b.marker)
    assert err.loc is not None and err.loc.line == line, f"{name}: {err}"
    text = str(err)
    assert b.fragment in text, f"{name}: {text}"
    if name == "builtin_wrong_arity":  # the signature list follows the caret
        assert text.split("\n")[3] == "  sin(float) -> float", text
    head, src, caret = text.split("\n")[:3]
    assert err.message.split("\n")[0] in head
    path = source_file(where)
    assert re.search(rf"{re.escape(os.path.basename(path))}:{line}:\d+: ", head), text
    assert src.strip() and src.strip() in open(path).read(), text
    assert set(caret.strip()) == {"^"}, text
    col = caret.index("^") - 4
    assert err.loc.col == col


def test_at_least_forty_cases() -> None:
    assert len(CASES) >= 40


def test_error_is_raised_again_not_cached() -> None:
    """A failed specialization is not cached as a success: asking again raises again."""
    for _ in range(2):
        with pytest.raises(UndefinedNameError):
            _emit(CASES["undefined_name"])


def test_unannotated_parameter_needs_a_type() -> None:
    @clpy.kernel
    def k(x):
        x[0] = 1.0

    with pytest.raises(TypeError, match="parameter 'x' has no annotation"):
        k.source  # noqa: B018


def test_numpy_scalar_constant_of_unsupported_dtype() -> None:
    c = np.complex64(1)

    @clpy.kernel
    def k(x: Global[float32]):
        x[0] = c

    with pytest.raises(KernelTypeError, match="complex64"):
        k.source  # noqa: B018


def test_local_array_in_loop() -> None:
    @clpy.kernel
    def k(x: Global[float32]):
        for i in range(2):
            buf = clpy.local_array(float32, 4)

    with pytest.raises(KernelTypeError, match="outside loops"):
        k.source  # noqa: B018


def test_local_pointer_kernel_param_ok() -> None:
    @clpy.kernel
    def k(x: Global[float32], scratch: Local[float32]):
        scratch[0] = x[0]

    assert "__local float* scratch" in k.source


@pytest.mark.parametrize(("ann", "fragment"), [
    ("None", "void is not a parameter type"),
    ("Global[Global[float32]]", "pointers to pointers"),
    ("[1, 2]", "is not a clpy type annotation"),
    ("clpy.size_t", "size_t kernel parameters are not allowed"),
])
def test_bad_parameter_types(tmp_path: Any, ann: str, fragment: str) -> None:
    import importlib.util

    path = tmp_path / "badparam.py"
    path.write_text("import clpy\nfrom clpy import Global, float32\n\n\n@clpy.kernel\n"
                    f"def k(x: Global[float32], p: {ann}):\n    x[0] = 1.0\n")
    spec = importlib.util.spec_from_file_location("badparam", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.raises(KernelTypeError, match=re.escape(fragment)) as info:
        mod.k.source  # noqa: B018
    assert info.value.loc is not None and info.value.loc.line == 6
    assert "badparam.py:6:" in str(info.value)


def test_a_kernel_named_like_a_built_in_is_a_compile_error_at_its_def() -> None:
    """OpenCL compilers refuse such a kernel (PoCL: INVALID_KERNEL_NAME at clCreateKernel);
    device functions are renamed instead (``dot`` → ``dot_``), kernels keep the name C hosts
    call."""

    @clpy.kernel
    def step(x: clpy.Global[clpy.float32]):
        x[clpy.get_global_id(0)] = 1.0

    with pytest.raises(clpy.KernelTypeError, match="kernel name 'step' is an OpenCL built-in") as e:
        step.source
    assert "test_errors.py" in str(e.value) and "def step(" in str(e.value)
