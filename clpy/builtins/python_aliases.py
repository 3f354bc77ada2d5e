"""Python functions usable in kernels, mapped to OpenCL built-ins (DESIGN.md "Built-ins").

``abs``, ``min``, ``max``, ``int``, ``float`` and ``bool`` keep Python's meaning where it is
well defined (``abs`` keeps the argument's type); ``math.<fn>`` maps to the OpenCL function of
the same meaning. Note ``math.floor``/``math.ceil``/``math.trunc`` return the floating type, as
OpenCL's do, not Python ``int``.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

PYTHON_ALIASES: dict[Any, str] = {
    builtins.abs: "abs",
    builtins.min: "min",
    builtins.max: "max",
    builtins.int: "int",
    builtins.float: "float",
    builtins.bool: "bool",
}

_MATH_SAME = (
    "acos acosh asin asinh atan atan2 atanh ceil copysign cos cosh erf erfc exp expm1 fabs "
    "floor fmod hypot isfinite isinf isnan ldexp lgamma log log10 log1p log2 pow sin sinh sqrt "
    "tan tanh trunc cbrt exp2"
).split()

for _name in _MATH_SAME:
    _fn = getattr(math, _name, None)
    if _fn is not None:
        PYTHON_ALIASES[_fn] = _name
PYTHON_ALIASES[math.gamma] = "tgamma"
