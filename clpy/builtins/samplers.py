"""Samplers and the image constants of OpenCL C (spec §1.13.14: sampler descriptor, channel
orders and data types returned by the image query functions).

A constant sampler is made once, on the host or in a kernel, with keyword arguments::

    SMP = clpy.sampler(normalized=True, address=clpy.REPEAT, filter=clpy.LINEAR)

    @clpy.kernel
    def k(img: clpy.Image2D, out: Global[clpy.float4]):
        near = clpy.sampler(address=clpy.CLAMP_TO_EDGE)      # in the kernel: a constant too
        out[0] = clpy.read_imagef(img, SMP, clpy.float2(0.5, 0.5)) + clpy.read_imagef(
            img, near, clpy.int2(0, 0))

Each distinct sampler is emitted once, at program scope, as
``__constant sampler_t clpy_sampler_<...> = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_REPEAT
| CLK_FILTER_LINEAR;``. The same object is what the host passes for a ``clpy.Sampler``
parameter.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from clpy.builtins.constants import CONSTANTS, NamedConstant
from clpy.ir.nodes import Const, NamedConst
from clpy.types import catalog as C
from clpy.types.catalog import sampler_t


def _const(name: str, value: int) -> NamedConstant:
    c = NamedConstant(name, value, C.int_)
    CONSTANTS[name] = c
    return c


# Sampler bit-fields; the values are clang's (opencl-c-base.h). Kernels use the names.
CLK_NORMALIZED_COORDS_FALSE = _const("CLK_NORMALIZED_COORDS_FALSE", 0)
CLK_NORMALIZED_COORDS_TRUE = _const("CLK_NORMALIZED_COORDS_TRUE", 1)
ADDRESS_MODES: dict[str, NamedConstant] = {
    "NONE": _const("CLK_ADDRESS_NONE", 0),
    "CLAMP_TO_EDGE": _const("CLK_ADDRESS_CLAMP_TO_EDGE", 2),
    "CLAMP": _const("CLK_ADDRESS_CLAMP", 4),
    "REPEAT": _const("CLK_ADDRESS_REPEAT", 6),
    "MIRRORED_REPEAT": _const("CLK_ADDRESS_MIRRORED_REPEAT", 8),
}
FILTER_MODES: dict[str, NamedConstant] = {
    "NEAREST": _const("CLK_FILTER_NEAREST", 0x10),
    "LINEAR": _const("CLK_FILTER_LINEAR", 0x20),
}

# Channel orders and data types (values of the OpenCL API's CL_* enums, which the CLK_*
# constants of get_image_channel_order / get_image_channel_data_type equal).
CHANNEL_ORDERS: dict[str, int] = {
    "R": 0x10B0,
    "A": 0x10B1,
    "RG": 0x10B2,
    "RA": 0x10B3,
    "RGB": 0x10B4,
    "RGBA": 0x10B5,
    "BGRA": 0x10B6,
    "ARGB": 0x10B7,
    "INTENSITY": 0x10B8,
    "LUMINANCE": 0x10B9,
    "Rx": 0x10BA,
    "RGx": 0x10BB,
    "RGBx": 0x10BC,
    "DEPTH": 0x10BD,
    "sRGB": 0x10BF,
    "sRGBx": 0x10C0,
    "sRGBA": 0x10C1,
    "sBGRA": 0x10C2,
    "ABGR": 0x10C3,
}
CHANNEL_TYPES: dict[str, int] = {
    "SNORM_INT8": 0x10D0,
    "SNORM_INT16": 0x10D1,
    "UNORM_INT8": 0x10D2,
    "UNORM_INT16": 0x10D3,
    "UNORM_SHORT_565": 0x10D4,
    "UNORM_SHORT_555": 0x10D5,
    "UNORM_INT_101010": 0x10D6,
    "SIGNED_INT8": 0x10D7,
    "SIGNED_INT16": 0x10D8,
    "SIGNED_INT32": 0x10D9,
    "UNSIGNED_INT8": 0x10DA,
    "UNSIGNED_INT16": 0x10DB,
    "UNSIGNED_INT32": 0x10DC,
    "HALF_FLOAT": 0x10DD,
    "FLOAT": 0x10DE,
    "UNORM_INT24": 0x10DF,
}
for _n, _v in CHANNEL_ORDERS.items():
    _const(f"CLK_{_n}", _v)
for _n, _v in CHANNEL_TYPES.items():
    _const(f"CLK_{_n}", _v)

# clpy.sampler(address=clpy.CLAMP, filter=clpy.LINEAR): the short names of the issue.
SHORT_NAMES: dict[str, NamedConstant] = {
    "ADDRESS_NONE": ADDRESS_MODES["NONE"],
    "CLAMP_TO_EDGE": ADDRESS_MODES["CLAMP_TO_EDGE"],
    "CLAMP": ADDRESS_MODES["CLAMP"],
    "REPEAT": ADDRESS_MODES["REPEAT"],
    "MIRRORED_REPEAT": ADDRESS_MODES["MIRRORED_REPEAT"],
    "NEAREST": FILTER_MODES["NEAREST"],
    "LINEAR": FILTER_MODES["LINEAR"],
}

_ADDRESS_BY_VALUE = {c.value: name for name, c in ADDRESS_MODES.items()}
_FILTER_BY_VALUE = {c.value: name for name, c in FILTER_MODES.items()}


@dataclass(frozen=True)
class SamplerSpec:
    """A sampler: normalized coordinates or not, addressing mode (``NONE CLAMP_TO_EDGE CLAMP
    REPEAT MIRRORED_REPEAT``) and filter (``NEAREST LINEAR``). Made by ``clpy.sampler``."""

    normalized: bool = False
    address: str = "CLAMP_TO_EDGE"
    filter: str = "NEAREST"

    def __post_init__(self) -> None:
        if self.address not in ADDRESS_MODES:
            raise ValueError(f"unknown sampler addressing mode {self.address!r}")
        if self.filter not in FILTER_MODES:
            raise ValueError(f"unknown sampler filter mode {self.filter!r}")
        if self.address in ("REPEAT", "MIRRORED_REPEAT") and not self.normalized:
            raise ValueError(
                f"clpy.sampler(address={self.address}) needs normalized=True: the spec leaves "
                "repeat addressing of unnormalized coordinates undefined (spec §1.13.14)"
            )

    @property
    def bits(self) -> int:
        return (
            int(self.normalized)
            | ADDRESS_MODES[self.address].value
            | FILTER_MODES[self.filter].value
        )

    @property
    def flags_text(self) -> str:
        """The initializer in OpenCL C: ``CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_... | ...``."""
        norm = "TRUE" if self.normalized else "FALSE"
        return (
            f"CLK_NORMALIZED_COORDS_{norm} | {ADDRESS_MODES[self.address].name} | "
            f"{FILTER_MODES[self.filter].name}"
        )

    @property
    def c_name(self) -> str:
        """The program-scope constant that holds this sampler in emitted C."""
        norm = "norm" if self.normalized else "unnorm"
        return f"clpy_sampler_{norm}_{self.address.lower()}_{self.filter.lower()}"

    @classmethod
    def from_bits(cls, bits: int) -> SamplerSpec:
        return cls(bool(bits & 1), _ADDRESS_BY_VALUE[bits & 0xE], _FILTER_BY_VALUE[bits & 0x30])

    def __repr__(self) -> str:
        return (
            f"clpy.sampler(normalized={self.normalized}, address=clpy.{_short(self.address)}, "
            f"filter=clpy.{self.filter})"
        )

    def as_expr(self, loc: Any) -> NamedConst:
        """The kernel-side constant (a ``sampler_t`` named by ``c_name``)."""
        return NamedConst(sampler_t, loc, self.c_name, self.bits)


def _short(address: str) -> str:
    return "ADDRESS_NONE" if address == "NONE" else address


def _mode(value: Any, table: dict[str, NamedConstant], what: str) -> str:
    if isinstance(value, NamedConstant):
        value = value.value
    if isinstance(value, str) and value.upper() in table:
        return value.upper()
    for name, c in table.items():
        if isinstance(value, int) and not isinstance(value, bool) and value == c.value:
            return name
    names = ", ".join(f"clpy.{_short(n)}" for n in table)
    raise ValueError(f"clpy.sampler({what}=...) takes one of {names}, not {value!r}")


def sampler(
    normalized: bool = False, address: Any = "CLAMP_TO_EDGE", filter: Any = "NEAREST"
) -> SamplerSpec:
    """A constant sampler (spec §1.13.14, Table 21): ``normalized`` coordinates or not, an
    addressing mode (``clpy.ADDRESS_NONE CLAMP_TO_EDGE CLAMP REPEAT MIRRORED_REPEAT``) and a
    filter (``clpy.NEAREST LINEAR``). Usable in kernels (emitted as a ``__constant sampler_t``)
    and passed from the host for a ``clpy.Sampler`` parameter."""
    if not isinstance(normalized, (bool, int)):
        raise TypeError(f"clpy.sampler(normalized=...) takes a bool, not {normalized!r}")
    return SamplerSpec(
        bool(normalized),
        _mode(address, ADDRESS_MODES, "address"),
        _mode(filter, FILTER_MODES, "filter"),
    )


def _sampler_call(builder: Any, node: ast.Call) -> NamedConst:
    """``clpy.sampler(...)`` in kernel code: its arguments are compile-time constants."""
    names = ("normalized", "address", "filter")
    if len(node.args) > 3:
        builder.state.fail(node, "clpy.sampler takes at most 3 arguments")
    given: dict[str, Any] = {}
    pairs = [(names[i], a) for i, a in enumerate(node.args)] + [
        (str(k.arg), k.value) for k in node.keywords
    ]
    for name, a in pairs:
        if name not in names:
            builder.state.fail(a, f"clpy.sampler has no argument {name!r}")
        v = builder.value(a)
        if isinstance(v, (Const, NamedConst)):
            given[name] = v.value
        elif hasattr(v, "value") and not hasattr(v, "type"):
            given[name] = v.value
        else:
            builder.state.fail(a, f"clpy.sampler({name}=...) must be a compile-time constant")
    try:
        spec = sampler(**given)
    except (TypeError, ValueError) as e:
        builder.state.fail(node, str(e))
    return spec.as_expr(builder.state.loc(node))


sampler.__clpy_call__ = _sampler_call  # type: ignore[attr-defined]
sampler.__clpy_accepts_keywords__ = True  # type: ignore[attr-defined]
