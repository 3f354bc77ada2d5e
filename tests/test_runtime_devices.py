"""Device listing and selection, device descriptions and targets (vendor quirks), build
errors mapped to Python lines, the program and disk caches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, float32
from clpy.errors import BuildError
from clpy.runtime import devices as devmod
from clpy.runtime.api import clear_caches, get_device
from clpy.runtime.build import PROGRAMS, map_line, parse_log
from clpy.runtime.devices import SIM, Device, Runtime
from clpy.runtime.info import query
from clpy.runtime.quirks import build_std, device_target, quirk_for

# ----------------------------------------------------------------------------- fakes


class _NV:
    def __init__(self, name: str, version: int) -> None:
        self.name = name
        self.version = version


def _v(major: int, minor: int) -> int:
    return (major << 22) | (minor << 12)


class FakePlatform:
    def __init__(self, name: str, vendor: str, version: str) -> None:
        self.name, self.vendor, self.version = name, vendor, version


class FakeDevice:
    """Just the attributes ``clpy.runtime.info.query`` reads."""

    def __init__(self, platform: FakePlatform, name: str, kind: str, c_version: str,
                 all_versions: list[tuple[int, int]] | None = None,
                 features: list[str] | None = None, extensions: str = "",
                 version: str = "OpenCL 3.0", non_uniform: bool | None = None,
                 max_sub_groups: int = 0) -> None:
        import pyopencl as cl

        self.platform = platform
        self.name = name
        self.vendor = platform.vendor
        self.type = {"gpu": cl.device_type.GPU, "cpu": cl.device_type.CPU,
                     "all": cl.device_type.GPU | cl.device_type.CPU}[kind]
        self.opencl_c_version = c_version
        if all_versions is not None:
            self.opencl_c_all_versions = [_NV("OpenCL C", _v(*v)) for v in all_versions]
        if features is not None:
            self.opencl_c_features = [_NV(f, _v(3, 0)) for f in features]
        if non_uniform is not None:
            self.non_uniform_work_group_support = non_uniform
        self.extensions = extensions
        self.version = version
        self.driver_version = "1.0"
        self.local_mem_size = 49152
        self.max_work_group_size = 1024
        self.max_work_item_sizes = [1024, 1024, 64]
        self.address_bits = 64
        self.max_num_sub_groups = max_sub_groups
        self.svm_capabilities = 0
        self.max_constant_buffer_size = 65536
        self.max_compute_units = 132
        self.global_mem_size = 80 * 2**30


NVIDIA = FakePlatform("NVIDIA CUDA", "NVIDIA Corporation", "OpenCL 3.0 CUDA 13.0.88")
POCL = FakePlatform("Portable Computing Language", "The pocl project", "OpenCL 3.0 PoCL 3.0")
H100 = FakeDevice(NVIDIA, "NVIDIA H100 80GB HBM3", "gpu", "OpenCL C 1.2 ",
                  [(1, 0), (1, 1), (1, 2), (3, 0)],
                  ["__opencl_c_int64", "__opencl_c_fp64", "__opencl_c_images",
                   "__opencl_c_3d_image_writes"],
                  "cl_khr_fp64 cl_khr_int64_base_atomics cl_khr_global_int32_base_atomics",
                  non_uniform=True)
POCL_CPU = FakeDevice(POCL, "pthread-Intel(R) Xeon(R)", "cpu", "OpenCL C 1.2 PoCL",
                      [(1, 0), (1, 1), (1, 2), (3, 0)],
                      ["__opencl_c_int64", "__opencl_c_fp64", "__opencl_c_atomic_order_acq_rel",
                       "__opencl_c_atomic_order_seq_cst", "__opencl_c_atomic_scope_device"],
                      "cl_khr_fp64", non_uniform=False)
OLD_GPU = FakeDevice(FakePlatform("Old Vendor", "Old", "OpenCL 2.0"), "Old GPU", "gpu",
                     "OpenCL C 2.0", None, None, "cl_khr_subgroups", version="OpenCL 2.0")
CL12 = FakeDevice(FakePlatform("Legacy", "Legacy", "OpenCL 1.2"), "Legacy CPU", "cpu",
                  "OpenCL C 1.2", None, None, "", version="OpenCL 1.2")


def _runtime(monkeypatch: Any, devs: list[Any]) -> Runtime:
    monkeypatch.setattr(devmod, "_opencl_devices", lambda: list(devs))
    monkeypatch.delenv("CLPY_DEVICE", raising=False)
    return Runtime()


# ----------------------------------------------------------------------------- listing


def test_listing_names_and_descriptions(monkeypatch: Any) -> None:
    rt = _runtime(monkeypatch, [POCL_CPU, H100])
    devs = rt.devices()
    assert [str(d) for d in devs] == [
        "sim", "opencl:Portable Computing Language:pthread-Intel(R) Xeon(R)",
        "opencl:NVIDIA CUDA:NVIDIA H100 80GB HBM3"]
    assert devs[0] is SIM and "sim" in devs
    assert "GPU" in devs[2].description and "132 compute units" in devs[2].description
    assert rt.devices() is devs               # described once, cached


def test_identical_devices_get_numbered_names(monkeypatch: Any) -> None:
    rt = _runtime(monkeypatch, [H100, H100, POCL_CPU])
    names = [d.name for d in rt.devices()]
    assert names[1:3] == ["opencl:NVIDIA CUDA:NVIDIA H100 80GB HBM3",
                          "opencl:NVIDIA CUDA:NVIDIA H100 80GB HBM3 #1"]
    assert rt.find("opencl:nvidia") is rt.devices()[1]
    assert rt.find("opencl:nvidia:#1") is rt.devices()[2]
    assert rt.find(names[2]) is rt.devices()[2]


def test_real_devices_are_listed(cl_device: Any) -> None:
    devs = clpy.devices()
    assert devs[0] == "sim"
    d = get_device(cl_device)
    assert d in devs and d.name.startswith("opencl:")
    assert d.info is not None and d.info.max_work_group_size >= 1
    assert d.info.local_mem_size > 0 and d.info.address_bits in (32, 64)
    assert d.target is not None and d.target.device == d.name


# ----------------------------------------------------------------------------- selection


def test_default_is_first_gpu_then_sim(monkeypatch: Any) -> None:
    assert _runtime(monkeypatch, [POCL_CPU, H100]).current().name.endswith("H100 80GB HBM3")
    assert _runtime(monkeypatch, [POCL_CPU]).current() is SIM


def test_emulators_are_never_the_default_gpu(monkeypatch: Any) -> None:
    grind = FakeDevice(FakePlatform("Oclgrind", "University of Bristol", "OpenCL 1.2"),
                       "Oclgrind Simulator", "gpu", "OpenCL C 1.2")
    multi = FakeDevice(FakePlatform("Odd", "Odd", "OpenCL 1.2"), "Any", "all", "OpenCL C 1.2")
    rt = _runtime(monkeypatch, [grind, multi, POCL_CPU])
    assert [d.info.device_type for d in rt.devices()[1:]] == [  # type: ignore[union-attr]
        "emulator", "other", "cpu"]
    assert rt.current() is SIM
    assert rt.find("opencl:oclgrind").name == "opencl:Oclgrind:Oclgrind Simulator"


def test_no_opencl_driver_means_sim(monkeypatch: Any) -> None:
    import pyopencl as cl

    def no_platforms() -> list[Any]:
        raise cl.LogicError("clGetPlatformIDs failed: PLATFORM_NOT_FOUND_KHR")

    monkeypatch.setattr(cl, "get_platforms", no_platforms)
    monkeypatch.delenv("CLPY_DEVICE", raising=False)
    rt = Runtime()
    assert rt.devices() == [SIM] and rt.current() is SIM
    with pytest.raises(ValueError, match="no OpenCL device"):
        rt.find("opencl")


def test_substring_selection_is_case_insensitive(monkeypatch: Any) -> None:
    rt = _runtime(monkeypatch, [POCL_CPU, H100])
    nv, pocl = rt.devices()[2], rt.devices()[1]
    assert rt.find("opencl:nvidia") is nv
    assert rt.find("OPENCL:NVIDIA") is nv
    assert rt.find("opencl:pocl") is pocl              # platform version "PoCL 3.0"
    assert rt.find("opencl:cpu") is pocl               # device type
    assert rt.find("opencl:gpu") is nv
    assert rt.find("opencl:h100") is nv                # device name
    assert rt.find("opencl:portable:xeon") is pocl     # platform : device
    assert rt.find("opencl:cuda:h100") is nv
    assert rt.find("opencl") is nv                     # first GPU
    assert rt.find(nv.name) is nv                      # the listed name itself
    assert rt.find("sim") is SIM and rt.find(" SIM ") is SIM
    with pytest.raises(ValueError, match="no OpenCL device matches 'opencl:amd'.*'sim'"):
        rt.find("opencl:amd")
    with pytest.raises(ValueError, match="opencl:cuda:xeon"):
        rt.find("opencl:cuda:xeon")
    with pytest.raises(ValueError, match="unknown device 'gpu'"):
        rt.find("gpu")
    with pytest.raises(TypeError, match="device must be"):
        rt.find(3.5)


def test_env_var_and_use_device(monkeypatch: Any) -> None:
    rt = _runtime(monkeypatch, [POCL_CPU, H100])
    monkeypatch.setenv("CLPY_DEVICE", "opencl:pocl")
    assert rt.current().name.startswith("opencl:Portable")
    rt2 = _runtime(monkeypatch, [POCL_CPU, H100])
    monkeypatch.setenv("CLPY_DEVICE", "sim")
    assert rt2.current() is SIM
    assert rt2.select("opencl:nvidia").name.endswith("H100 80GB HBM3")   # beats the env
    assert rt2.current().name.endswith("H100 80GB HBM3")
    assert rt2.select(None) is SIM                        # back to CLPY_DEVICE
    monkeypatch.setenv("CLPY_DEVICE", "opencl:nothing")
    with pytest.raises(ValueError, match="CLPY_DEVICE='opencl:nothing'"):
        _runtime_keep_env(monkeypatch, [POCL_CPU]).current()


def _runtime_keep_env(monkeypatch: Any, devs: list[Any]) -> Runtime:
    monkeypatch.setattr(devmod, "_opencl_devices", lambda: list(devs))
    return Runtime()


def test_public_use_device_and_launch_override(cl_device: Any) -> None:
    before = devmod.RUNTIME._selected
    try:
        d = clpy.use_device(cl_device)
        assert clpy.default_device() is d
        assert clpy.use_device("sim") is SIM and clpy.default_device() is SIM
        y = np.zeros(4, np.float32)
        scale[4](np.ones(4, np.float32), y, device=d)     # device= beats the default
        np.testing.assert_array_equal(y, 3)
    finally:
        devmod.RUNTIME._selected = before


# ----------------------------------------------------------------------------- targets


def test_nvidia_target_uses_cl20_with_collectives() -> None:
    info = query(H100, "opencl:NVIDIA CUDA:H100")
    t = device_target(info)
    assert t.version == (2, 0) and t.std_flag == "-cl-std=CL2.0"
    assert t.has("__opencl_c_work_group_collective_functions")
    assert not t.has("__opencl_c_generic_address_space")
    assert not t.has("__opencl_c_atomic_order_seq_cst")
    assert t.has("cl_khr_fp64") and t.info["non_uniform_work_groups"] is True
    assert "NVIDIA" in str(t.info["quirk"])
    assert t.info["max_global_id"] == 2**31 - 1  # 32-bit global ids (H100, driver 580)


@clpy.kernel
def _wg_mix(x: clpy.Global[clpy.float32], out: clpy.Global[clpy.float32]):
    i = clpy.get_global_id(0)
    out[i] = clpy.work_group_reduce_add(x[i]) + clpy.work_group_reduce_max(x[i])


def test_nvidia_lowers_only_the_collectives_its_driver_gets_wrong() -> None:
    # Measured on an H200 (driver 580.159.04): native reduce_max/min, all and exclusive
    # min/max scans deviate from spec §1.13.15; add stays native.
    src = _wg_mix.source_for(device_target(query(H100, "opencl:NVIDIA CUDA:H100")))
    assert "work_group_reduce_add(x[i])" in src
    assert "work_group_reduce_max(" not in src and "clpy_scratch" in src


def test_pocl_target_uses_cl30_and_cl20_for_program_globals() -> None:
    t = device_target(query(POCL_CPU, "opencl:pocl"))
    assert t.version == (3, 0)
    assert t.has("__opencl_c_atomic_order_seq_cst")
    assert not t.has("__opencl_c_work_group_collective_functions")
    assert build_std(t, {"__opencl_c_atomic_order_seq_cst"}) == (3, 0)
    assert build_std(t, {"__opencl_c_program_scope_global_variables"}) == (2, 0)
    assert t.info["non_uniform_work_groups"] is False
    assert t.info["max_global_id"] is None


def test_cl20_device_without_feature_query_gets_all_cl20_features() -> None:
    info = query(OLD_GPU, "opencl:old")
    assert info.opencl_c_versions == ((1, 0), (1, 1), (1, 2), (2, 0))
    assert info.opencl_c_features is None and info.sub_groups
    t = device_target(info)
    assert t.version == (2, 0)
    assert t.has("__opencl_c_generic_address_space") and t.has("__opencl_c_subgroups")
    assert t.info["non_uniform_work_groups"] is True


def test_cl12_device() -> None:
    t = device_target(query(CL12, "opencl:legacy"))
    assert t.version == (1, 2) and t.features == frozenset({"__opencl_c_int64"})
    assert t.info["non_uniform_work_groups"] is False


def test_real_device_target_matches_its_report(cl_device: Any) -> None:
    d = get_device(cl_device)
    assert d.target is not None and d.info is not None
    q = quirk_for(d.info)
    assert d.target.version in d.info.opencl_c_versions or (q and q.cl_std == d.target.version)
    if d.info.opencl_c_features is not None:
        assert d.info.opencl_c_features <= d.target.features | _dropped(d)


def _dropped(d: Device) -> frozenset[str]:
    q = quirk_for(d.info)  # type: ignore[arg-type]
    return q.drop_features if q else frozenset()


# ----------------------------------------------------------------------------- build errors


@clpy.kernel
def scale(x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    y[i] = x[i] * 3.0


@clpy.kernel
def group_total(x: Global[float32], out: Global[float32]):
    s = clpy.work_group_reduce_add(x[clpy.get_global_id(0)])
    if clpy.get_local_id(0) == 0:
        out[clpy.get_group_id(0)] = s


def test_build_error_maps_to_the_python_line(cl_device: Any) -> None:
    d = get_device(cl_device)
    assert d.target is not None
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(4, np.float32)
    group_total[16, 4](x, out, device=d)    # native (NVIDIA) or lowered (PoCL) collective
    np.testing.assert_array_equal(out, x.reshape(4, 4).sum(axis=1))
    if d.target.has("__opencl_c_work_group_collective_functions"):
        pytest.skip("the device has work-group collectives: nothing to provoke")
    # Claim a feature the device lacks: the emitter calls the native built-in.
    liar = d.variant(target=d.target.with_features(
        "__opencl_c_work_group_collective_functions"))
    out[:] = 0
    with pytest.raises(BuildError) as info:
        group_total[16, 4](x, out, device=liar)
    err = info.value
    line = group_total.py_function.__code__.co_firstlineno + 2   # decorator, def, s = ...
    assert f"{__file__}:{line}" in str(err)
    assert "s = clpy.work_group_reduce_add(x[clpy.get_global_id(0)])" in str(err)
    assert "work_group_reduce_add" in err.log           # type: ignore[attr-defined]
    diag = err.diagnostics[0]                            # type: ignore[attr-defined]
    assert diag.file == __file__ and diag.line == line and diag.severity == "error"
    np.testing.assert_array_equal(out, 0)


@clpy.kernel
def marked(y: Global[float32]):
    i = clpy.get_global_id(0)
    poison_me = 2.0
    y[i] = poison_me


def test_bad_build_option_is_a_build_error_at_the_python_line(cl_device: Any) -> None:
    # A macro that turns a variable name into a syntax error: every compiler rejects it.
    bad = get_device(cl_device).variant(build_options="-Dpoison_me=)")
    y = np.zeros(4, np.float32)
    with pytest.raises(BuildError) as info:
        marked[4](y, device=bad)
    line = marked.py_function.__code__.co_firstlineno + 3      # poison_me = 2.0
    msg = str(info.value)
    assert "-Dpoison_me=)" in msg
    assert f"{__file__}:{line}" in msg, msg
    assert "poison_me = 2.0" in msg
    np.testing.assert_array_equal(y, 0)


def test_log_lines_against_generated_source_are_mapped(tmp_path: Path) -> None:
    py = tmp_path / "user.py"
    py.write_text("a = 1\nb = 2\nc = undefined_thing\n")
    src = ("// header\n"
           f'#line 2 "{py}"\n'
           "int b = 2;\n"
           "int c = undefined_thing;\n")
    assert map_line(src, 3) == (str(py), 2)
    assert map_line(src, 4) == (str(py), 3)
    assert map_line(src, 1) is None
    log = ("<kernel>:4:9: error: use of undeclared identifier 'undefined_thing'\n"
           "<kernel>:1:1: warning: something in the header\n"
           "1 error generated.\n")
    diags = parse_log(log, src)
    assert [(d.severity, d.file, d.line) for d in diags] == [
        ("error", str(py), 3), ("warning", "<kernel>", 1)]
    assert diags[0].python_line == "c = undefined_thing"
    assert diags[1].cl_line == "// header"
    # PoCL's layout: severity first, then file:line:col.
    pocl = parse_log(f"error: {py}:3:5: bad thing", src)[0]
    assert (pocl.file, pocl.line, pocl.message) == (str(py), 3, "bad thing")


# ----------------------------------------------------------------------------- caches


def test_program_cache_and_clear_caches(cl_device: Any) -> None:
    d = get_device(cl_device)

    @clpy.kernel
    def inc(x: Global[float32]):
        x[clpy.get_global_id(0)] += 1.0

    x = np.zeros(4, np.float32)
    inc[4](x, device=d)
    n_programs = len(PROGRAMS)
    inc.clear_cache()                     # a new plan, but the same source: no new build
    inc[4](x, device=d)
    assert len(PROGRAMS) == n_programs
    np.testing.assert_array_equal(x, 2)
    clear_caches()
    assert len(PROGRAMS) == 0 and not inc.launches.plans and not inc._cache
    inc[4](x, device=get_device(cl_device))
    np.testing.assert_array_equal(x, 3)


def test_disk_cache_holds_emitted_sources(cl_device: Any, tmp_path: Path,
                                          monkeypatch: Any) -> None:
    monkeypatch.setenv("CLPY_CACHE_DIR", str(tmp_path))

    @clpy.kernel
    def dbl(x: Global[float32]):
        x[clpy.get_global_id(0)] *= 2.0

    x = np.ones(4, np.float32)
    dbl[4](x, device=get_device(cl_device))
    files = sorted((tmp_path / "sources").glob("dbl-*.cl"))
    assert len(files) == 1
    assert "__kernel void dbl" in files[0].read_text()
    assert files[0].with_suffix(".json").exists()
    clear_caches(disk=True)
    assert not (tmp_path / "sources").exists()


def test_pyopencl_selectors_are_remembered_without_holding_them(cl_device: Any) -> None:
    """A queue passed as ``device=`` is looked up once and carries the answer itself: the
    runtime keeps no reference to it (a program making queues does not pile them up), and a
    reset runtime looks it up again."""
    import sys

    import pyopencl as cl

    rt = Runtime()
    ctx = cl.Context([cl_device])
    q = cl.CommandQueue(ctx)
    refs = sys.getrefcount(q), sys.getrefcount(ctx)
    d = rt.find(q)
    assert d.cl_device == cl_device and rt.find(q) is d and rt.find(ctx) is d
    assert (sys.getrefcount(q), sys.getrefcount(ctx)) == refs
    rt.reset()
    d2 = rt.find(q)
    assert d2 is not d and d2.name == d.name and rt.find(q) is d2
    other = Runtime()  # another runtime's answer on the same queue is not taken
    assert other.find(q) is not d2 and other.find(q).name == d.name
