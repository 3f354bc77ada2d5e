"""Code-generation targets: an OpenCL C version plus the optional features it has.

A target is a named profile (``"opencl-c-1.2"``, ``"opencl-c-2.0"``, ``"opencl-c-3.0"``) or is
built from a device description by the runtime. Feature names follow OpenCL C 3.0
(``__opencl_c_*``) and extension names (``cl_khr_*``); the emitter asks the target what it has
and lowers or reports what it lacks.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

# Optional features that OpenCL C 2.0 requires every device to support (OpenCL C 3.0 §6.2.1
# lists them as optional; a 2.0 device has all of them).
CL20_FEATURES = frozenset(
    {
        "__opencl_c_generic_address_space",
        "__opencl_c_program_scope_global_variables",
        "__opencl_c_work_group_collective_functions",
        "__opencl_c_atomic_order_acq_rel",
        "__opencl_c_atomic_order_seq_cst",
        "__opencl_c_atomic_scope_device",
        "__opencl_c_atomic_scope_all_devices",
        "__opencl_c_device_enqueue",
        "__opencl_c_pipes",
        "__opencl_c_read_write_images",
        "__opencl_c_images",
        "__opencl_c_3d_image_writes",
        "__opencl_c_int64",
    }
)
COMMON_EXTENSIONS = frozenset(
    {
        "cl_khr_fp64",
        "cl_khr_int64_base_atomics",
        "cl_khr_int64_extended_atomics",
        "cl_khr_global_int32_base_atomics",
        "cl_khr_global_int32_extended_atomics",
        "cl_khr_local_int32_base_atomics",
        "cl_khr_local_int32_extended_atomics",
        "cl_khr_byte_addressable_store",
    }
)


def _frozen(v: Any) -> Any:
    if isinstance(v, Mapping):
        return TargetInfo(v)
    if isinstance(v, (set, frozenset)):
        return frozenset(_frozen(x) for x in v)
    if isinstance(v, (list, tuple)):
        return tuple(_frozen(x) for x in v)
    return v


class TargetInfo(Mapping[str, Any]):
    """What a device adds to a target (work-group limits, local memory size, forced
    lowering, quirks): an immutable mapping, part of the target's equality and hash, so a
    target is a plain cache key."""

    __slots__ = ("_items", "_hash")

    def __init__(self, items: Mapping[str, Any] | None = None) -> None:
        self._items = {k: _frozen(v) for k, v in sorted((items or {}).items())}
        self._hash = hash(tuple(self._items.items()))

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and dict(self._items) == dict(other.items())

    def __repr__(self) -> str:
        return f"TargetInfo({self._items!r})"


@dataclass(frozen=True)
class Target:
    """What the emitter may use: ``version`` is the OpenCL C version (major, minor)."""

    name: str
    version: tuple[int, int]
    features: frozenset[str] = frozenset()
    extensions: frozenset[str] = frozenset()
    device: str | None = None
    info: Mapping[str, Any] = field(default_factory=TargetInfo)

    def __post_init__(self) -> None:
        if not isinstance(self.info, TargetInfo):
            object.__setattr__(self, "info", TargetInfo(self.info))

    def has(self, feature: str) -> bool:
        if feature.startswith("cl_"):
            return feature in self.extensions
        return feature in self.features

    @property
    def std_flag(self) -> str:
        return f"-cl-std=CL{self.version[0]}.{self.version[1]}"

    def with_features(self, *features: str) -> Target:
        return replace(self, features=self.features | frozenset(features))

    def __str__(self) -> str:
        return self.device or self.name


PROFILES: dict[str, Target] = {
    "opencl-c-1.2": Target(
        "opencl-c-1.2", (1, 2), frozenset({"__opencl_c_int64"}), COMMON_EXTENSIONS
    ),
    "opencl-c-2.0": Target(
        "opencl-c-2.0", (2, 0), CL20_FEATURES, COMMON_EXTENSIONS | {"cl_khr_fp16"}
    ),
    "opencl-c-3.0": Target(
        "opencl-c-3.0", (3, 0), frozenset({"__opencl_c_int64"}), COMMON_EXTENSIONS
    ),
}


def target_of(spec: Any) -> Target:
    """Accept a ``Target``, a profile name, or ``"opencl-c-3.0+feat1+feat2"``."""
    if isinstance(spec, Target):
        return spec
    if isinstance(spec, str):
        base, *extra = spec.split("+")
        t = PROFILES.get(base.strip().lower())
        if t is None:
            raise ValueError(
                f"unknown target {spec!r}; known: {', '.join(PROFILES)} "
                "(add features with '+', e.g. 'opencl-c-3.0+__opencl_c_fp64')"
            )
        feats = frozenset(e.strip() for e in extra if not e.strip().startswith("cl_"))
        exts = frozenset(e.strip() for e in extra if e.strip().startswith("cl_"))
        if "__opencl_c_fp64" in feats:
            exts |= {"cl_khr_fp64"}
        if "cl_khr_subgroups" in exts:  # the 2.0 extension provides the 3.0 feature's calls
            feats |= {"__opencl_c_subgroups"}
        return replace(t, features=t.features | feats, extensions=t.extensions | exts, name=spec)
    raise TypeError(f"target must be a profile name or a clpy Target, not {spec!r}")
