"""C implementations of clpy's pure built-ins for the native engine (sim/native/).

``c_call(call, args)`` returns a C expression computing ``call`` (a typed ``CallBuiltin``)
from its already-generated argument expressions ``args`` (C text, each of its overload's
parameter type), or None when the native engine does not implement that built-in or overload
(the kernel then runs on the NumPy engine). The expressions use the ``static inline`` functions
of ``prelude.h``, which also defines every OpenCL scalar and vector type name (``uchar``,
``float4`` ...) as a C type. Every implementation gives the NumPy engine's bits
(``sim/builtins/``) for every input.

Work-item queries, barriers, collectives and atomics are not here: the code generator handles
them, since they depend on how work-items are run.
"""

from __future__ import annotations

from collections.abc import Sequence

from clpy.ir.nodes import CallBuiltin
from clpy.types.core import Type


def c_call(call: CallBuiltin, args: Sequence[str]) -> str | None:
    """The C expression for ``call`` with argument expressions ``args``; None: not native."""
    return None


def c_cast(value: str, src: Type, dst: Type) -> str | None:
    """The C expression converting ``value`` (C text of type ``src``) to ``dst`` the way the
    NumPy engine's ``Cast`` does (sim/exprs.py, sim/ops.py), or None when not native."""
    return None
