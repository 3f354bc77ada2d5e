"""Geometric functions (spec §1.13.5, table 13).

``floatn`` here is float, float2, float3, float4 (and the same for double, and half with
cl_khr_fp16); ``cross`` takes only 3- and 4-vectors. The ``fast_`` forms are float only.
"""

from __future__ import annotations

from clpy.builtins.registry import Overload, declare, gentypes
from clpy.types import catalog as C
from clpy.types.core import VectorType, element_of

G = gentypes((C.float_, C.double, C.half), (1, 2, 3, 4))
GF = gentypes((C.float_,), (1, 2, 3, 4))

declare(
    "cross",
    family="geometric",
    overloads=[
        Overload((t, t), t)
        for e in (C.float_, C.double, C.half)
        for t in (VectorType(e, 3), VectorType(e, 4))
    ],
    doc="Cross product of p0.xyz and p1.xyz; the w component of a 4-vector result is 0.",
)
declare(
    "dot",
    family="geometric",
    overloads=[Overload((t, t), element_of(t)) for t in G],
    doc="Dot product p0.x*p1.x + p0.y*p1.y + ... (a scalar).",
)
declare(
    "distance",
    family="geometric",
    overloads=[Overload((t, t), element_of(t)) for t in G],
    doc="length(p0 - p1).",
)
declare(
    "length",
    family="geometric",
    overloads=[Overload((t,), element_of(t)) for t in G],
    doc="Euclidean length sqrt(p.x**2 + p.y**2 + ...), computed without undue overflow.",
)
declare(
    "normalize",
    family="geometric",
    overloads=[Overload((t,), t) for t in G],
    doc="p / length(p): same direction, length 1.",
)
declare(
    "fast_distance",
    family="geometric",
    overloads=[Overload((t, t), C.float_) for t in GF],
    doc="fast_length(p0 - p1).",
)
declare(
    "fast_length",
    family="geometric",
    overloads=[Overload((t,), C.float_) for t in GF],
    doc="half_sqrt(p.x**2 + p.y**2 + ...): a faster, less accurate length.",
)
declare(
    "fast_normalize",
    family="geometric",
    overloads=[Overload((t,), t) for t in GF],
    doc="p * half_rsqrt(p.x**2 + p.y**2 + ...), within 8192 ulp of p / length(p); p "
    "itself if p is all zeros (spec §1.13.5).",
)
