"""Program-scope data (clpy/program_scope.py, spec §6.5 of OpenCL C 2.0): module-level NumPy
arrays and tuples as ``__constant`` tables (a FIR filter), ``clpy.constant_array``,
``clpy.global_var`` persistence across launches, a changed table re-specializing the kernel,
one declaration per program, exact C literals, and the errors naming the variable; on the
simulator and an OpenCL device (PoCL; CLPY_TEST_PLATFORM picks another) against NumPy."""

from __future__ import annotations

import dataclasses
import re
import runpy
from pathlib import Path

import numpy as np
import pytest

import clpy
from clpy import Global, float32, int32
from clpy.emit.program import emit_program
from clpy.emit.program_vars import FEATURE
from clpy.emit.targets import target_of
from clpy.runtime.devices import Device

# ----------------------------------------------------------------------------- tables

FIR = np.array([0.1, -0.25, 0.5, -0.25, 0.1], np.float32)  # read by fir below
TAPS = (1, 4, 6, 4, 1)
PAIRS = clpy.constant_array([[1, 2], [3, 4], [5, 6]], clpy.int2)
EXACT = np.array([0.1, 1 / 3, 1e-38, 3.4e38, -0.0, 2**-149, 16777217.0], np.float32)
INTS = np.array([-(2**31), 2**31 - 1, 0, -1], np.int32)
LONGS = np.array([-(2**63), 2**63 - 1], np.int64)


@clpy.kernel
def fir(x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    acc = float32(0)
    for k in range(len(FIR)):
        acc += FIR[k] * x[i + k]
    y[i] = acc


@clpy.func
def binomial(k: int32) -> int32:
    return TAPS[k]


@clpy.kernel
def smooth(x: Global[int32], y: Global[int32]):
    i = clpy.get_global_id(0)
    acc = 0
    for k in range(5):
        acc += binomial(k) * x[i + k]
    y[i] = acc + TAPS[0] - TAPS[4]  # the kernel and its function share one TAPS


@clpy.kernel
def pairs(y: Global[int32]):
    i = clpy.get_global_id(0)
    p = PAIRS[i]
    y[i] = p.x * 10 + p.y


@clpy.kernel
def exact(y: Global[float32], z: Global[int32], w: Global[clpy.int64]):
    i = clpy.get_global_id(0)
    y[i] = EXACT[i]
    if i < 4:
        z[i] = INTS[i]
    if i < 2:
        w[i] = LONGS[i]


def test_fir_filter_from_a_module_array(dev: Device) -> None:
    x = np.random.default_rng(3).random(64 + 4).astype(np.float32)
    y = np.zeros(64, np.float32)
    fir[(64,), (16,)](x, y, device=dev)
    ref = sum(np.float64(FIR[k]) * x[k : k + 64] for k in range(5))
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-6)
    assert "for (int k = 0; k < 5; ++k)" in fir.source_for("opencl-c-2.0")


def test_tuple_table_shared_by_kernel_and_function(dev: Device) -> None:
    x = np.arange(36, dtype=np.int32)
    y = np.zeros(32, np.int32)
    smooth[(32,), (8,)](x, y, device=dev)
    ref = sum(TAPS[k] * x[k : k + 32] for k in range(5))
    np.testing.assert_array_equal(y, ref)
    src = smooth.source_for("opencl-c-2.0")
    assert src.count("__constant int TAPS[5] = {1, 4, 6, 4, 1};") == 1


def test_vector_constant_array(dev: Device) -> None:
    y = np.zeros(3, np.int32)
    pairs[(3,), (3,)](y, device=dev)
    np.testing.assert_array_equal(y, [12, 34, 56])
    assert "__constant int2 PAIRS[3] = {(int2)(1, 2), (int2)(3, 4), (int2)(5, 6)};" in (
        pairs.source_for("opencl-c-1.2")
    )


def test_literals_are_exact(dev: Device) -> None:
    y = np.zeros(7, np.float32)
    z = np.zeros(4, np.int32)
    w = np.zeros(2, np.int64)
    exact[(7,), (7,)](y, z, w, device=dev)
    assert y.tobytes() == EXACT.tobytes()  # bit for bit, -0.0 and the denormal included
    np.testing.assert_array_equal(z, INTS)
    np.testing.assert_array_equal(w, LONGS)
    src = exact.source_for("opencl-c-2.0")
    assert "(-2147483647 - 1)" in src and "(-9223372036854775807L - 1)" in src


# ----------------------------------------------------------------------------- capture


TABLE = np.array([1, 2, 3, 4], np.int32)


