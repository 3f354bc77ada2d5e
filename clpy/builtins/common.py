"""Common functions (spec §1.13.4, table 12), and ``min``/``max``/``clamp`` for all types.

``gentype`` here is float, double (and half with cl_khr_fp16) and their vectors. Where the spec
lists a vector-with-scalar form (``clamp(float4, float, float)``, ``step(float, float4)`` …)
it is declared too. ``min``, ``max`` and ``clamp`` exist both as integer functions (§1.13.3)
and as common functions (§1.13.4); each is one built-in (family ``integer/common``) whose
overloads cover both.
"""

from __future__ import annotations

from clpy.builtins.registry import Lowering, Overload, declare, floatn, gentypes
from clpy.types import catalog as C
from clpy.types.core import Type, VectorType

F = floatn()
# int first: a weak integer literal (``clz(5)``) then resolves to int, not char.
I = gentypes((C.int_, C.uint, C.long, C.ulong, C.char, C.uchar, C.short, C.ushort))
_ALL = F + I  # floats first: a weak literal pair resolves to the float forms


def _vectors(ts: list[Type]) -> list[VectorType]:
    return [t for t in ts if isinstance(t, VectorType)]


declare(
    "min",
    family="integer/common",
    overloads=[Overload((t, t), t) for t in _ALL]
    + [Overload((t, t.elem), t) for t in _vectors(_ALL)],
    # computed in 32 bits where a driver gets a narrow one wrong (quirks: NVIDIA "min:short")
    lowering=Lowering("narrow_minmax"),
    doc="y if y < x, otherwise x (component-wise; the second argument may be a scalar "
    "for vector x). For floats the spec leaves NaN and infinite arguments undefined "
    "(§1.13.4) and devices differ in which of two equal zeros they return; the simulator "
    "gives fmin's result (a NaN argument ignored, y for equal arguments: min(+0, -0) is "
    "-0, as PoCL). Use fmin for IEEE NaN handling on every device.",
)
declare(
    "max",
    family="integer/common",
    overloads=[Overload((t, t), t) for t in _ALL]
    + [Overload((t, t.elem), t) for t in _vectors(_ALL)],
    # computed in 32 bits where a driver gets a narrow one wrong (quirks: NVIDIA "min:short")
    lowering=Lowering("narrow_minmax"),
    doc="y if x < y, otherwise x (component-wise; the second argument may be a scalar "
    "for vector x). For floats the spec leaves NaN and infinite arguments undefined "
    "(§1.13.4) and devices differ in which of two equal zeros they return; the simulator "
    "gives fmax's result (a NaN argument ignored, y for equal arguments: max(-0, +0) is "
    "+0, as PoCL). Use fmax for IEEE NaN handling on every device.",
)
declare(
    "clamp",
    family="integer/common",
    overloads=[Overload((t, t, t), t) for t in _ALL]
    + [Overload((t, t.elem, t.elem), t) for t in _vectors(_ALL)],
    lowering=Lowering("narrow_minmax"),
    doc="min(max(x, minval), maxval) (fmin/fmax for floats); undefined if minval > "
    "maxval. The bounds may be scalars for vector x.",
)

declare(
    "degrees",
    family="common",
    overloads=[Overload((t,), t) for t in F],
    doc="Radians to degrees: (180 / pi) * radians.",
)
declare(
    "radians",
    family="common",
    overloads=[Overload((t,), t) for t in F],
    doc="Degrees to radians: (pi / 180) * degrees.",
)
declare(
    "sign",
    family="common",
    overloads=[Overload((t,), t) for t in F],
    doc="1.0 if x > 0, -1.0 if x < 0, x itself for +0.0 and -0.0, and 0.0 for NaN.",
)
declare(
    "mix",
    family="common",
    overloads=[Overload((t, t, t), t) for t in F]
    + [Overload((t, t, t.elem), t) for t in _vectors(F)],
    doc="Linear blend x + (y - x) * a, a in [0, 1] (a may be a scalar for vector x, y).",
)
declare(
    "step",
    family="common",
    overloads=[Overload((t, t), t) for t in F] + [Overload((t.elem, t), t) for t in _vectors(F)],
    doc="0.0 if x < edge, otherwise 1.0 (edge may be a scalar for vector x).",
)
declare(
    "smoothstep",
    family="common",
    overloads=[Overload((t, t, t), t) for t in F]
    + [Overload((t.elem, t.elem, t), t) for t in _vectors(F)],
    doc="Hermite interpolation t*t*(3 - 2*t), t = clamp((x - edge0) / (edge1 - edge0), 0, "
    "1): 0.0 at or below edge0, 1.0 at or above edge1 (edges may be scalars).",
)
