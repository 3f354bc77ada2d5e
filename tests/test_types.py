"""clpy types: interning, annotations, and @clpy.struct layouts checked against the OpenCL C
alignment rules (spec §1.1.5) and against the device compiler's sizeof/offsetof."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, float32, int32
from clpy.emit.c_stmts import declaration
from clpy.types import catalog as C
from clpy.types.annotations import resolve_annotation
from clpy.types.core import AddressSpace, ArrayType, PointerType, VectorType
from clpy.types.structs import StructType


def test_types_are_interned() -> None:
    assert VectorType(C.float_, 4) is clpy.float4
    assert PointerType(C.float_, AddressSpace.GLOBAL) is Global[float32]
    assert Global[np.float32] is Global[clpy.float32]
    assert clpy.float32 is C.float_ and clpy.int8 is C.char and clpy.float64 is C.double


@pytest.mark.parametrize(("ann", "expected"), [
    (int, C.int_), (float, C.float_), (bool, C.bool_), (np.float32, C.float_),
    (np.dtype("int16"), C.short), ("float4", clpy.float4), ("uint", C.uint),
    (np.uint64, C.ulong),
])
def test_resolve_annotation(ann: Any, expected: Any) -> None:
    assert resolve_annotation(ann) is expected


def test_bad_annotations() -> None:
    with pytest.raises(TypeError, match="not a clpy type annotation"):
        resolve_annotation(list)
    with pytest.raises(TypeError, match="void"):
        Global[None]


@pytest.mark.parametrize("t", [C.char, C.short, C.int_, C.long, C.half, C.float_, C.double])
def test_scalar_and_vector_sizes(t: Any) -> None:
    assert t.size == t.dtype.itemsize
    for n in (2, 3, 4, 8, 16):
        v = VectorType(t, n)
        lanes = 4 if n == 3 else n
        assert v.size == v.align == t.size * lanes  # §1.1.5: 3-vectors are 4-aligned
        assert v.dtype.itemsize == v.size


@clpy.struct
class Mixed:
    c: clpy.char
    d: clpy.double
    s: clpy.short


@clpy.struct
class Vec3Pad:
    v: clpy.float3
    tag: clpy.uchar


@clpy.struct
class Nested:
    a: clpy.uchar
    m: Mixed
    b: clpy.ushort
    v: Vec3Pad


@clpy.struct
class WithArray:
    n: int32
    vals: clpy.types.core.ArrayType(C.float_, (3,), AddressSpace.PRIVATE)  # type: ignore
    h: clpy.half


STRUCTS = [Mixed, Vec3Pad, Nested, WithArray]


def test_layout_follows_alignment_rules() -> None:
    assert Mixed.offsets == (0, 8, 16) and Mixed.size == 24 and Mixed.align == 8
    assert Vec3Pad.offsets == (0, 16) and Vec3Pad.size == 32 and Vec3Pad.align == 16
    assert Nested.offsets == (0, 8, 32, 48) and Nested.size == 80 and Nested.align == 16
    assert WithArray.offsets == (0, 4, 16) and WithArray.size == 20
    for st in STRUCTS:
        dt = st.dtype
        assert dt.itemsize == st.size
        assert [dt.fields[n][1] for n, _ in st.fields] == list(st.offsets)


def test_struct_host_values() -> None:
    v = Mixed(1, 2.5, 3)
    assert v["c"] == 1 and v["d"] == 2.5 and v["s"] == 3
    with pytest.raises(TypeError, match="missing field"):
        Mixed(1)
    with pytest.raises(TypeError, match="no field 'zz'"):
        Mixed(1, 2.0, 3, zz=1)


def test_struct_declaration_errors() -> None:
    with pytest.raises(TypeError, match="declares no annotated fields"):
        @clpy.struct
        class Empty:
            pass

    with pytest.raises(TypeError, match="cannot be a struct field"):
        @clpy.struct
        class HasPointer:
            p: Global[float32]  # type: ignore[valid-type]


def _typedefs(structs: list[StructType]) -> str:
    out = []
    for st in structs:
        out.append("typedef struct {")
        out += [f"    {declaration(t, n)};" for n, t in st.fields]
        out.append(f"}} {st.name};")
    return "\n".join(out)


def test_layout_matches_the_device_compiler(cl_context: Any, cl_queue: Any) -> None:
    """sizeof and offsetof on the device equal StructType.size and .offsets."""
    import pyopencl as cl

    pragma = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    lines = []
    k = 0
    expected: list[int] = []
    for st in STRUCTS:
        lines.append(f"    out[{k}] = sizeof({st.name});")
        expected.append(st.size)
        k += 1
        for (n, _), off in zip(st.fields, st.offsets):
            lines.append(f"    out[{k}] = __builtin_offsetof({st.name}, {n});")
            expected.append(off)
            k += 1
    src = (pragma + _typedefs(STRUCTS) + "\n__kernel void layout(__global ulong* out) {\n"
           + "\n".join(lines) + "\n}\n")
    prg = cl.Program(cl_context, src).build(options=["-cl-std=CL2.0"])
    out = np.zeros(k, np.uint64)
    buf = cl.Buffer(cl_context, cl.mem_flags.WRITE_ONLY, out.nbytes)
    prg.layout(cl_queue, (1,), None, buf)
    cl.enqueue_copy(cl_queue, out, buf)
    assert out.tolist() == expected


def test_array_type() -> None:
    a = ArrayType(C.float_, (4, 8), AddressSpace.LOCAL)
    assert a.count == 32 and a.size == 128 and a.align == 4
    assert a is ArrayType(C.float_, (4, 8), AddressSpace.LOCAL)