@clpy.kernel
def lookup(y: Global[int32]):
    i = clpy.get_global_id(0)
    y[i] = TABLE[i]


def test_a_changed_table_is_seen_at_the_next_launch(dev: Device) -> None:
    global TABLE
    saved = TABLE
    try:
        y = np.zeros(4, np.int32)
        lookup[(4,), (4,)](y, device=dev)
        np.testing.assert_array_equal(y, [1, 2, 3, 4])
        TABLE[0] = 10  # in place
        lookup[(4,), (4,)](y, device=dev)
        np.testing.assert_array_equal(y, [10, 2, 3, 4])
        TABLE = np.array([5, 6, 7, 8], np.int32)  # rebound, same dtype and shape
        lookup[(4,), (4,)](y, device=dev)
        np.testing.assert_array_equal(y, [5, 6, 7, 8])
        TABLE = np.array([9, 8, 7, 6, 5], np.int32)  # another shape: the kernel follows
        lookup[(4,), (4,)](y, device=dev)
        np.testing.assert_array_equal(y, [9, 8, 7, 6])
    finally:
        TABLE = saved
        TABLE[0] = 1
        lookup.clear_cache()


FTABLE = np.array([1, 2], np.int32)


@clpy.func
def from_ftable(i: int32) -> int32:
    return FTABLE[i]


@clpy.kernel
def lookup_in_func(y: Global[int32]):
    i = clpy.get_global_id(0)
    y[i] = from_ftable(i)


def test_a_table_of_another_shape_in_a_compiled_function_is_an_error() -> None:
    global FTABLE
    saved = FTABLE
    y = np.zeros(2, np.int32)
    try:
        lookup_in_func[(2,), (2,)](y, device="sim")
        FTABLE = np.array([1.0, 2.0], np.float32)
        with pytest.raises(TypeError, match="array 'FTABLE'.*make a new kernel"):
            lookup_in_func[(2,), (2,)](y, device="sim")
    finally:
        FTABLE = saved
        lookup_in_func.clear_cache()


FROZEN_SRC = np.array([1.5, 2.5], np.float32)
FROZEN = clpy.constant_array(FROZEN_SRC)


@clpy.kernel
def frozen(y: Global[float32]):
    i = clpy.get_global_id(0)
    y[i] = FROZEN[i]


def test_constant_array_copies_its_values_once() -> None:
    FROZEN_SRC[0] = 100
    y = np.zeros(2, np.float32)
    frozen[(2,), (2,)](y, device="sim")
    np.testing.assert_array_equal(y, [1.5, 2.5])


# ----------------------------------------------------------------------------- globals


HITS = clpy.global_var(clpy.int32, 0)
SUMS = clpy.global_var(clpy.float32, 0.5, shape=8)


@clpy.kernel
def count_and_accumulate(x: Global[float32], hits: Global[int32], sums: Global[float32]):
    i = clpy.get_global_id(0)
    clpy.atomic_inc(HITS + 0)
    SUMS[i] += x[i]
    sums[i] = SUMS[i]
    clpy.barrier(clpy.CLK_GLOBAL_MEM_FENCE)
    if i == 0:
        hits[0] = clpy.atomic_add(HITS + 0, 0)


@clpy.kernel
def other_program(hits: Global[int32]):
    if clpy.get_global_id(0) == 0:
        hits[0] = HITS[0]


def test_global_var_persists_across_launches_of_one_program(dev: Device) -> None:
    x = np.arange(8, dtype=np.float32)
    hits = np.zeros(1, np.int32)
    sums = np.zeros(8, np.float32)
    if not dev.is_sim and not dev.target.has(FEATURE):  # a device without them says so
        with pytest.raises(clpy.FeatureError, match="clpy.global_var 'HITS'"):
            count_and_accumulate[(8,), (8,)](x, hits, sums, device=dev)
        return
    for launch in range(1, 4):
        count_and_accumulate[(8,), (8,)](x, hits, sums, device=dev)
        assert hits[0] == 8 * launch
        np.testing.assert_array_equal(sums, 0.5 + launch * x)
    # another kernel is another program: its own HITS, initialised to 0
    other_program[(1,), (1,)](hits, device=dev)
    assert hits[0] == 0
    count_and_accumulate.clear_cache()
    other_program.clear_cache()


def test_global_var_declaration_and_1_2_error() -> None:
    src = count_and_accumulate.source_for("opencl-c-2.0")
    assert "__global int HITS[1] = {0};" in src
    assert "__global float SUMS[8] = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f};" in src
    with pytest.raises(clpy.FeatureError, match="clpy.global_var 'HITS'.*OpenCL C 2.0"):
        count_and_accumulate.source_for("opencl-c-1.2")


