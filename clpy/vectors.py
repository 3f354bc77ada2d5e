"""Every OpenCL vector type by its OpenCL name.

``clpy.int8`` and ``clpy.float16`` are the NumPy-style *scalar* aliases (DESIGN.md "Types"), so
OpenCL's 8- and 16-lane vectors of the same names live here::

    from clpy.vectors import int8, float16      # OpenCL int8 (8 x int), float16 (16 x float)
    v = clpy.vectors.float16(0.0)               # in a kernel, too

``clpy.vector(float32, 16)`` builds the same types.
"""

from __future__ import annotations

from clpy.types.catalog import VECTORS_BY_NAME
from clpy.types.core import ScalarType, VectorType

globals().update(VECTORS_BY_NAME)

__all__ = sorted(VECTORS_BY_NAME)


def vector(elem: ScalarType, n: int) -> VectorType:
    """The OpenCL vector of ``n`` (2, 3, 4, 8 or 16) elements of scalar type ``elem``."""
    if not isinstance(elem, ScalarType) or not elem.np_name or elem.is_bool:
        raise TypeError(f"vector elements must be an arithmetic scalar type, not {elem!r}")
    if n not in (2, 3, 4, 8, 16):
        raise ValueError(f"OpenCL vectors have 2, 3, 4, 8 or 16 components, not {n}")
    t = VECTORS_BY_NAME.get(f"{elem.name}{n}")
    if t is None:
        raise TypeError(f"there is no OpenCL vector of {elem.name}")
    return t
