"""Sub-group functions (cl_khr_subgroups / OpenCL C 3.0 ``__opencl_c_subgroups``).

Native calls where the target has sub-groups. Elsewhere clpy uses the extension's degenerate
case, one sub-group per work-group: ``get_sub_group_size()`` is the work-group size,
``get_num_sub_groups()`` 1, ``get_sub_group_local_id()`` the linear local id, and the
collectives lower to the work-group code (clpy/emit/lower_collectives.py). The simulator's
sub-group size is configurable; compare it with such devices using a sub-group size equal to
the work-group size. The pipe reservation functions are not declared (clpy has no pipe types).
"""

from __future__ import annotations

from typing import Any

from clpy.builtins.registry import Overload, declare
from clpy.builtins.sync import BOTH_FENCES
from clpy.builtins.workgroup import declare_collectives
from clpy.types import catalog as C

SG_FEATURE = "__opencl_c_subgroups"


def _lower(ex: Any, call: Any, tgt: Any) -> str:
    from clpy.emit.lower_collectives import lower_collective

    return lower_collective(ex, call, tgt)


_INFO = {
    "get_sub_group_size": "Number of work-items in this sub-group (the last one of a "
                          "work-group may be smaller).",
    "get_max_sub_group_size": "Largest sub-group size of the dispatch.",
    "get_num_sub_groups": "Number of sub-groups in this work-group.",
    "get_enqueued_num_sub_groups": "Number of sub-groups of a work-group of the enqueued "
                                   "local size.",
    "get_sub_group_id": "This work-item's sub-group id within the work-group (0 ...).",
    "get_sub_group_local_id": "This work-item's id within its sub-group (0 ...).",
}
INFO = {name: declare(name, family="sub-group", doc=doc, overloads=[Overload((), C.uint)],
                      features=frozenset({SG_FEATURE}),
                      attrs={"lower": _lower, "collective": ("sg", "info", "")})
        for name, doc in _INFO.items()}

sub_group_barrier = declare(
    "sub_group_barrier", family="sub-group",
    overloads=[Overload((C.uint,), C.void), Overload((C.uint, C.int_), C.void)],
    const_args=frozenset({0, 1}), uniform=True, features=frozenset({SG_FEATURE}),
    attrs={"defaults": (BOTH_FENCES,), "lower": _lower, "collective": ("sg", "barrier", "")},
    doc="All work-items of the sub-group wait here (a work-group barrier where one sub-group "
        "spans the work-group).")

SUB_GROUP = declare_collectives("sg", "sub_group", SG_FEATURE, "sub-group")


def sub_group_info(kernel: Any, device: Any, local_size: Any, **types: Any) -> tuple[int, int]:
    """``(max sub-group size, number of sub-groups)`` of ``kernel`` launched with
    ``local_size`` on ``device`` (``k.sub_group_info(device, local_size)``).

    The simulator answers from ``clpy.sim.config(sub_group_size=...)``; an OpenCL device with
    sub-groups through ``clGetKernelSubGroupInfo`` (pyopencl ``Kernel.get_sub_group_info``);
    a device without sub-groups with the degenerate case clpy lowers to: one sub-group of the
    whole work-group.
    """
    import math

    from clpy.runtime.api import get_device

    ls = tuple(local_size) if isinstance(local_size, (tuple, list)) else (int(local_size),)
    items = math.prod(int(v) for v in ls)
    if items <= 0:
        raise ValueError(f"sub_group_info: local_size {local_size!r} must be positive")
    dev = get_device(device)
    if dev.is_sim:
        from sim.config import current

        sg = min(int(current().sub_group_size), items)
        return sg, -(-items // sg)
    tgt = dev.target
    if tgt is None or not (tgt.has(SG_FEATURE) or tgt.has("cl_khr_subgroups")):
        return items, 1
    import pyopencl as cl

    spec = kernel.specialize(**types)
    src = spec.source_for(tgt)
    prg = cl.Program(dev.context, src).build(options=[tgt.std_flag, *dev.build_options])
    knl = cl.Kernel(prg, spec.function.name)
    info = cl.kernel_sub_group_info
    size: Any = knl.get_sub_group_info(dev.cl_device, info.MAX_SUB_GROUP_SIZE_FOR_NDRANGE, ls)
    count: Any = knl.get_sub_group_info(dev.cl_device, info.SUB_GROUP_COUNT_FOR_NDRANGE, ls)
    return int(size), int(count)
