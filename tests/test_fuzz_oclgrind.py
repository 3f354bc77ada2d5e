"""Oclgrind as the fuzzer's third local implementation (``python -m clpy.fuzz --devices
sim,opencl:pocl,opencl:oclgrind``), and the Oclgrind 21.10 bugs the three-way run found.

- Oclgrind lists OpenCL C 3.0 in CL_DEVICE_OPENCL_C_ALL_VERSIONS, but every ``-cl-std=CL3.0``
  build fails: clpy builds OpenCL C 1.2 there (quirks ``cl_std``).
- ``convert_{char,short,int,long}_sat*(NaN)`` give the type's MIN, not 0 (§6.2.3.3; seeds
  500003, 500008): clpy guards the NaN and keeps Oclgrind's own saturation (quirk
  ``float-nan``), because its plain ``convert_T_rtp``/``_rtn`` of a negative value round the
  wrong way (``convert_int_rtp(-0.5f)`` is -1).
- ``add_sat``/``sub_sat``/``mad_sat`` of ``long`` wrap (§6.13.3): spelled out
  (clpy/emit/lower_add_sat.py, lower_mad_sat.py).
- A true lane of an LLVM ``<N x i1>`` vector is -1 or +1 (0 or 255 through a ``zext``)
  depending on whether a vector compare, a folded constant or an inserted scalar compare made
  it, so ``any``/``all``/``select`` of a vector comparison the optimizer folded read false
  (seeds 510801, 510992, 500842, 500893): every vector comparison and vector ``!`` goes
  through ``abs`` (quirk ``opaque_vector_masks``, clpy/emit/lower_vector_mask.py).

The lowered forms are checked here on the test device (PoCL) for every signed type; the
Oclgrind runs happen in a child process (Oclgrind is made visible there only: the main test
process keeps seeing PoCL alone, tests/oclgrind_kernels.py says why). Without Oclgrind those
skip, or fail when ``CI=true``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import clpy
from clpy.fuzz.icd import find_oclgrind_icd, register_oclgrind
from clpy.runtime.info import DeviceInfo
from clpy.runtime.quirks import device_target

REPO = Path(__file__).resolve().parent.parent
SIGNED = {"int8": "char", "int16": "short", "int32": "int", "int64": "long"}


def _oclgrind_info() -> DeviceInfo:
    """What Oclgrind 21.10 reports (pyopencl, this machine)."""
    return DeviceInfo(
        name="opencl:Oclgrind:Oclgrind Simulator", platform="Oclgrind",
        platform_vendor="Oclgrind", platform_version="OpenCL 1.2 (Oclgrind 21.10)",
        device_name="Oclgrind Simulator", device_vendor="University of Bristol",
        device_type="emulator", device_version="OpenCL 1.2 (Oclgrind 21.10)",
        driver_version="21.10", opencl_c_versions=((1, 0), (1, 1), (1, 2), (3, 0)),
        opencl_c_features=None,
        extensions=frozenset({"cl_khr_fp64", "cl_khr_3d_image_writes",
                              "cl_khr_int64_base_atomics"}),
        local_mem_size=32768, max_work_group_size=1024, max_work_item_sizes=(1024,) * 3,
        address_bits=64, sub_groups=False, max_sub_groups=0, non_uniform_work_groups=False,
        svm_capabilities=0, max_constant_buffer_size=65536, max_compute_units=1,
        global_mem_size=2**27,
    )  # fmt: skip


def test_oclgrind_target_is_opencl_c_1_2() -> None:
    tgt = device_target(_oclgrind_info())
    assert tgt.version == (1, 2)
    assert tgt.features == frozenset({"__opencl_c_int64", "__opencl_c_fp64"})
    assert tgt.info["lower_sat_conversions"] == frozenset({"float-nan"})
    assert {"add_sat:long", "sub_sat:long", "mad_sat:long"} <= tgt.info["lower_builtins"]
    assert tgt.info["opaque_vector_masks"] is True


def test_register_oclgrind_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OCL_ICD_VENDORS", raising=False)
    assert register_oclgrind(["sim", "opencl:pocl"]) is None
    assert "OCL_ICD_VENDORS" not in os.environ
    monkeypatch.setenv("OCL_ICD_VENDORS", "/somewhere")
    assert register_oclgrind(["opencl:oclgrind"]) is None  # the caller's choice stands
    monkeypatch.delenv("OCL_ICD_VENDORS")
    monkeypatch.setenv("CLPY_OCLGRIND_ICD", "/nonexistent/liboclgrind-rt-icd.so")
    assert register_oclgrind(["opencl:oclgrind"]) is None  # not installed: nothing changed
    assert "OCL_ICD_VENDORS" not in os.environ


# ------------------------------------------------- the lowered forms, forced on this device


def _kernel(t: str, tmp: Path) -> Any:
    c = SIGNED[t]
    src = (
        "import clpy\nimport clpy.vectors as V\n"
        f"from clpy import Global, int64, {t}\n\n"
        f"@clpy.kernel\ndef sat_{t}(x: Global[{t}], y: Global[{t}], o: Global[int64]):\n"
        "    i = clpy.get_global_id(0)\n"
        "    a = x[i]\n"
        "    b = y[i]\n"
        "    o[4 * i] = int64(clpy.add_sat(a, b))\n"
        "    o[4 * i + 1] = int64(clpy.sub_sat(a, b))\n"
        f"    o[4 * i + 2] = int64(clpy.add_sat(V.{c}4(a, b, a, b), V.{c}4(b)).z)\n"
        f"    o[4 * i + 3] = int64(clpy.sub_sat(V.{c}2(b, a), V.{c}2(b)).y)\n"
    )
    path = tmp / f"sat_{t}.py"
    path.write_text(src)
    mod: dict[str, Any] = {"__name__": f"clpy_test_sat_{t}"}
    exec(compile(src, str(path), "exec"), mod)
    return mod[f"sat_{t}"]


def _sat_case(t: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    info = np.iinfo(t)
    lo, hi = int(info.min), int(info.max)
    edges = [lo, lo + 1, -2, -1, 0, 1, hi - 1, hi, -(hi // 3)]
    pairs = [(a, b) for a in edges for b in edges]
    sat = lambda v: min(max(v, lo), hi)  # noqa: E731
    want = [f(a, b) for a, b in pairs for f in (
        lambda a, b: sat(a + b), lambda a, b: sat(a - b),
        lambda a, b: sat(a + b), lambda a, b: sat(a - b))]  # fmt: skip
    return (np.array([a for a, _ in pairs], t), np.array([b for _, b in pairs], t),
            np.array(want, np.int64))  # fmt: skip


@pytest.mark.parametrize("t", list(SIGNED))
def test_add_sub_sat_lowered_on_this_device(t: str, cl_device: Any, tmp_path: Path) -> None:
    """clpy/emit/lower_add_sat.py's helpers (scalar and vector), forced on this device, and
    the simulator: the spec's saturated sums and differences at every edge pair."""
    k = _kernel(t, tmp_path)
    dev = next(d for d in clpy.devices() if d.cl_device == cl_device)
    c = SIGNED[t]
    lower = dev.target.info["lower_builtins"] | {f"add_sat:{c}", f"sub_sat:{c}"}
    tgt = replace(dev.target, name=f"forced-add-sat-{c}",
                  info={**dev.target.info, "lower_builtins": lower})  # fmt: skip
    src = k.source_for(tgt, line_directives=False)
    for helper in (f"clpy_add_sat_{c}(", f"clpy_sub_sat_{c}(", f"clpy_add_sat_{c}4(",
                   f"clpy_sub_sat_{c}2("):  # fmt: skip
        assert helper in src, (helper, src)
    assert "clpy_add_sat" not in k.source_for("opencl-c-1.2")
    x, y, want = _sat_case(t)
    for device in ("sim", dev.variant(target=tgt)):
        o = np.zeros(len(want), np.int64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            k[(len(x),), (1,)](x, y, o, device=device)
        np.testing.assert_array_equal(o, want, err_msg=str(device))


def test_nan_only_saturation_on_this_device(cl_device: Any, tmp_path: Path) -> None:
    """The ``float-nan`` form (NaN guarded, the device's own saturation otherwise), forced on
    this device: the simulator's bits at every edge value, destination and rounding mode
    (PoCL's own saturation is right but for NaN, like Oclgrind's)."""
    from tests.test_fuzz_conversions import EDGES, _float_kernel, _run

    dev = next(d for d in clpy.devices() if d.cl_device == cl_device)
    tgt = replace(
        dev.target,
        name="forced-float-nan",
        info={**dev.target.info, "lower_sat_conversions": frozenset({"float-nan"})},
    )
    for src_t in ("float32", "float64"):
        k, cases = _float_kernel(src_t, tmp_path)
        text = k.source_for(tgt, line_directives=False)
        assert "return isnan(x) ? 0 : convert_long_sat_rtp(x);" in text
        assert "select(convert_char4_sat_rtn(x), (char4)0, convert_char4(isnan(x)))" in text
        x = np.array(EDGES, src_t)
        sim = _run(k, x, len(cases), "sim")
        got = _run(k, x, len(cases), dev.variant(target=tgt))
        np.testing.assert_array_equal(sim[0], got[0])
        np.testing.assert_array_equal(sim[1], got[1])


# The four fuzz seeds of Oclgrind's vector-mask bug, and its two faces, as one kernel: each
# line is a vector comparison (or !) that clang's -Oz folds into an <N x i1> holding lanes of
# 1 (a constant, or a scalar compare inserted or splatted), or a zext of a vector compare's
# lanes of 0xFF (clpy/emit/lower_vector_mask.py). Launched as 8 work-items in groups of 4.
MASKS_SRC = """
import clpy
import clpy.vectors as V
from clpy import Global, float32, int8, int16, int32, int64, uint8, uint32, uint64


@clpy.kernel
def masks(x: Global[int32], o: Global[int32]):
    i = int32(clpy.get_global_linear_id())
    k = 8 * i
    # 510801: any() of a comparison of a vector chosen by a scalar condition
    big = V.uchar16(uint8(255)) if i <= int32(clpy.get_local_linear_id()) else V.uchar16(uint8(0))
    o[k] = clpy.any(big < V.uchar16(uint8(248)))
    # 510992: select() by a comparison of two splats
    f = -clpy.as_float(i)
    o[k + 1] = clpy.select(V.int3(0), V.int3(31), -V.float3(float32(1e-40)) < V.float3(f)).y
    # 500842: all() of ulong2(0) < ulong2(s, s)
    s = clpy.convert_ulong_sat(int8(3))
    o[k + 2] = clpy.all(V.ulong2(uint64(0)) < V.ulong2(s, s))
    # 500893: select() by a char4 literal (one lane a call) compared with a splat
    c = V.char4(int8(0), int8(2), clpy.convert_char_sat(uint32(2)), int8(127)) >= V.char4(int8(31))
    o[k + 3] = int32(clpy.select(V.uchar4(uint8(1)), V.uchar4(uint8(0)), c).w)
    # -(a < b) of vectors from memory: lanes of 0 or 1 (LLVM: a zext of the i1 vector)
    m = -(clpy.vload4(i, x) < V.int4(5))
    o[k + 4] = m.x + 10 * m.y + 100 * m.z + 1000 * m.w
    # ! of vectors
    n = not V.int2(i, 0)
    o[k + 5] = n.x + 10 * n.y
    o[k + 6] = clpy.any(not V.short8(int16(i)))
    o[k + 7] = clpy.all(V.long2(int64(i)) >= V.long2(0))
"""
MASKS_X = list(range(32))  # vload4(i, x) < 5: all four lanes for i = 0, lane x for i = 1
MASKS_WANT = [
    [0, 31, 1, 0, 1111, -11, 1, 1],
    [0, 31, 1, 0, 1, -10, 0, 1],
    *[[0, 31, 1, 0, 0, -10, 0, 1]] * 2,
    *[[1, 31, 1, 0, 0, -10, 0, 1]] * 4,  # work-group 1: 0 < 248
]


def _masks_kernel(tmp: Path) -> Any:
    path = tmp / "masks.py"
    path.write_text(MASKS_SRC)
    mod: dict[str, Any] = {"__name__": "clpy_test_masks"}
    exec(compile(MASKS_SRC, str(path), "exec"), mod)
    return mod["masks"]


def test_opaque_vector_masks_on_this_device(cl_device: Any, tmp_path: Path) -> None:
    """clpy/emit/lower_vector_mask.py's form, forced on this device, and the simulator: the
    spec's masks (-1/0 lanes; OpenCL C 2.0 §6.3.d/e) for every line of the seeds' kernel.
    Without the quirk a comparison stays plain C."""
    k = _masks_kernel(tmp_path)
    dev = next(d for d in clpy.devices() if d.cl_device == cl_device)
    tgt = replace(dev.target, name="forced-vector-masks",
                  info={**dev.target.info, "opaque_vector_masks": True})  # fmt: skip
    src = k.source_for(tgt, line_directives=False)
    for text in ("any(as_char16(-abs(big < ", "as_int3(-abs(-(float3)", "as_long2(-abs((ulong2)",
                 "-as_int4(-abs(vload4(", "as_int2(-abs(!(int2)(i, 0)))",
                 "as_short8(-abs(!(short8)"):  # fmt: skip
        assert text in src, (text, src)
    assert "abs" not in k.source_for("opencl-c-1.2", line_directives=False)
    x = np.array(MASKS_X, np.int32)
    for device in ("sim", dev.variant(target=tgt)):
        o = np.zeros(64, np.int32)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            k[(8,), (4,)](x, o, device=device)
        assert o.reshape(8, 8).tolist() == MASKS_WANT, str(device)


# ----------------------------------------------------------------- on Oclgrind (a child)

CHILD = r"""
import json, sys, warnings
import numpy as np
from clpy.fuzz.icd import register_oclgrind
register_oclgrind(["opencl:oclgrind"])
import clpy, pyopencl as cl
from clpy import Global, float32, float64, int8, int64, uint64
warnings.simplefilter("ignore")
dev = clpy.get_device("opencl:oclgrind")
out = {"target": dev.target.name}

@clpy.kernel
def seeds(d: Global[uint64], f: Global[float32], o: Global[int64], g: Global[float32]):
    # seed 500003: convert_long_sat_rtp of a NaN double; 500008: convert_char_sat_rtn of NaN
    i = clpy.get_global_id(0)
    o[i] = clpy.convert_long_sat_rtp(clpy.as_double(d[i]))
    g[i] = clpy.convert_float_rtz(clpy.convert_char_sat_rtn(f[i]))

@clpy.kernel
def sats(a: Global[int64], b: Global[int64], o: Global[int64]):
    i = clpy.get_global_id(0)
    o[3 * i] = clpy.add_sat(a[i], b[i])
    o[3 * i + 1] = clpy.sub_sat(a[i], b[i])
    o[3 * i + 2] = clpy.mad_sat(a[i], b[i], a[i])

d = np.array([0xFFFFFFFFFFFFFFFF, 0x7FF8000000000000, 0x3FF8000000000000, 0xC00C000000000000],
             np.uint64)  # NaN, NaN, 1.5, -3.5
f = np.array([np.nan, -0.5, -1.5, 200.0], np.float32)
o = np.zeros(4, np.int64); g = np.zeros(4, np.float32)
seeds[(4,), (1,)](d, f, o, g, device=dev)
out["seeds"] = [o.tolist(), g.tolist()]
m = -2**63
a = np.array([m, 0, 2**63 - 1, m, 5], np.int64); b = np.array([m, m, 1, -1, 7], np.int64)
r = np.zeros(15, np.int64)
sats[(5,), (1,)](a, b, r, device=dev)
out["sats"] = r.tolist()
raw = cl.Program(dev.context, '''
__kernel void k(__global long* o, __global const float* f, __global const long* a) {
    o[0] = convert_int_sat(f[0]);
    o[1] = add_sat(a[0], a[0]);
    o[2] = convert_int_rtp(f[1]);
}''').build()
q = cl.CommandQueue(dev.context)
mf = cl.mem_flags
fb = cl.Buffer(dev.context, mf.READ_ONLY | mf.COPY_HOST_PTR,
               hostbuf=np.array([np.nan, -0.5], np.float32))
ab = cl.Buffer(dev.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.array([m], np.int64))
ob = cl.Buffer(dev.context, mf.WRITE_ONLY, 24)
raw.k(q, (1,), None, ob, fb, ab)
ro = np.zeros(3, np.int64); cl.enqueue_copy(q, ro, ob); q.finish()
out["raw"] = ro.tolist()
for name, text in (("select_cmp", RAW_SELECT_CMP), ("select_cmp_masked", RAW_SELECT_CMP_MASKED)):
    sel = cl.Program(dev.context, text).build()
    so = np.zeros(26, np.int16)
    sb = cl.Buffer(dev.context, mf.WRITE_ONLY, so.nbytes)
    sel.k(q, (26,), (13,), sb)
    cl.enqueue_copy(q, so, sb); q.finish()
    out[name] = so.tolist()
import os
from dataclasses import replace
mpath = os.path.join(os.path.dirname(os.path.abspath(__file__)), "masks_kernel.py")
masks = {"__name__": "clpy_child_masks"}
with open(mpath) as mf_:
    exec(compile(mf_.read(), mpath, "exec"), masks)
raw = dev.variant(target=replace(dev.target, name="oclgrind-no-masks",
                                 info={**dev.target.info, "opaque_vector_masks": False}))
for name, d in (("masks", dev), ("masks_raw", raw)):
    mo = np.zeros(64, np.int32)
    masks["masks"][(8,), (4,)](np.array(MASKS_X, np.int32), mo, device=d)
    out[name] = mo.reshape(8, 8).tolist()
crash = cl.Program(dev.context, RAW_I24).build()
try:
    cl.Kernel(crash, "k")
    out["i24"] = "ok"
except cl.Error as e:
    out["i24"] = str(e).splitlines()[0]
print("RESULT " + json.dumps(out))
"""

# Seed 510801, reduced by hand: any((c ? A : B) < C) is 0 on Oclgrind 21.10 in the work-items
# that take B (0 < 248 in every lane: 1). Clang (-Oz) turns the comparison into a select
# between two folded constant <4 x i1> vectors, and Oclgrind stores a constant's true lane as
# 1 where a vector icmp stores 0xFF (common.cpp getConstantData; WorkItem.cpp INSTRUCTION(icmp),
# `t = result.num > 1 ? -1 : 1`); its sext makes -1 of a set i1 only for a scalar
# (`getPrimitiveSizeInBits() == 1`), so the lanes become +1 and any() reads the sign bit: 0.
# The same holds in Oclgrind 26.03.1 (jrprice/Oclgrind master). clpy writes the mask through
# abs (RAW_SELECT_CMP_MASKED's form; quirk opaque_vector_masks, lower_vector_mask.py).
RAW_SELECT_CMP = """
__kernel void k(__global short* o) {
  int lin = get_global_id(0), lid = get_local_id(0);
  o[lin] = (short)any((lin <= lid ? (int4)(300) : (int4)(0)) < (int4)(248));
}
"""
RAW_SELECT_CMP_MASKED = RAW_SELECT_CMP.replace("any(", "any(as_int4(-abs(").replace(
    ";\n}", "));\n}"
)

# seed 500255, reduced by hand: Oclgrind 21.10 dies creating the kernel ("OCLGRIND FATAL
# ERROR ... Unsupported constant int size: 3 bytes"; LLVM's optimizer made an i24 constant).
# Not avoided: clpy.fuzz.campaign.KNOWN_DEVICE_ERRORS counts it as a known device bug.
RAW_I24 = """
typedef struct { float f0; uchar f1; short f2; } Rec;
short sf2(Rec r) { return r.f2; }
__kernel void k(__global const Rec* in_rec, __global const uchar* u, __global short* o,
                __global const short* in_short) {
  int i = get_global_id(0);
  Rec s1 = in_rec[i];
  uchar16 v9 = vload16(0, u);
  for (int w = 0; w < (i & 7); w++) {
     v9 = select(v9, (uchar16)3, (uchar16)(254, 33, s1.f1, s1.f1, 0, 31, u[i], s1.f1, 255,
                 s1.f1, 1, s1.f1, s1.f1, 255, 1, 64) == (uchar16)3);
  }
  for (int j = 0; j < 3; ++j) {
     s1.f2 = sf2(s1);
     s1.f2 = (s1.f0 > i) ? 3 : in_short[i];
  }
  o[i] = s1.f2 + v9.s3;
}
"""


@pytest.fixture(scope="module")
def oclgrind_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if find_oclgrind_icd() is None:
        msg = "Oclgrind is not installed (scripts/install_oclgrind.sh)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true but {msg}")
        pytest.skip(msg)
    env = {k: v for k, v in os.environ.items() if k != "OCL_ICD_VENDORS"}
    env["OCLGRIND_NUM_THREADS"] = "1"
    script = tmp_path_factory.mktemp("oclgrind") / "child.py"  # clpy reads kernels' source
    consts = {"RAW_I24": RAW_I24, "RAW_SELECT_CMP": RAW_SELECT_CMP, "MASKS_X": MASKS_X,
              "RAW_SELECT_CMP_MASKED": RAW_SELECT_CMP_MASKED}  # fmt: skip
    (script.parent / "masks_kernel.py").write_text(MASKS_SRC)
    script.write_text("".join(f"{k} = {v!r}\n" for k, v in consts.items()) + CHILD)
    r = subprocess.run([sys.executable, str(script)], cwd=REPO, env=env, capture_output=True,
                       text=True, timeout=300)  # fmt: skip
    line = next((x for x in r.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert line is not None, (r.returncode, r.stdout[-2000:], r.stderr[-4000:])
    return json.loads(line[len("RESULT ") :])


def test_oclgrind_through_clpy(oclgrind_run: dict[str, Any]) -> None:
    """The fuzzer's device name finds Oclgrind, builds OpenCL C 1.2, and clpy's results are
    the spec's: NaN saturates to 0, rounding modes kept, long add_sat/sub_sat/mad_sat."""
    assert oclgrind_run["target"].endswith("(OpenCL C 1.2)")
    o, g = oclgrind_run["seeds"]
    assert o == [0, 0, 2, -3]
    assert g == [0.0, -1.0, -2.0, 127.0]  # rtn: toward -inf
    m, mx = -(2**63), 2**63 - 1
    assert oclgrind_run["sats"] == [m, 0, mx, m, mx, 0, mx, mx - 1, mx, m, m + 1, 0, 12, -2, 40]


def test_raw_oclgrind_bugs(oclgrind_run: dict[str, Any]) -> None:
    """Oclgrind's own: convert_int_sat(NaN), add_sat(LONG_MIN, LONG_MIN), convert_int_rtp(-0.5)
    (spec: 0, LONG_MIN, 0)."""
    raw = oclgrind_run["raw"]
    if raw != [0, -(2**63), 0]:
        pytest.xfail(f"Oclgrind 21.10 bugs: {raw} instead of [0, LONG_MIN, 0]")


def test_raw_oclgrind_kernel_creation_crash(oclgrind_run: dict[str, Any]) -> None:
    """Seed 500255's crash, and the fuzzer's entry for it: the error it gives is listed."""
    from clpy.fuzz.campaign import verdict
    from clpy.fuzz.runner import Outcome

    err = oclgrind_run["i24"]
    if err == "ok":
        return  # a fixed Oclgrind
    assert "INVALID_KERNEL_NAME" in err, err
    good = {"o": np.arange(3)}
    sim, pocl = Outcome("sim", good), Outcome("opencl:pocl", good)
    grind = Outcome("opencl:oclgrind", error=f"LogicError: clCreateKernel failed: {err}")
    pairs = [(sim, pocl), (sim, grind)]
    assert verdict([sim, pocl, grind], pairs)[0] == "known"
    bad = Outcome("opencl:pocl", {"o": np.arange(3) + 1})
    assert verdict([sim, bad, grind], [(sim, bad), (sim, grind)])[0] == "mismatch"
    other = Outcome("opencl:pocl", error="LogicError: clCreateKernel failed: INVALID_KERNEL_NAME")
    assert verdict([sim, other, grind], [(sim, other), (sim, grind)])[0] == "error"
    pytest.xfail(f"Oclgrind 21.10 bug: creating the kernel fails ({err})")


def test_oclgrind_vector_masks(oclgrind_run: dict[str, Any]) -> None:
    """Seeds 510801, 510992, 500842, 500893 (and -(a < b), vector !) through clpy on
    Oclgrind: the spec's masks, with the quirk's lowering (clpy/emit/lower_vector_mask.py).
    Without it (the same target, ``opaque_vector_masks`` off) Oclgrind 21.10 gets every
    line wrong: the sext face (+1 read as false: any, select, all, !) and the zext face (255
    for a true lane of -(a < b))."""
    assert oclgrind_run["masks"] == MASKS_WANT
    raw = oclgrind_run["masks_raw"]
    if raw != MASKS_WANT:  # the bug, as measured (a fixed Oclgrind passes above and here)
        assert raw[4][0] == 0 and raw[0][1] == 0 and raw[0][2] == 0 and raw[0][3] == 1, raw
        assert raw[1][4] == 255 and raw[0][5] == 11 and raw[0][6] == 0 and raw[0][7] == 0, raw


def test_raw_oclgrind_any_of_a_selected_vector_comparison(oclgrind_run: dict[str, Any]) -> None:
    """Seed 510801 in hand-written C: work-group 0 takes A (300 < 248: 0), work-group 1 takes
    B (0 < 248: 1). The plain form is wrong on Oclgrind 21.10 (0 for B); the form clpy emits
    there, any(as_int4(-abs(mask))), is right."""
    assert oclgrind_run["select_cmp_masked"] == [0] * 13 + [1] * 13
    got = oclgrind_run["select_cmp"]
    assert got in ([0] * 13 + [1] * 13, [0] * 26), got  # right, or the bug as documented
