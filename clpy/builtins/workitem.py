"""Work-item functions (spec §1.13.1).

Index types. OpenCL declares these functions ``size_t`` (``uint`` for ``get_work_dim``), an
unsigned type in which ``16 * get_group_id(0) - 2`` wraps to a huge number and
``get_global_id(0) - 1 < 0`` is never true. Python integers do not wrap, so in clpy's typed IR
every work-item function (and every sub-group id/size query) is a *signed* ``int``, whatever
the target: the emitted C converts once at the call, ``(int)get_global_id(0)``. A call may name
another integer type as a last argument: ``clpy.get_global_id(0, clpy.size_t)`` keeps OpenCL's
``size_t``, ``clpy.get_global_id(0, clpy.int64)`` gives a ``long``. The launchers check that the
NDRange fits the types the kernel asks for (clpy/runtime/sizes.py ``check_index_range``): a
launch whose global size plus offset in some dimension, or whose total work-item count where
the kernel uses a linear id, exceeds 2**31 - 1 for an ``int`` index is a ``ValueError`` that
names the kernel and the call to change, never a wrap.
"""

from __future__ import annotations

from typing import Any

from clpy.builtins.registry import Builtin, Lowering, Overload, declare
from clpy.types import catalog as C

# OpenCL C 1.x lacks the linear-id and enqueued-size queries: the emitter spells them with
# 1.x functions there (clpy/emit/lower_builtins.py).
_DIM = (Overload((C.uint,), C.size_t),)
# Appended to each docstring: the result type in kernel code (module docstring).
INDEX_NOTE = (
    " In kernel code a signed ``int`` (emitted ``(int)get_...``); an optional last argument "
    "names another integer type: ``clpy.get_global_id(0, clpy.size_t)``."
)
_NONE_SIZE = (Overload((), C.size_t),)
_NONE_UINT = (Overload((), C.uint),)


def _declare(name: str, *, doc: str, **kwargs: Any) -> Builtin:
    return declare(name, family="work-item", index=True, doc=doc + INDEX_NOTE, **kwargs)


get_work_dim = _declare(
    "get_work_dim",
    overloads=_NONE_UINT,
    doc="Number of dimensions in use (1, 2 or 3).",
)
get_global_size = _declare(
    "get_global_size",
    overloads=_DIM,
    doc="Number of global work-items in dimension ``dimindx``.",
)
get_global_id = _declare(
    "get_global_id",
    overloads=_DIM,
    doc="Global work-item id in dimension ``dimindx`` (includes the global offset).",
)
get_local_size = _declare(
    "get_local_size",
    overloads=_DIM,
    doc="Work-group size in dimension ``dimindx`` (of this work-group, "
    "which may be smaller with non-uniform work-groups).",
)
get_enqueued_local_size = _declare(
    "get_enqueued_local_size",
    overloads=_DIM,
    lowering=Lowering("enqueued_local_size", min_version=(2, 0)),
    doc="The local size given at enqueue in dimension ``dimindx`` (spec §1.13.1).",
)
get_local_id = _declare(
    "get_local_id",
    overloads=_DIM,
    doc="Local work-item id within the work-group in dimension ``dimindx``.",
)
get_num_groups = _declare(
    "get_num_groups",
    overloads=_DIM,
    doc="Number of work-groups in dimension ``dimindx``.",
)
get_group_id = _declare(
    "get_group_id",
    overloads=_DIM,
    doc="Work-group id in dimension ``dimindx``.",
)
get_global_offset = _declare(
    "get_global_offset",
    overloads=_DIM,
    doc="Global offset given at enqueue in dimension ``dimindx``.",
)
get_global_linear_id = _declare(
    "get_global_linear_id",
    overloads=_NONE_SIZE,
    lowering=Lowering("global_linear_id", min_version=(2, 0)),
    doc="Work-item's global id as one linear index (spec §1.13.1).",
)
get_local_linear_id = _declare(
    "get_local_linear_id",
    overloads=_NONE_SIZE,
    lowering=Lowering("local_linear_id", min_version=(2, 0)),
    doc="Work-item's local id as one linear index within its group.",
)
