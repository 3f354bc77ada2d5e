"""``Kernel.sub_group_info``: the sub-group geometry of a launch, asked of the device.

A runtime query (it builds the kernel for an OpenCL device, through the program cache), so it
lives with the runtime, not with the built-in declarations.
"""

from __future__ import annotations

import math
from typing import Any

import clpy.sim as sim_api
from clpy.builtins.subgroup import SG_FEATURE
from clpy.runtime.build import PROGRAMS
from clpy.runtime.devices import RUNTIME


def sub_group_info(kernel: Any, device: Any, local_size: Any, **types: Any) -> tuple[int, int]:
    """``(max sub-group size, number of sub-groups)`` of ``kernel`` launched with
    ``local_size`` on ``device`` (``k.sub_group_info(device, local_size)``).

    The simulator answers from ``clpy.sim.config(sub_group_size=...)``; an OpenCL device with
    sub-groups through ``clGetKernelSubGroupInfo`` (pyopencl ``Kernel.get_sub_group_info``);
    a device without sub-groups with the degenerate case clpy lowers to: one sub-group of the
    whole work-group.
    """
    ls = tuple(local_size) if isinstance(local_size, (tuple, list)) else (int(local_size),)
    items = math.prod(int(v) for v in ls)
    if items <= 0:
        raise ValueError(f"sub_group_info: local_size {local_size!r} must be positive")
    dev = RUNTIME.find(device)
    if dev.is_sim:
        sg = min(int(sim_api.current().sub_group_size), items)
        return sg, -(-items // sg)
    tgt = dev.target
    if tgt is None or not (tgt.has(SG_FEATURE) or tgt.has("cl_khr_subgroups")):
        return items, 1
    import pyopencl as cl  # optional dependency: only for OpenCL devices

    spec = kernel.specialize(**types)
    src = spec.source_for(tgt)
    name = spec.function.name
    options = " ".join((tgt.std_flag, *dev.build_options))
    prg = PROGRAMS.get(dev.context, dev.cl_device, src, options, name, str(dev))
    knl = cl.Kernel(prg, name)
    info = cl.kernel_sub_group_info
    size: Any = knl.get_sub_group_info(dev.cl_device, info.MAX_SUB_GROUP_SIZE_FOR_NDRANGE, ls)
    count: Any = knl.get_sub_group_info(dev.cl_device, info.SUB_GROUP_COUNT_FOR_NDRANGE, ls)
    return int(size), int(count)
