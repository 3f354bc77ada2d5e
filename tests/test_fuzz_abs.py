"""``abs`` and ``abs_diff`` of signed integers at the most negative value (OpenCL C 2.0
§6.13.3, table 10: the result is the unsigned type, "without modulo overflow", so
``abs(INT_MIN)`` is ``(uint)2**31``, which converts back to ``int`` as ``INT_MIN``).

PoCL 3.0 makes ``MIN`` poison in ``abs`` (found by clpy.fuzz: seed 3078, an ``int`` at run
time; seed 127, a constant ``LONG_MIN`` folded to -20); clpy computes both functions in the
unsigned type there for every signed type (quirks ``abs:<type>``, ``abs_diff:<type>``;
clpy/emit/lower_abs.py). Here: the spec's values on the simulator and, through
clpy, on the device for every signed width, scalar and vector; the helper forced on this device
for every signed type; and the driver's own raw result.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import clpy
import clpy.vectors as V
from clpy import Global, int8, int16, int32, int64
from tests.sim_vs_device import kernel_from_source, run_raw

SIGNED = {"int8": "char", "int16": "short", "int32": "int", "int64": "long"}


@clpy.kernel
def abs_int_min(x: Global[int32], o: Global[int64]):
    # seed 3078: abs(INT_MIN) is (uint)2**31 (spec §6.13.3: abs returns the unsigned type);
    # as int it is INT_MIN again. PoCL treats INT_MIN as poison in abs (LLVM llvm.abs with
    # int_min_is_poison): sign-extending the int gave +2**31, and abs_diff(x, 0) folds into
    # the same abs.
    i = clpy.get_global_id(0)
    o[2 * i] = int64(int32(abs(x[i])))
    o[2 * i + 1] = int64(int32(clpy.abs_diff(x[i], int32(0))))


@clpy.kernel
def abs_of_constant_min(o: Global[int64]):
    # seed 127: abs of a constant LONG_MIN (a lane of a literal vector) folded to -20 on PoCL:
    # poison folds to anything, at every width.
    i = clpy.get_global_id(0)
    o[6 * i] = int64(abs(V.long4(int64(-9223372036854775808)).s1))
    o[6 * i + 1] = int64(abs(int64(-9223372036854775808)))
    o[6 * i + 2] = int64(int32(abs(int32(-2147483648))))
    o[6 * i + 3] = int64(int16(abs(int16(-32768))))
    o[6 * i + 4] = int64(int8(abs(int8(-128))))
    o[6 * i + 5] = int64(clpy.abs_diff(int64(-9223372036854775808), int64(0)))


def test_abs_of_a_constant_min(cl_device: Any) -> None:
    import pyopencl as cl

    want = [-(2**63), -(2**63), -(2**31), -(2**15), -(2**7), -(2**63)] * 2
    for device in ("sim", cl.Context([cl_device])):
        o = np.zeros(12, np.int64)
        _quiet(abs_of_constant_min, (2,), o, device=device)
        assert o.tolist() == want, device


def _quiet(k: Any, grid: tuple[int, ...], *arrays: np.ndarray, device: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k[grid, (1,)](*arrays, device=device)


def test_abs_of_int_min(cl_device: Any) -> None:
    """Seed 3078's kernel: right on the simulator, and on the device through clpy."""
    import pyopencl as cl

    x = np.array([-(2**31), -5, 7, 2**31 - 1], np.int32)
    want = np.repeat([-(2**31), 5, 7, 2**31 - 1], 2)
    for device in ("sim", cl.Context([cl_device])):
        o = np.zeros(8, np.int64)
        _quiet(abs_int_min, (4,), x, o, device=device)
        np.testing.assert_array_equal(o, want, err_msg=str(device))


# One kernel per signed type: each line an abs/abs_diff form the fuzzer makes (Python's abs
# keeps the type; clpy.abs gives the unsigned type), scalar and in a 4-vector, widened to 64
# bits through the signed type (where PoCL's sign extension went wrong) and the unsigned one.
FORMS = (
    ("int64({t}(abs(a)))", lambda a, b: abs(a)),
    ("int64({t}(clpy.abs(a)))", lambda a, b: abs(a)),
    ("int64(clpy.abs(a))", lambda a, b: abs(a)),
    ("int64({t}(clpy.abs_diff(a, b)))", lambda a, b: abs(a - b)),
    ("int64({t}(clpy.abs_diff(a, {t}(0))))", lambda a, b: abs(a)),
    ("int64({t}(clpy.abs_diff({t}(0), a)))", lambda a, b: abs(a)),
    ("int64(clpy.abs_diff(a, b))", lambda a, b: abs(a - b)),
    ("int64({t}(clpy.abs(V.{c}4(a, b, a, b)).x))", lambda a, b: abs(a)),
    ("int64({t}(clpy.abs_diff(V.{c}4(a), V.{c}4(b)).y))", lambda a, b: abs(a - b)),
    ("int64(clpy.abs(V.{c}2(b, a)).y)", lambda a, b: abs(a)),
)


