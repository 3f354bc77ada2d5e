"""The mismatches of the session-6 three-way fuzz run (sim vs PoCL vs NVIDIA H100, driver 580;
5,082 kernels, seeds 350000-355081) and the re-run of seed 340201, each reduced kernel kept as
a differential case.

- 340201 (NVIDIA): ``max((uchar)254, convert_uchar_sat(lin))`` gave 255 for every work-item.
  With seeds 333693 and 342146 (short ``min``/``max``, tests/test_fuzz_triage_s5.py) this makes
  the H100's ``min``/``max`` of 8- and 16-bit types untrustworthy: clpy computes them, and
  ``clamp``, in 32 bits there (quirk ``min:uchar`` ..., clpy/emit/lower_narrow.py). The
  lowered form is checked here on the device at hand with the quirk forced; it has not yet run
  on the H100 (no device time was left in session 6).
- 353992 (PoCL 3.0): a ``volatile`` struct (clpy's PoCL lowering for a struct assigned in a
  loop of work-item-dependent trip count, lower_uniform.py) initialized by a whole-struct copy
  before a barrier reads back 0 from a field after it. Field-by-field stores into the volatile
  struct are right (so are: not volatile, no barrier); a volatile struct is now always stored
  field by field (clpy/emit/c_stmts.py ``_fieldwise``).
- 354812 (NVIDIA): ``printf("p1 %d %lu %g\\n", lin, 0UL, 0.5f)`` in a loop, guarded by
  ``v5 < (uchar)255`` with ``v5 = convert_uchar_sat(lid)``, printed nothing (the simulator and
  PoCL print 24 lines). Not printf: all 12 variants of scripts/gpu_printf_diag.py printed every
  line on the H100 (session 7). The guard was false: like 340201 it reads clpy's saturating
  helper, spelled ``x < 0 ? 0 : x > UCHAR_MAX ? UCHAR_MAX : (uchar)x``, and
  scripts/gpu_sat_diag.py showed that spelling (and only it, of eight) wrong under ``max`` on
  the H100, with ``convert_uchar`` outside the ternary right everywhere. The helper is now
  spelled so (clpy/emit/lower_convert.py ``_int_helper``).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import replace
from typing import Any

import numpy as np
import pyopencl as cl

import clpy
import clpy.vectors as V
from clpy import Global, float32, float64, int8, int16, int32, uint8, uint64
from clpy.runtime.quirks import device_target
from tests.sim_vs_device import both
from tests.test_fuzz_triage_s5 import _forced as _forced_target
from tests.test_fuzz_triage_s5 import _nvidia_info


@clpy.struct
class Rec340201:
    f0: uint8
    f1: int8


@clpy.kernel
def seed_340201(out_uchar: Global[uint8]):
    lin = clpy.get_global_linear_id()
    s1 = Rec340201(uint8(254), int8(0))
    s1.f0 = max(s1.f0, clpy.convert_uchar_sat(lin))
    out_uchar[lin] = s1.f0


def _forced(cl_device: Any, name: str, **info: Any) -> Any:
    """The test device as a variant whose target has some of NVIDIA's lowerings forced."""
    dev, tgt = _forced_target(cl_device, name, **info)
    return dev.variant(target=tgt), tgt


