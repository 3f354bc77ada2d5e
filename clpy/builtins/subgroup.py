"""Sub-group functions (cl_khr_subgroups / OpenCL C 3.0 ``__opencl_c_subgroups``).

Native calls where the target has sub-groups. Elsewhere clpy uses the extension's degenerate
case, one sub-group per work-group: ``get_sub_group_size()`` is the work-group size,
``get_num_sub_groups()`` 1, ``get_sub_group_local_id()`` the linear local id, and the
collectives lower to the work-group code (clpy/emit/lower_collectives.py). The simulator's
sub-group size is configurable; compare it with such devices using a sub-group size equal to
the work-group size. The pipe reservation functions are not declared (clpy has no pipe types).
"""

from __future__ import annotations

from clpy.builtins.registry import Collective, Lowering, Overload, declare
from clpy.builtins.sync import BOTH_FENCES
from clpy.builtins.workgroup import declare_collectives
from clpy.builtins.workitem import INDEX_NOTE
from clpy.types import catalog as C

SG_FEATURE = "__opencl_c_subgroups"


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
INFO = {
    name: declare(
        name,
        family="sub-group",
        doc=doc + INDEX_NOTE,
        overloads=[Overload((), C.uint)],
        features=frozenset({SG_FEATURE}),
        lowering=Lowering("collective"),
        collective=Collective("sg", "info"),
        index=True,  # a signed int in kernel code, as the work-item ids (workitem.py)
    )
    for name, doc in _INFO.items()
}

sub_group_barrier = declare(
    "sub_group_barrier",
    family="sub-group",
    overloads=[Overload((C.uint,), C.void), Overload((C.uint, C.int_), C.void)],
    const_args=frozenset({0, 1}),
    uniform=True,
    features=frozenset({SG_FEATURE}),
    defaults=(BOTH_FENCES,),
    lowering=Lowering("collective"),
    collective=Collective("sg", "barrier"),
    doc="All work-items of the sub-group wait here (a work-group barrier where one sub-group "
    "spans the work-group).",
)

SUB_GROUP = declare_collectives("sg", "sub_group", SG_FEATURE, "sub-group")
