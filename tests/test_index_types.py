"""Signed work-item indices and the mixed-sign rule (issue 12 part 1).

Work-item functions are ``int`` in kernel code (clpy/builtins/workitem.py), emitted as
``(int)get_global_id(0)``; a trailing type argument asks for another integer type; the
launchers reject an NDRange the index types cannot hold (clpy/runtime/sizes.py). Signed and
unsigned integers compare mathematically; other mixed arithmetic is an error naming the
operand (clpy/frontend/signs.py). Every kernel runs on the simulator and on PoCL.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, float32, int32, uint32
from clpy.errors import KernelTypeError
from clpy.ir.nodes import Declare
from clpy.ir.walk import walk
from clpy.runtime.devices import Device
from clpy.runtime.sizes import check_device_ids, index_range
from clpy.types import catalog as C


def var_types(k: Any) -> dict[str, Any]:
    return {n.var.name: n.var.type for n in walk(k.ir.body) if isinstance(n, Declare)}


# ----------------------------------------------------------------------------- kernels


@clpy.kernel
def halo_starts(out: Global[int32], neg: Global[int32]):
    # ported from C: int bx = get_group_id(0); int blkX = 16 * bx - 2;
    i = clpy.get_global_id(0)
    bx = clpy.get_group_id(0)
    blk = 16 * bx - 2
    out[i] = blk
    neg[i] = 1 if blk < 0 else 0


@clpy.kernel
def typed_ids(out: Global[clpy.long]):
    i = clpy.get_global_id(0)
    s = clpy.get_global_id(0, clpy.size_t)
    g = clpy.get_global_id(0, clpy.int64)
    u = clpy.get_local_id(0, uint32)
    n = clpy.get_global_size(0)
    lin = clpy.get_global_linear_id()
    out[i] = g + clpy.long(u) + n + lin - clpy.long(s)


@clpy.kernel
def wide_ids(out: Global[clpy.long]):
    g = clpy.get_global_id(0, clpy.int64)
    out[g - clpy.get_global_offset(0, clpy.int64)] = g


@clpy.kernel
def narrow_ids(out: Global[int32]):
    i = clpy.get_global_id(0)
    out[i - clpy.get_global_offset(0)] = i


@clpy.kernel
def linear_ids(out: Global[int32]):
    out[0] = clpy.get_global_linear_id()


@clpy.kernel
def mixed_compare(a: Global[int32], u: Global[uint32], big: Global[clpy.ulong],
                  sl: Global[clpy.long], out: Global[int32]):
    i = clpy.get_global_id(0)
    r = 0
    if a[i] < u[i]:
        r |= 1
    if sl[i] < big[i]:
        r |= 2
    if u[i] > -1:
        r |= 4
    if big[i] >= sl[i]:
        r |= 8
    if i - 3 < u[i]:  # i - 3 may be negative: compared mathematically
        r |= 16
    out[i] = r


@clpy.kernel
def mixed_ok(u: Global[uint32], out: Global[uint32]):
    i = clpy.get_global_id(0)
    out[i] = u[i] * i + i % 4 - (u[i] & -4)  # non-negative signed operands and & mix freely


@clpy.kernel
def floor_on_ids(out: Global[int32]):
    i = clpy.get_global_id(0)
    out[i] = i // 4 + i % 3 - (i - 5) // 2


# ----------------------------------------------------------------------------- types and text


def test_work_item_functions_are_int_unless_asked() -> None:
    types = var_types(typed_ids)
    assert types["i"] is C.int_ and types["n"] is C.int_ and types["lin"] is C.int_
    assert types["s"] is C.size_t and types["g"] is C.long and types["u"] is C.uint
    text = typed_ids.source_for("opencl-c-2.0")
    assert "int i = (int)get_global_id(0);" in text
    assert "size_t s = get_global_id(0);" in text
    assert "long g = (long)get_global_id(0);" in text
    assert "uint u = (uint)get_local_id(0);" in text


def test_group_arithmetic_is_signed_in_the_source() -> None:
    text = halo_starts.source_for("opencl-c-1.2")
    assert "int bx = (int)get_group_id(0);" in text
    assert "int blk = 16 * bx - 2;" in text


def test_floor_division_of_ids_needs_no_helper_where_provably_non_negative() -> None:
    text = floor_on_ids.source_for("opencl-c-1.2")
    assert "i / 4 + i % 3" in text  # ids are >= 0: C's / and % are Python's
    assert "clpy_floordiv_int(i - 5, 2)" in text  # i - 5 may be negative


def test_bad_index_type_argument_names_it() -> None:
    @clpy.kernel
    def bad(out: Global[int32]):
        out[0] = clpy.get_global_id(0, clpy.short)

    with pytest.raises(KernelTypeError, match=r"last argument of get_global_id.*clpy\.short"):
        bad.specialize()


# ----------------------------------------------------------------------------- sim and PoCL


def test_negative_group_offsets_are_negative(dev: Device) -> None:
    out, neg = np.zeros(64, np.int32), np.zeros(64, np.int32)
    halo_starts[64, 16](out, neg, device=dev)
    want = 16 * (np.arange(64) // 16) - 2
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(neg, (want < 0).astype(np.int32))


def test_typed_ids_give_the_same_values(dev: Device) -> None:
    out = np.zeros(32, np.int64)
    typed_ids[32, 8](out, device=dev)
    i = np.arange(32)
    np.testing.assert_array_equal(out, i + i % 8 + 32 + i - i)


def test_floor_division_on_ids(dev: Device) -> None:
    out = np.zeros(40, np.int32)
    floor_on_ids[40, 8](out, device=dev)
    i = np.arange(40)
    np.testing.assert_array_equal(out, i // 4 + i % 3 - (i - 5) // 2)


def test_an_ndrange_beyond_int_is_an_error_not_a_wrap(dev: Device) -> None:
    out = np.full(64, 7, np.int32)
    with pytest.raises(ValueError, match=r"narrow_ids.*offset 2147483600.*clpy\.int64"):
        narrow_ids[64, 16](out, device=dev, offset=2**31 - 48)
    np.testing.assert_array_equal(out, 7)  # nothing ran
    narrow_ids[64, 16](out, device=dev, offset=(2**31 - 64,))  # the last ids that fit
    np.testing.assert_array_equal(out, np.arange(2**31 - 64, 2**31, dtype=np.int64))


def test_64_bit_indices_take_offsets_beyond_int(dev: Device) -> None:
    out = np.zeros(64, np.int64)
    limit = dev.target.info.get("max_global_id") if dev.target is not None else None
    if limit is not None and 2**31 + 5 + 63 > limit:
        # A device quirk (clpy/runtime/quirks.py): NVIDIA computes global ids in 32 bits
        # (measured on an H100, driver 580: -2147483643 for 2147483653). The launcher refuses
        # before anything runs instead of giving device-dependent ids.
        with pytest.raises(ValueError, match=rf"wide_ids.*offset 2147483653.*beyond the "
                                             rf"{limit} that .*computes correctly"):
            wide_ids[64, 16](out, device=dev, offset=(2**31 + 5,))
        np.testing.assert_array_equal(out, 0)  # nothing ran
        wide_ids[64, 16](out, device=dev, offset=(limit - 63,))  # the last ids it computes
        np.testing.assert_array_equal(out, limit - 63 + np.arange(64))
        return
    wide_ids[64, 16](out, device=dev, offset=(2**31 + 5,))
    np.testing.assert_array_equal(out, 2**31 + 5 + np.arange(64))


def test_a_device_global_id_limit_refuses_wider_ndranges() -> None:
    # The check an NVIDIA device gets (quirk max_global_id = 2**31 - 1), without one.
    r = index_range(wide_ids.ir)
    with pytest.raises(ValueError, match=r"wide_ids.*offset 2147483600 in dimension 0 reaches "
                                         r"global id 2147483663, beyond the 2147483647 that "
                                         r"GPU X computes correctly.*clpy.get_global_id as long"):
        check_device_ids("wide_ids", (64,), (2**31 - 48,), r, 2**31 - 1, "GPU X")
    with pytest.raises(ValueError, match=r"global size 2147483649 in dimension 0 reaches"):
        check_device_ids("wide_ids", (2**31 + 1,), None, r, 2**31 - 1, "GPU X")
    check_device_ids("wide_ids", (64,), (2**31 - 64,), r, 2**31 - 1, "GPU X")  # fits
    check_device_ids("wide_ids", (64,), (2**40,), r, None, "PoCL")  # no quirk: no limit
    # int indices already stop at 2**31 - 1 (check_index_range): nothing more to check.
    check_device_ids("narrow_ids", (64,), (2**40,), index_range(narrow_ids.ir), 2**31 - 1, "X")


def test_linear_id_checks_the_total_count() -> None:
    out = np.zeros(1, np.int32)
    with pytest.raises(ValueError, match=r"4294967296 work-items.*get_global_linear_id"):
        linear_ids[(65536, 65536), (16, 16)](out, device="sim")


def test_mixed_sign_comparisons_are_mathematical(dev: Device) -> None:
    n = 8
    a = np.array([-1, 5, -7, 3, 0, -2, 9, 1], np.int32)
    u = np.array([1, 4, 0, 3, 4000000000, 0, 10, 2], np.uint32)
    big = np.array([2**64 - 1, 0, 5, 2**63, 1, 0, 7, 3], np.uint64)
    sl = np.array([-1, 0, -5, 2**62, 2, -(2**63), 8, 3], np.int64)
    out = np.zeros(n, np.int32)
    mixed_compare[n, n](a, u, big, sl, out, device=dev)
    i = np.arange(n)
    want = np.zeros(n, np.int64)
    for k in range(n):  # Python's integers: the meaning the kernel promises
        ak, uk, bk, sk = int(a[k]), int(u[k]), int(big[k]), int(sl[k])
        want[k] = ((ak < uk) * 1 | (sk < bk) * 2 | (uk > -1) * 4 | (bk >= sk) * 8
                   | (int(i[k]) - 3 < uk) * 16)
    np.testing.assert_array_equal(out, want)


def test_non_negative_signed_operands_mix(dev: Device) -> None:
    u = np.arange(16, dtype=np.uint32) * 3 + 4
    out = np.zeros(16, np.uint32)
    mixed_ok[16, 16](u, out, device=dev)
    i = np.arange(16)
    np.testing.assert_array_equal(out, (u * i + i % 4 - (u & ~np.uint32(3))).astype(np.uint32))


def test_mixed_sign_arithmetic_names_the_operand() -> None:
    @clpy.kernel
    def start(out: Global[int32], n: uint32):
        i = clpy.get_global_id(0)
        out[i] = (i - 2) * n

    with pytest.raises(KernelTypeError) as e:
        start.specialize()
    msg = str(e.value)
    assert "signed int (i - 2) and unsigned uint (n)" in msg
    assert "uint(i - 2)" in msg and "long(n)" in msg
    assert f"{__file__}:" in msg


def test_mixed_sign_select_and_min_are_errors() -> None:
    @clpy.kernel
    def pick(out: Global[float32], a: int32, b: uint32):
        out[0] = min(a, b)

    with pytest.raises(KernelTypeError, match="mixes signed int"):
        pick.specialize()


@clpy.kernel
def window_sums(x: Global[int32], out: Global[int32], n: uint32):
    i = clpy.get_global_id(0)
    s = 0
    for j in range(i - 2, n):  # starts below 0 for the first work-items: a long counter
        if j >= 0 and j < i + 1:
            s += x[j]
    out[i] = s


def test_range_with_a_negative_signed_start_and_an_unsigned_stop(dev: Device) -> None:
    assert "for (long j = " in window_sums.source_for("opencl-c-1.2")
    x = np.arange(1, 9, dtype=np.int32)
    out = np.zeros(8, np.int32)
    window_sums[8, 8](x, out, 8, device=dev)
    want = [int(x[max(0, i - 2): i + 1].sum()) for i in range(8)]
    np.testing.assert_array_equal(out, want)


@clpy.kernel
def widened_compare(u: Global[uint32], out: Global[int32]):
    i = clpy.get_global_id(0)
    out[i] = 1 if clpy.long(u[i]) > -1 else 0


def test_a_widening_cast_before_a_negative_literal_stays(dev: Device) -> None:
    # the literal is spelled -1 (a C int): dropping (long) would compare in uint
    assert "(long)u[i] > -1" in widened_compare.source_for("opencl-c-1.2")
    out = np.zeros(4, np.int32)
    widened_compare[4](np.arange(4, dtype=np.uint32), out, device=dev)
    np.testing.assert_array_equal(out, 1)
