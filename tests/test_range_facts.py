"""Range facts (clpy/frontend/ranges.py): where operands are provably non-negative, ``//`` and
``%`` are C's own operators (Python's and C's agree there); where a store may go negative the
Python helpers stay, and the results are Python's on the simulator and on OpenCL."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, int32


@clpy.kernel
def facts(out: Global[int32], n: int32):
    ty = clpy.get_local_id(0)
    g = clpy.get_global_id(0)
    acc = 0
    for i in range(1, 5):
        p = 2**i  # an int, as in Python
        acc += ty % p + p // 2
    s = 1
    while s < 64:
        acc += ty % (2 * s)
        s *= 2
    k = 40
    while k > 0:
        acc += ty // (k + 1)
        k //= 3
    for j in range(ty, n, clpy.get_local_size(0)):
        acc += j // 7 + j % 5
    stride = 2 * clpy.get_local_size(0)  # a name for a positive step counts up too
    for j2 in range(ty, n, stride):
        acc += j2 % 3
    out[g] = acc


def _facts_ref(gsize: int, lsize: int, n: int) -> np.ndarray:
    out = np.zeros(gsize, np.int32)
    for g in range(gsize):
        ty = g % lsize
        acc = 0
        for i in range(1, 5):
            p = 2**i
            acc += ty % p + p // 2
        s = 1
        while s < 64:
            acc += ty % (2 * s)
            s *= 2
        k = 40
        while k > 0:
            acc += ty // (k + 1)
            k //= 3
        for j in range(ty, n, lsize):
            acc += j // 7 + j % 5
        for j2 in range(ty, n, 2 * lsize):
            acc += j2 % 3
        out[g] = acc
    return out


def test_non_negative_operands_use_c_operators() -> None:
    src = facts.source
    assert "clpy_floordiv" not in src and "clpy_floormod" not in src, src
    assert "int p = 1 << i;" in src
    assert "s *= 2;" in src and "k /= 3;" in src
    # a size-query step counts up: no ``step > 0 ? ... : ...`` test
    assert "j < n;" in src and "? (j < n)" not in src
    assert "j2 < n;" in src and "? (j2 < n)" not in src


def test_non_negative_results_match_python(dev: Any) -> None:
    out = np.zeros(64, np.int32)
    facts[(64,), (16,)](out, np.int32(37), device=dev)
    np.testing.assert_array_equal(out, _facts_ref(64, 16, 37))


@clpy.kernel
def refuted(out: Global[int32], step: int32):
    g = clpy.get_global_id(0)
    s = 9
    acc = 0
    while s > -9:
        acc += s // 4 + s % 4
        s -= 5  # s goes negative: the fact is refuted and the build restarts
    for i in range(0, 3):
        acc += i // 2
    for i in range(-4, 3):  # the second loop over i starts negative
        acc += i // 3 + i % 3
    for j in range(g, 20, step):  # the step's sign is unknown
        acc += j // 6
    out[g] = acc


def _refuted_ref(g: int, step: int) -> int:
    s, acc = 9, 0
    while s > -9:
        acc += s // 4 + s % 4
        s -= 5
    for i in range(0, 3):
        acc += i // 2
    for i in range(-4, 3):
        acc += i // 3 + i % 3
    for j in range(g, 20, step):
        acc += j // 6
    return acc


def test_refuted_facts_keep_python_division() -> None:
    src = refuted.source
    assert "clpy_floordiv_int(s, 4)" in src and "clpy_floormod_int(s, 4)" in src, src
    assert "clpy_floordiv_int(i, 3)" in src
    assert "? (j < 20) : (j > 20)" in src


@pytest.mark.parametrize("step", [3, -2])
def test_refuted_results_match_python(dev: Any, step: int) -> None:
    out = np.zeros(8, np.int32)
    refuted[(8,), (8,)](out, np.int32(step), device=dev)
    np.testing.assert_array_equal(out, [_refuted_ref(g, step) for g in range(8)])


@clpy.kernel
def mixed_after_refute(out: Global[int32], u: clpy.uint32):
    g = clpy.get_global_id(0)
    m = g
    m -= 3
    out[g] = m * u  # m may be negative: mixing it with uint is an error


def test_refuted_name_is_signed_again_for_mixing() -> None:
    with pytest.raises(clpy.CompileError, match="mixes signed"):
        _ = mixed_after_refute.source