def test_max_of_uchar(cl_device: Any) -> None:
    want = np.maximum(254, np.minimum(np.arange(300), 255)).astype(np.uint8)
    sim, dev = both(seed_340201, (300,), (60,), np.zeros(300, np.uint8), cl_device=cl_device)
    np.testing.assert_array_equal(sim[0], want)
    np.testing.assert_array_equal(dev[0], want)
    lowered = device_target(_nvidia_info()).info["lower_builtins"]
    assert {"max:uchar", "min:char", "clamp:ushort"} <= lowered
    d, tgt = _forced(cl_device, "forced-nvidia-max", lower_builtins=lowered)
    assert "(uchar)max((uint)s1.f0, (uint)" in seed_340201.source_for(tgt, line_directives=False)
    o = np.zeros(300, np.uint8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seed_340201[(300,), (60,)](o, device=d)
    np.testing.assert_array_equal(o, want)


@clpy.kernel
def narrow_clamps(a: Global[V.uchar4], b: Global[int8], out: Global[V.uchar4], o2: Global[int8]):
    i = clpy.get_global_id(0)
    out[i] = clpy.clamp(a[i], uint8(3), uint8(250))
    o2[i] = min(max(b[i], int8(-100)), int8(100))


def test_narrow_clamp_min_max_lowered(cl_device: Any) -> None:
    rng = np.random.default_rng(340201)
    a = rng.integers(0, 256, (32, 4)).astype(np.uint8)
    b = rng.integers(-128, 128, 32).astype(np.int8)
    b[:2] = [-128, 127]
    want_a = np.clip(a, 3, 250)
    want_b = np.clip(b, -100, 100)
    d, tgt = _forced(
        cl_device, "forced-nvidia-narrow", lower_builtins=device_target(_nvidia_info()).info[
            "lower_builtins"]
    )  # fmt: skip
    src = narrow_clamps.source_for(tgt, line_directives=False)
    assert "convert_uchar4(clamp(convert_uint4(a[i]), (uint)" in src, src
    assert "(char)min((int)(char)max((int)b[i], (int)((char)-100)), (int)((char)100))" in src
    o, o2 = np.zeros((32, 4), np.uint8), np.zeros(32, np.int8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        narrow_clamps[(32,), (8,)](a, b, o, o2, device=d)
    np.testing.assert_array_equal(o, want_a)
    np.testing.assert_array_equal(o2, want_b)
    sim, dev = both(
        narrow_clamps, (32,), (8,), a, b, np.zeros_like(o), np.zeros_like(o2), cl_device=cl_device
    )
    np.testing.assert_array_equal(sim[2], want_a)
    np.testing.assert_array_equal(dev[3], want_b)


@clpy.struct
class Rec353992:
    f0: float64
    f1: int16
    f2: int8


@clpy.func
def sf3(r: Rec353992) -> int8:
    r.f0 = r.f0
    return r.f2


@clpy.kernel
def seed_353992(in_rec: Global[Rec353992], out_char: Global[int8]):
    lin = clpy.get_global_linear_id()
    s2 = in_rec[int32(0)]
    v7: V.char3 = V.char3(int8(0))
    c10: int32 = clpy.work_group_reduce(int32(0), "-")  # noqa: F841 (the barrier)
    for _i11 in range(7, (lin & 3), -2):
        if lin % 4 == 2:
            v7.s2 = V.char3(int8(-8), s2.f2, int8(126)).s1
        else:
            s2.f2 = s2.f2
    w13 = 0
    while w13 < int32(0):
        w13 += 1
        v7.xyz = V.char3(int8(0), sf3(s2), int8(64))
    s2.f2 = int8(0)
    clpy.vstore3(v7, 0, out_char + (lin * 4 + 1))


def test_volatile_struct_copied_before_a_barrier(cl_device: Any) -> None:
    rec = np.zeros(4, Rec353992.dtype)
    rec["f2"] = -28
    want = np.zeros(64, np.int8)
    want[[4 * i + 3 for i in range(16) if i % 4 == 2]] = -28
    sim, dev = both(seed_353992, (16,), (8,), rec, np.zeros(64, np.int8), cl_device=cl_device)
    np.testing.assert_array_equal(sim[1], want)
    np.testing.assert_array_equal(dev[1], want)
    dev_ = next(d for d in clpy.devices() if d.cl_device == cl_device)
    tgt = replace(dev_.target, info={**dev_.target.info, "volatile_loop_vars": True})
    src = seed_353992.source_for(tgt, line_directives=False)
    assert "Rec353992 clpy_s2_value = in_rec[0];" in src, src
    assert "s2.f2 = clpy_s2_value.f2;" in src and "volatile Rec353992 s2;" in src


@clpy.kernel
def short_updates(x: Global[int16], o: Global[int16]):
    i = clpy.get_global_id(0)
    s: int16 = int16(0)
    s -= x[i]  # seed 333251's (short)(0 - x), as a compound assignment
    t: int16 = x[i]
    t *= int16(3)
    u: int16 = int16(1)
    u -= x[i] - int16(1)
    o[3 * i] = int16(1) if s > int16(0) else int16(0)
    o[3 * i + 1] = t
    o[3 * i + 2] = u


def test_short_compound_assignments_narrowed_by_convert(cl_device: Any) -> None:
    """On a target with ``narrow_casts`` (NVIDIA) ``s -= x`` on a short variable is written
    ``s = convert_short(s - x)``; the values are the simulator's either way."""
    info = np.iinfo(np.int16)
    x = np.array([info.min, info.min + 1, -1, 0, 1, 11000, info.max, 7], np.int16)
    x32 = x.astype(np.int32)
    want = np.stack(
        [(-x32).astype(np.int16) > 0, (3 * x32).astype(np.int16), (2 - x32).astype(np.int16)],
        axis=1,
    ).astype(np.int16)
    d, tgt = _forced(cl_device, "forced-nvidia-updates", narrow_casts=frozenset({"short"}))
    src = short_updates.source_for(tgt, line_directives=False)
    assert "s = convert_short(s - x[i]);" in src and "t = convert_short(t * 3);" in src, src
    assert "u = convert_short(u - (x[i] - 1));" in src, src
    o = np.zeros(3 * len(x), np.int16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        short_updates[(len(x),), (len(x),)](x, o, device=d)
    np.testing.assert_array_equal(o, want.ravel())
    sim, dev = both(short_updates, (8,), (8,), x, np.zeros_like(o), cl_device=cl_device)
    np.testing.assert_array_equal(sim[1], want.ravel())
    np.testing.assert_array_equal(dev[1], want.ravel())


@clpy.kernel
def seed_354812():
    lin = clpy.get_global_linear_id()
    lid = clpy.get_local_linear_id()
    v3: int32 = lid
    v5: uint8 = clpy.convert_uchar_sat(v3)
    for _i10 in range(6, int32(0), -2):
        if v5 < V.uchar4(uint8(255)).s2:
            print("p1", lin, uint64(0), float32(0.5))


def test_guard_on_a_saturated_uchar_prints(cl_device: Any, capfd: Any) -> None:
    """Seed 354812 reduced: 8 work-items, 3 trips each, every guard true (OpenCL C 2.0
    §6.2.3.3: the saturated value of 0 or 1 is itself), so 24 lines on every device."""
    seed_354812[(8,), (2,)](device="sim")
    sim = [x for x in capfd.readouterr().out.splitlines() if x.startswith("p1")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seed_354812[(8,), (2,)](device=cl.Context([cl_device]), wait=True)
    dev: list[str] = []
    deadline = time.monotonic() + 20.0  # PoCL prints from its own thread after the command
    while len(dev) < 24 and time.monotonic() < deadline:
        dev += [x for x in capfd.readouterr().out.splitlines() if x.startswith("p1")]
        time.sleep(0.01)
    want = sorted(f"p1 {i} 0 0.5" for i in range(8) for _ in range(3))
    assert sorted(sim) == want
    assert sorted(dev) == want


@clpy.kernel
def sat_narrow(x: Global[int32], lo: Global[uint8], o8: Global[int8], o16: Global[int16]):
    i = clpy.get_global_id(0)
    lo[i] = max(uint8(254), clpy.convert_uchar_sat(x[i]))
    o8[i] = clpy.convert_char_sat(x[i])
    o16[i] = clpy.convert_short_sat(x[i])


def test_sat_helper_converts_outside_the_ternary(cl_device: Any) -> None:
    """NVIDIA's lowering of saturating integer conversions (quirk ``lower_sat_conversions``
    ``"int"``) clamps in the source type and converts the clamped value with ``convert_T``,
    the spelling scripts/gpu_sat_diag.py found right on the H100; forced here on the device at
    hand, the values are the spec's."""
    d, tgt = _forced(cl_device, "forced-nvidia-sat", lower_sat_conversions=frozenset({"int"}))
    src = sat_narrow.source_for(tgt, line_directives=False)
    assert "return convert_uchar(x < (int)0 ? 0 : x > (int)UCHAR_MAX ? UCHAR_MAX : x);" in src
    assert (
        "return convert_short(x < (int)SHRT_MIN ? SHRT_MIN : x > (int)SHRT_MAX ? SHRT_MAX : x);"
        in src
    )
    x = np.concatenate([np.arange(-300, 300), [-(2**31), -32769, 32768, 2**31 - 1]]).astype(
        np.int32
    )
    outs = [np.zeros(len(x), t) for t in (np.uint8, np.int8, np.int16)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sat_narrow[(len(x),), None](x, *outs, device=d)
    xl = x.astype(np.int64)
    np.testing.assert_array_equal(outs[0], np.maximum(254, np.clip(xl, 0, 255)))
    np.testing.assert_array_equal(outs[1], np.clip(xl, -128, 127))
    np.testing.assert_array_equal(outs[2], np.clip(xl, -32768, 32767))
