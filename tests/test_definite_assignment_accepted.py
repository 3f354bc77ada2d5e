"""Definite assignment (clpy/frontend/definite.py): kernels whose every path assigns a local
before reading it compile, and run with Python's values (the rejected reads are in
tests/test_definite_assignment.py)."""

# ruff: noqa: F821 - a first-iteration idiom reads a name that ruff cannot see assigned

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, float32, int32


@clpy.kernel
def both_branches(x: Global[float32], out: Global[float32]):
    i = clpy.get_global_id(0)
    if x[i] > 0:
        y = x[i]
    else:
        y = -x[i]
    out[i] = y


@clpy.kernel
def every_branch_of_a_chain(x: Global[float32], out: Global[float32]):
    i = clpy.get_global_id(0)
    if x[i] > 1:
        if x[i] > 2:
            y = 3.0
        else:
            y = 2.0
    elif x[i] > 0:
        y = 1.0
    else:
        y = 0.0
    out[i] = y


@clpy.kernel
def other_branch_returns(x: Global[float32], out: Global[float32]):
    i = clpy.get_global_id(0)
    if x[i] > 0:
        y = x[i]
    else:
        out[i] = -1.0
        return
    out[i] = y


@clpy.kernel
def loop_variable_after_constant_range(out: Global[int32]):
    i = clpy.get_global_id(0)
    for k in range(1, 8, 3):
        y = k * 10
    out[i] = k + y  # Python: k == 7, y == 70


@clpy.kernel
def while_true_assigns_before_break(x: Global[float32], out: Global[float32]):
    i = clpy.get_global_id(0)
    k = 0
    while True:
        y = x[i] + k
        if y > 3.0:
            break
        k += 1
    out[i] = y


@clpy.kernel
def first_iteration_idioms(x: Global[float32], out: Global[float32]):
    i = clpy.get_global_id(0)
    best: float32
    for k in range(4):
        if k == 0:
            acc = x[0]
        else:
            acc = acc + x[k]
        if k == 0:
            prod = x[0]
        if k != 0:
            prod = prod * x[k]
        best = x[k] if k == 0 else max(best, x[k])
        if k == 0:
            cnt = 1.0
        if not (k == 0 or x[k] < 0.0):
            cnt = cnt + 1.0
    out[i] = acc + prod + best + cnt


@clpy.kernel
def first_iteration_of_both_loops(x: Global[float32], out: Global[float32]):
    i = clpy.get_global_id(0)
    for r in range(2):
        for k in range(4):
            if k == 0 and r == 0:
                acc = x[0]
            else:
                acc = acc + x[k]
        out[i + r] = acc


@clpy.kernel
def first_iteration_after_reused_variable(x: Global[float32], out: Global[float32], n: int32):
    for k in range(n):
        out[k] = 0.0
    for k in range(4):
        if k == 0:
            acc = x[0]
        else:
            acc = acc + x[k]
    out[0] = acc + k


@clpy.kernel
def declared_then_assigned(out: Global[float32]):
    y: float32
    y = 2.0
    out[0] = y


@clpy.kernel
def assigned_every_iteration_used_in_it(x: Global[float32], out: Global[float32], n: int32):
    for k in range(n):
        if x[k] > 0:
            t = x[k]
        else:
            t = 0.0
        out[k] = t


@clpy.kernel
def assigned_before_continue(x: Global[float32], out: Global[float32]):
    i = clpy.get_global_id(0)
    for k in range(4):
        y = x[k]
        if y < 0:
            continue
        out[i] = y
    out[i] = out[i] + y


@clpy.kernel
def arrays_are_storage(out: Global[float32]):
    i = clpy.get_global_id(0)
    a = clpy.private_array(float32, 4)
    for k in range(4):
        a[k] = k * 1.0
    out[i] = a[3]


@clpy.kernel
def loop_variable_reused(out: Global[int32], n: int32):
    i = clpy.get_global_id(0)
    for k in range(n):
        out[k] = 0
    for k in range(3):
        out[i] = k
    out[i] = out[i] + k


@clpy.kernel
def fence_flags_first(x: Global[float32]):
    flags = clpy.CLK_LOCAL_MEM_FENCE | clpy.CLK_GLOBAL_MEM_FENCE
    x[0] = 1.0
    clpy.barrier(flags)


@clpy.func
def clamp01(v: float32) -> float32:
    if v < 0:
        r = 0.0
    elif v > 1:
        r = 1.0
    else:
        r = v
    return r


@clpy.kernel
def calls_clamp01(x: Global[float32], out: Global[float32]):
    i = clpy.get_global_id(0)
    out[i] = clamp01(x[i])


ACCEPTED = [
    both_branches,
    every_branch_of_a_chain,
    other_branch_returns,
    loop_variable_after_constant_range,
    while_true_assigns_before_break,
    first_iteration_idioms,
    first_iteration_of_both_loops,
    first_iteration_after_reused_variable,
    declared_then_assigned,
    assigned_every_iteration_used_in_it,
    assigned_before_continue,
    arrays_are_storage,
    loop_variable_reused,
    fence_flags_first,
    calls_clamp01,
]


@pytest.mark.parametrize("kernel", ACCEPTED, ids=[k.__name__ for k in ACCEPTED])
def test_accepted(kernel: Any) -> None:
    assert kernel.ir.body


def _sim(kernel: Any, n: int, *args: Any) -> None:
    kernel[(n,), (n,)](*args, device="sim")


def test_values_are_pythons() -> None:
    """The accepted kernels compute what the same function computes as Python."""
    x = np.array([1.0, -2.0, 3.0, 0.5], np.float32)
    out = np.zeros(4, np.float32)
    _sim(first_iteration_idioms, 1, x, out)
    acc, prod, best, cnt = x.sum(), np.prod(x), x.max(), 1 + (x[1:] >= 0).sum()
    assert out[0] == np.float32(acc + prod + best + cnt) == 5.5

    iout = np.zeros(2, np.int32)
    _sim(loop_variable_after_constant_range, 2, iout)
    assert iout.tolist() == [77, 77]  # the last k (7, not 10) and y

    out = np.zeros(3, np.float32)
    _sim(first_iteration_of_both_loops, 1, x, out)
    assert out[0] == x.sum() and out[1] == x.sum() + x.sum()

    out = np.zeros(4, np.float32)
    _sim(calls_clamp01, 4, np.array([-1.0, 0.25, 2.0, 1.0], np.float32), out)
    assert out.tolist() == [0.0, 0.25, 1.0, 1.0]


def test_fuzz_generator_kernels_are_accepted(tmp_path: Any) -> None:
    """The differential fuzzer's kernels give every variable a value first (a few seeds here;
    300 were compiled when the check was written)."""
    from clpy.fuzz.generator import generate
    from clpy.fuzz.runner import load

    for seed in range(8):
        assert load(generate(seed), tmp_path).kernel.ir.body
