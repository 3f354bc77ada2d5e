"""Fuzzer-found PoCL bug, kept as a corpus (see tests/test_fuzz_regressions.py): a private
variable assigned in a loop that work-items leave at different trips, read after a barrier
(or a collective's), takes another work-item's value on PoCL 3.0. clpy declares such
variables volatile for PoCL (quirks: volatile_loop_vars; clpy/emit/lower_uniform.py
loop_barrier_vars); the tests check clpy's result on the simulator and the device, where the
declaration goes, and the driver's own raw result.

Found by the fuzzer on PoCL 3.0 (pthread, LLVM): the simulator follows the spec, PoCL does
not. Where clpy cannot avoid the bug, clpy.fuzz.campaign.KNOWN_POCL_BUGS keeps the fuzzer
from generating it for PoCL, and the test checks the simulator and reports PoCL's deviation
as an expected failure (it passes once PoCL is fixed). Where clpy avoids it (a lowering for
the device, in the quirk table), the test checks that clpy's result is the spec's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import clpy
from clpy import Global, int8, int32, int64, uint16, uint32
from tests.sim_vs_device import both as _both
from tests.sim_vs_device import run_raw


def _as_pocl():
    from dataclasses import replace

    from clpy.emit.targets import target_of

    return replace(target_of("opencl-c-1.2"), name="as-pocl", info={"volatile_loop_vars": True})


_AS_POCL = _as_pocl()


@clpy.kernel
def divergent_loop_then_barrier(x: Global[int32], out: Global[int8]):
    # seed 10865: a private variable assigned only in a loop that some work-items run zero
    # times, read after a barrier. PoCL gives every work-item the value of those that ran
    # the loop (as if the variable were uniform across the work-group); without the barrier,
    # or with an `if` instead of the loop, it is right.
    lin = clpy.get_global_linear_id()
    v = int8(-8)
    w = 0
    while w < (lin & 7) + x[0]:
        w += 1
        v = int8(64)
    clpy.barrier()
    out[lin] = v


def test_pocl_private_variable_after_divergent_loop_and_barrier(cl_device):
    sim, dev = _both(
        divergent_loop_then_barrier,
        (16,),
        (16,),
        np.zeros(1, np.int32),
        np.zeros(16, np.int8),
        cl_device=cl_device,
    )
    want = np.where(np.arange(16) % 8 == 0, -8, 64)
    np.testing.assert_array_equal(sim[1], want)
    np.testing.assert_array_equal(dev[1], want)  # PoCL: v and w are declared volatile there
    src = divergent_loop_then_barrier.source_for(_AS_POCL, line_directives=False)
    assert "volatile char v = " in src and "volatile int w = 0;" in src, src
    assert "volatile" not in divergent_loop_then_barrier.source_for("opencl-c-1.2")


@clpy.kernel
def data_loop_then_barrier(x: Global[int32], out: Global[int32]):
    # A divergent loop whose variable takes each work-item's own data is not declared
    # volatile (PoCL's analysis already keeps such a variable per work-item).
    lin = clpy.get_global_linear_id()
    acc = 0
    for i in range(lin, 64, 16 + (lin & 3)):
        acc += x[i]
    clpy.barrier()
    out[lin] = acc


def test_loop_barrier_volatile_only_where_needed(cl_device):
    x = np.arange(64, dtype=np.int32)
    sim, dev = _both(data_loop_then_barrier, (16,), (16,), x, np.zeros(16, np.int32),
                     cl_device=cl_device)  # fmt: skip
    want = [sum(range(i, 64, 16 + (i & 3))) for i in range(16)]
    np.testing.assert_array_equal(sim[1], want)
    np.testing.assert_array_equal(dev[1], want)
    assert "volatile" not in data_loop_then_barrier.source_for(_AS_POCL)


@clpy.kernel
def data_then_uniform_loop_then_barrier(x: Global[uint32], out: Global[uint32]):
    # seed 510030 (three-way run): v is loaded before the loop through an index clpy takes
    # for the work-item's ((lid * 64) & 63, always 0: PoCL folds it) and assigned only a
    # uniform value in the loop; PoCL gave the work-items that ran no trip the loop's 0 too.
    # v is declared volatile there: it takes no work-item data inside the loop.
    lid = clpy.get_local_linear_id()
    lin = clpy.get_global_linear_id()
    v = x[(lid * 64) & 63]
    for _ in range(lid & 7):
        v = uint32(0)
    clpy.barrier()
    out[lin] = v


def test_pocl_data_before_a_uniform_loop_then_barrier(cl_device):
    from dataclasses import replace

    x = np.arange(64, dtype=np.uint32) + 100
    sim, dev = _both(data_then_uniform_loop_then_barrier, (48,), (16,), x,
                     np.zeros(48, np.uint32), cl_device=cl_device)  # fmt: skip
    lid = np.arange(48) % 16
    want = np.where(lid % 8 == 0, 100, 0)
    np.testing.assert_array_equal(sim[1], want)
    np.testing.assert_array_equal(dev[1], want)
    src = data_then_uniform_loop_then_barrier.source_for(_AS_POCL, line_directives=False)
    assert "volatile uint v = " in src, src
    # without the declaration (the quirk off) PoCL shows the bug; any other device is right
    d = next(d for d in clpy.devices() if d.cl_device == cl_device)
    plain = replace(d.target, name="no-volatile",
                    info={**d.target.info, "volatile_loop_vars": False})  # fmt: skip
    o = np.zeros(48, np.uint32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data_then_uniform_loop_then_barrier[(48,), (16,)](x, o, device=d.variant(target=plain))
    if not np.array_equal(o, want):
        assert "portable computing language" in str(d).lower(), o
        pytest.xfail(f"PoCL bug without volatile: {o[:16]}")


@clpy.kernel
def break_loop_then_collective(out: Global[uint16]):
    # seed 600277 (sim vs PoCL, final code of session 4): the loop's bounds are the same for
    # every work-item, but odd work-items leave it by a break before the uniform assignment;
    # after the collective's barriers PoCL gave the even ones the odd ones' 65528. v is
    # declared volatile there (a break under a work-item condition makes the loop divergent).
    lin = clpy.get_global_linear_id()
    v: uint16 = uint16(65528)
    w = 0
    while w < 1:
        w += 1
        if lin % 2 == 1:
            break
        v = uint16(0)
    s = clpy.work_group_reduce_add(lin)
    out[lin * 2] = v
    out[lin * 2 + 1] = uint16(s)


def test_pocl_break_in_a_loop_then_collective(cl_device):
    sim, dev = _both(break_loop_then_collective, (16,), (8,), np.zeros(32, np.uint16),
                     cl_device=cl_device)  # fmt: skip
    lin = np.arange(16)
    want = np.zeros(32, np.uint16)
    want[0::2] = np.where(lin % 2 == 1, 65528, 0)
    want[1::2] = np.where(lin < 8, 28, 92)
    np.testing.assert_array_equal(sim[0], want)
    np.testing.assert_array_equal(dev[0], want)
    src = break_loop_then_collective.source_for(_AS_POCL, line_directives=False)
    assert "volatile ushort v = " in src, src


RAW_LOOP_BARRIER = (
    "__kernel void k(__global const int* x, __global char* out) {\n"
    "    int lin = get_global_id(0);\n    char v = -8;\n    int w = 0;\n"
    "    while (w < (lin & 7) + x[0]) {\n        w += 1;\n        v = 64;\n    }\n"
    "    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);\n    out[lin] = v;\n}"
)


def test_raw_private_variable_after_divergent_loop_and_barrier(cl_context, cl_queue):
    """The driver's own (seed 10865): PoCL 3.0 gives every work-item 64 (clpy's volatile
    declaration avoids it)."""
    o = np.zeros(16, np.int8)
    x = np.zeros(1, np.int32)
    run_raw(cl_context, cl_queue, RAW_LOOP_BARRIER, "k", (16,), (16,), [x], [o])
    want = np.where(np.arange(16) % 8 == 0, -8, 64)
    if not np.array_equal(o, want):
        assert "portable computing language" in cl_context.devices[0].platform.name.lower(), o
        pytest.xfail(f"PoCL bug: after the loop and a barrier every work-item reads {set(o)}")


@clpy.struct
class RedPair:
    hi: int32
    acc: uint32


@clpy.reduction(identity=RedPair(-2147483648, 0))
def redpair_op(a: RedPair, b: RedPair) -> RedPair:
    return RedPair(max(a.hi, b.hi), a.acc + b.acc)


@clpy.kernel
def loop_then_lowered_scan(out: Global[int64]):
    # seeds 1000183 (the background run), 64: the same PoCL bug, the barrier being one of a
    # lowered collective's. clpy declares such variables volatile for PoCL (quirks:
    # volatile_loop_vars; clpy/emit/lower_uniform.py loop_barrier_vars).
    lin = clpy.get_global_linear_id()
    lid = clpy.get_local_linear_id()
    v2 = int64(0)
    for _i8 in range(lid & 7):
        v2 = int64(1)
    r11 = clpy.work_group_scan_exclusive(RedPair(int32(0), uint32(0)), redpair_op)  # noqa: F841
    out[lin] = v2


@clpy.kernel
def every_item_loops_then_barrier(out: Global[int64]):
    # Not a zero-trip loop either: every work-item runs 1..8 trips and all read the last
    # one's counter after the barrier (so guarding the loop with `if (n > 0)` does not help;
    # `volatile` does).
    lin = clpy.get_global_linear_id()
    lid = clpy.get_local_linear_id()
    v = int64(-8)
    for i in range(1 + (lid & 7)):
        v = int64(i)
    clpy.barrier()
    out[lin] = v


@pytest.mark.parametrize(
    "kern, gsize, lsize, want",
    [
        (loop_then_lowered_scan, (3, 10), (3, 5), lambda lid: np.where(lid % 8 == 0, 0, 1)),
        (every_item_loops_then_barrier, (16,), (16,), lambda lid: lid % 8),
    ],
    ids=["lowered-scan", "every-item-loops"],
)
def test_pocl_loop_then_barrier_variants(cl_device, kern, gsize, lsize, want):
    n = int(np.prod(gsize))
    sim, dev = _both(kern, gsize, lsize, np.zeros(n, np.int64), cl_device=cl_device)
    gid = np.arange(n)
    ly = lsize[1] if len(lsize) > 1 else 1
    lid = (gid % gsize[0]) % lsize[0] + lsize[0] * ((gid // gsize[0]) % ly)
    np.testing.assert_array_equal(sim[0], want(lid))
    np.testing.assert_array_equal(dev[0], sim[0])  # volatile on PoCL
