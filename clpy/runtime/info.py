"""What an OpenCL device can do, queried once through pyopencl and kept as a frozen record."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

Version = tuple[int, int]


@dataclass(frozen=True)
class DeviceInfo:
    """A device's capabilities. ``opencl_c_features`` is ``None`` where the driver cannot
    report CL_DEVICE_OPENCL_C_FEATURES (pre-3.0 drivers)."""

    name: str  # "opencl:<platform>:<device>"
    platform: str
    platform_vendor: str
    platform_version: str
    device_name: str
    device_vendor: str
    device_type: str  # "gpu", "cpu", "accelerator", "emulator" or "other"
    device_version: str
    driver_version: str
    opencl_c_versions: tuple[Version, ...]
    opencl_c_features: frozenset[str] | None
    extensions: frozenset[str]
    local_mem_size: int
    max_work_group_size: int
    max_work_item_sizes: tuple[int, ...]
    address_bits: int
    sub_groups: bool
    max_sub_groups: int
    non_uniform_work_groups: bool
    svm_capabilities: int
    max_constant_buffer_size: int
    max_compute_units: int
    global_mem_size: int
    # CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT in CL_DEVICE_SINGLE_FP_CONFIG: the device honours
    # -cl-fp32-correctly-rounded-divide-sqrt (spec §5.8.4.2, "Math Intrinsics Options")
    correctly_rounded_divide_sqrt: bool = False

    @property
    def description(self) -> str:
        """One line: type, OpenCL C versions, compute units, memory."""
        cv = max(self.opencl_c_versions)
        gib = self.global_mem_size / 2**30
        return (
            f"{self.device_type.upper()} {self.device_name.strip()} on "
            f"{self.platform.strip()}: OpenCL C {cv[0]}.{cv[1]}, "
            f"{self.max_compute_units} compute units, {gib:.1f} GiB, "
            f"local memory {self.local_mem_size // 1024} KiB"
        )


def _get(dev: Any, attr: str, default: Any) -> Any:
    try:
        return getattr(dev, attr)
    except Exception:  # noqa: BLE001 - a driver that does not know a query
        return default


def _version_of(text: str) -> Version | None:
    m = re.search(r"(\d+)\.(\d+)", text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _cl_version(packed: int) -> Version:
    """CL_MAKE_VERSION: major in the top 10 bits, minor in the next 10."""
    return (packed >> 22, (packed >> 12) & 0x3FF)


# Platforms that emulate a device in software (checkers, debuggers): never the default GPU.
EMULATORS: tuple[str, ...] = ("oclgrind",)


def _device_type(dev: Any) -> str:
    """ "gpu", "cpu", "accelerator", "emulator" or "other". A device claiming several kinds at
    once (emulators answer every query) is "other"."""
    import pyopencl as cl

    plat = str(_get(dev.platform, "name", "")).lower()
    if any(e in plat for e in EMULATORS):
        return "emulator"
    t = int(_get(dev, "type", 0))
    kinds = t & (cl.device_type.GPU | cl.device_type.CPU | cl.device_type.ACCELERATOR)
    if kinds & (kinds - 1):
        return "other"
    if t & cl.device_type.GPU:
        return "gpu"
    if t & cl.device_type.CPU:
        return "cpu"
    if t & cl.device_type.ACCELERATOR:
        return "accelerator"
    return "other"


def opencl_c_versions(dev: Any) -> tuple[Version, ...]:
    """Every OpenCL C version the compiler accepts (ALL_VERSIONS on 3.0, else ≤ the one)."""
    allv = _get(dev, "opencl_c_all_versions", None)
    out: set[Version] = set()
    if allv:
        out = {_cl_version(int(nv.version)) for nv in allv}
    one = _version_of(str(_get(dev, "opencl_c_version", ""))) or (1, 2)
    if not out:
        out = {(1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2), (3, 0)}
        out = {v for v in out if v <= one}
    out.add(one)
    return tuple(sorted(out))


_CORRECTLY_ROUNDED_DIVIDE_SQRT = 1 << 7  # cl_device_fp_config bit (CL/cl.h)


def query(dev: Any, name: str) -> DeviceInfo:
    """Query everything clpy needs from a pyopencl device."""
    plat = dev.platform
    feats_raw = _get(dev, "opencl_c_features", None)
    feats = frozenset(str(nv.name) for nv in feats_raw) if feats_raw else None
    ext = frozenset(str(_get(dev, "extensions", "")).split())
    dev_version = str(_get(dev, "version", ""))
    dv = _version_of(dev_version) or (1, 2)
    non_uniform = bool(_get(dev, "non_uniform_work_group_support", dv[0] == 2))
    max_sg = int(_get(dev, "max_num_sub_groups", 0) or 0)
    return DeviceInfo(
        name=name,
        platform=str(plat.name),
        platform_vendor=str(_get(plat, "vendor", "")),
        platform_version=str(_get(plat, "version", "")),
        device_name=str(dev.name),
        device_vendor=str(_get(dev, "vendor", "")),
        device_type=_device_type(dev),
        device_version=dev_version,
        driver_version=str(_get(dev, "driver_version", "")),
        opencl_c_versions=opencl_c_versions(dev),
        opencl_c_features=feats,
        extensions=ext,
        local_mem_size=int(_get(dev, "local_mem_size", 0)),
        max_work_group_size=int(_get(dev, "max_work_group_size", 1)),
        max_work_item_sizes=tuple(int(x) for x in _get(dev, "max_work_item_sizes", (1, 1, 1))),
        address_bits=int(_get(dev, "address_bits", 64)),
        sub_groups=max_sg > 0 or "cl_khr_subgroups" in ext,
        max_sub_groups=max_sg,
        non_uniform_work_groups=non_uniform,
        svm_capabilities=int(_get(dev, "svm_capabilities", 0) or 0),
        max_constant_buffer_size=int(_get(dev, "max_constant_buffer_size", 65536)),
        max_compute_units=int(_get(dev, "max_compute_units", 1)),
        global_mem_size=int(_get(dev, "global_mem_size", 0)),
        correctly_rounded_divide_sqrt=bool(
            int(_get(dev, "single_fp_config", 0) or 0) & _CORRECTLY_ROUNDED_DIVIDE_SQRT
        ),
    )