# ----------------------------------------------------------------------------- programs


def test_one_declaration_per_program_and_names_that_would_clash() -> None:
    text = emit_program([fir.ir, smooth.ir], "opencl-c-2.0", line_directives=False)
    assert text.count("__constant float FIR[5]") == 1
    assert text.count("__constant int TAPS[5]") == 1


def _module(tmp_path: Path, text: str) -> dict[str, object]:
    path = tmp_path / "tables_mod.py"
    path.write_text("import numpy as np\nimport clpy\nfrom clpy import Global, float32\n" + text)
    return runpy.run_path(str(path))


def test_table_named_like_a_builtin_or_a_local(tmp_path: Path) -> None:
    ns = _module(
        tmp_path,
        "sin = (1.0, 2.0)\n"
        "t = np.array([3.0], np.float32)\n"
        "@clpy.kernel\n"
        "def k(y: Global[float32]):\n"
        "    i = clpy.get_global_id(0)\n"
        "    t2 = t[0]\n"
        "    y[0] = sin[i] + t2\n",
    )
    src = ns["k"].source_for("opencl-c-2.0")  # type: ignore[attr-defined]
    assert "__constant float sin_[2] = {1.0f, 2.0f};" in src
    assert re.search(r"y\[0\] = sin_\[i\] \+ t2;", src)


def test_size_limit_names_the_variable(tmp_path: Path) -> None:
    ns = _module(
        tmp_path,
        "BIG = np.zeros(1024, np.float32)\n"
        "@clpy.kernel\n"
        "def k(y: Global[float32]):\n"
        "    y[0] = BIG[3]\n",
    )
    base = target_of("opencl-c-2.0")
    small = dataclasses.replace(base, info={**base.info, "max_constant_buffer_size": 1024})
    with pytest.raises(clpy.FeatureError, match="array 'BIG'.*4096 bytes.*1024 bytes"):
        emit_program(ns["k"].ir, small)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("T = np.zeros(4, np.float32)\n@clpy.kernel\ndef k(y: Global[float32]):\n"
         "    T[0] = y[0]\n", "array 'T'.*__constant table: kernels cannot write it"),
        ("T = (1.0, 2.0)\n@clpy.kernel\ndef k(y: Global[float32]):\n"
         "    p: clpy.Constant[float32] = T\n    y[0] = p[0]\n", None),
        ("T = np.zeros(4, bool)\n@clpy.kernel\ndef k(y: Global[float32]):\n"
         "    y[0] = T[0]\n", "dtype bool cannot be program-scope"),
        ("T = 1\n@clpy.kernel\ndef k(y: Global[float32]):\n"
         "    y[0] = len(y)\n", r"len\(\) of a kernel value needs an array"),
    ],
)
def test_errors(tmp_path: Path, text: str, message: str | None) -> None:
    ns = _module(tmp_path, text)
    k = ns["k"]
    if message is None:  # a table decays to a Constant pointer
        assert "__constant float T[2]" in k.source_for("opencl-c-2.0")  # type: ignore[attr-defined]
        return
    with pytest.raises(clpy.CompileError, match=message):
        k.source_for("opencl-c-2.0")  # type: ignore[attr-defined]


def test_global_var_arguments() -> None:
    g = clpy.global_var(clpy.float4, [[1, 2, 3, 4]] * 3)
    assert g.shape == (3,) and g.elem is clpy.float4
    with pytest.raises(TypeError, match="does not fit shape"):
        clpy.global_var(clpy.int32, [1, 2, 3], shape=2)
    with pytest.raises(TypeError, match="scalar or vector"):
        clpy.global_var(clpy.Global[clpy.int32])


def make_tiled(shape: tuple[int, int]) -> clpy.Kernel:
    @clpy.kernel
    def tiled(y: Global[float32]):
        t = clpy.local_array(float32, shape[0])  # a constant: the tuple is immutable
        i = clpy.get_local_id(0)
        t[i] = float32(shape[1])
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
        y[i] = t[shape[0] - 1 - i] + shape[i % 2]  # a run-time index reads the table

    return tiled


def test_closure_tuple_constant_index_folds(dev: Device) -> None:
    k = make_tiled((4, 7))
    src = k.source_for("opencl-c-2.0", line_directives=False)
    assert "__local float t[4];" in src and "__constant int shape[2] = {4, 7};" in src
    y = np.zeros(4, np.float32)
    k[(4,), (4,)](y, device=dev)
    np.testing.assert_array_equal(y, [11, 14, 11, 14])