def _kernel(t: str, tmp: Path) -> Any:
    c = SIGNED[t]
    lines = [
        "import clpy\nimport clpy.vectors as V\nfrom clpy import Global, int64, " + t + "\n",
        f"@clpy.kernel\ndef abs_{t}(x: Global[{t}], y: Global[{t}], o: Global[int64]):",
        "    i = clpy.get_global_id(0)",
        "    a = x[i]",
        "    b = y[i]",
    ]
    for k, (form, _) in enumerate(FORMS):
        lines.append(f"    o[i * {len(FORMS)} + {k}] = " + form.format(t=t, c=c))
    src = "\n".join(lines) + "\n"
    return kernel_from_source(src, tmp, f"abs_{t}")


def _case(t: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Edge pairs (MIN against everything) and the spec's results, wrapped to int64 where the
    form goes through the signed type."""
    info = np.iinfo(t)
    edges = [int(info.min), int(info.min) + 1, -1, 0, 1, int(info.max), -5]
    pairs = [(a, b) for a in edges for b in edges]
    x = np.array([a for a, _ in pairs], t)
    y = np.array([b for _, b in pairs], t)
    bits = info.bits
    want = []
    for a, b in pairs:
        for form, f in FORMS:
            v = f(a, b)
            through_signed = form.startswith("int64({t}(")
            if through_signed or bits == 64:  # int64(ulong) wraps as well
                v = v - (1 << bits) if v >= 1 << (bits - 1) else v
            want.append(v)
    return x, y, np.array(want, np.int64)


@pytest.mark.parametrize("t", list(SIGNED))
def test_abs_forms_at_edges(t: str, cl_device: Any, tmp_path: Path) -> None:
    import pyopencl as cl

    k = _kernel(t, tmp_path)
    x, y, want = _case(t)
    for device in ("sim", cl.Context([cl_device])):
        o = np.zeros(len(want), np.int64)
        _quiet(k, (len(x),), x, y, o, device=device)
        bad = np.flatnonzero(o != want)
        assert not len(bad), (device, [FORMS[j % len(FORMS)][0] for j in bad[:3]], o[bad[:3]])


@pytest.mark.parametrize("t", list(SIGNED))
def test_abs_helper_forced_on_this_device(t: str, cl_device: Any, tmp_path: Path) -> None:
    """clpy/emit/lower_abs.py's helpers for every signed type (should a quirk name them),
    scalars and vectors, run on this device."""
    k = _kernel(t, tmp_path)
    dev = next(d for d in clpy.devices() if d.cl_device == cl_device)
    c = SIGNED[t]
    forced = frozenset({f"abs:{c}", f"abs_diff:{c}"})
    info = {**dev.target.info, "lower_builtins": dev.target.info["lower_builtins"] | forced}
    tgt = replace(dev.target, name=f"forced-abs-{c}", info=info)
    src = k.source_for(tgt, line_directives=False)
    for helper in (f"clpy_abs_{c}(", f"clpy_abs_{c}4(", f"clpy_abs_diff_{c}4("):
        assert helper in src, (helper, src)
    x, y, want = _case(t)
    o = np.zeros(len(want), np.int64)
    _quiet(k, (len(x),), x, y, o, device=dev.variant(target=tgt))
    np.testing.assert_array_equal(o, want)


def test_abs_lowered_only_where_the_quirk_says() -> None:
    plain = abs_int_min.source_for("opencl-c-1.2", line_directives=False)
    assert "clpy_abs" not in plain and "abs(x[i])" in plain


RAW_ABS = (
    "__kernel void k(__global const int* x, __global long* o) {\n"
    "    o[0] = (long)(int)abs(x[0]);\n"
    "    o[1] = (long)(int)abs((int)(-2147483647 - 1));\n}"
)


def test_raw_abs_of_int_min(cl_context: Any, cl_queue: Any) -> None:
    """The driver's own: PoCL 3.0 gives +2**31 for (long)(int)abs(INT_MIN), at run time and
    folded (the helper avoids it)."""
    x = np.array([-(2**31)], np.int32)
    o = np.zeros(2, np.int64)
    run_raw(cl_context, cl_queue, RAW_ABS, "k", (1,), None, [x], [o])
    if list(o) != [-(2**31)] * 2:
        platform = cl_context.devices[0].platform.name
        assert "portable computing language" in platform.lower(), o
        pytest.xfail(f"PoCL bug: (long)(int)abs(INT_MIN) gives {list(o)}")
