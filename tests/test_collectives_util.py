"""Helpers for the collective/atomic tests: run a specialization on an OpenCL device with raw
pyopencl (independent of clpy.runtime), and NumPy references grouped by work-group."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from clpy.emit.targets import Target, target_of
from clpy.types.core import PointerType

_BUILD_CACHE: dict[tuple[int, str, str], Any] = {}


def cl_target(device: Any, profile: str = "opencl-c-1.2") -> Target:
    """A named profile with the device's work-group limit (the runtime fills the same keys)."""
    t = target_of(profile)
    return replace(t, info={**t.info, "max_work_group_size": device.max_work_group_size,
                            "local_mem_size": device.local_mem_size},
                   name=f"{profile}@{device.name}")


def run_cl(ctx: Any, queue: Any, spec: Any, target: Target, gsize: tuple[int, ...],
           lsize: tuple[int, ...], *args: Any, std: str | None = None) -> list[Any]:
    """Launch ``spec`` (a Specialization) with NumPy arrays / scalars; returns the arrays
    after the run (copies)."""
    import pyopencl as cl

    src = spec.source_for(target)
    flag = std or target.std_flag
    key = (id(ctx), src, flag)
    prg = _BUILD_CACHE.get(key)
    if prg is None:
        prg = cl.Program(ctx, src).build(options=[flag])
        _BUILD_CACHE[key] = prg
    fn = spec.function
    kargs: list[Any] = []
    bufs: list[tuple[Any, np.ndarray]] = []
    for p, a in zip(fn.params, args):
        if isinstance(p.type, PointerType):
            arr = np.ascontiguousarray(a).copy()
            buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                            hostbuf=arr)
            kargs.append(buf)
            bufs.append((buf, arr))
        else:
            kargs.append(np.asarray(a, dtype=p.type.dtype)[()])
    cl.Kernel(prg, fn.name)(queue, gsize, lsize, *kargs)
    out = []
    for buf, arr in bufs:
        cl.enqueue_copy(queue, arr, buf)
        out.append(arr)
    queue.finish()
    return out


def group_layout(gsize: tuple[int, ...], lsize: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """For each global linear id (dimension 0 fastest): its work-group linear id and its local
    linear id."""
    g = tuple(gsize) + (1,) * (3 - len(gsize))
    ls = tuple(lsize) + (1,) * (3 - len(lsize))
    z, y, x = np.meshgrid(np.arange(g[2]), np.arange(g[1]), np.arange(g[0]), indexing="ij")
    x, y, z = x.ravel(), y.ravel(), z.ravel()
    ng = [g[i] // ls[i] for i in range(3)]
    grp = ((z // ls[2]) * ng[1] + y // ls[1]) * ng[0] + x // ls[0]
    lid = ((z % ls[2]) * ls[1] + y % ls[1]) * ls[0] + x % ls[0]
    return grp, lid


def per_group(values: np.ndarray, gsize: tuple[int, ...], lsize: tuple[int, ...],
              fn: Any) -> np.ndarray:
    """Apply ``fn(vals_in_local_id_order) -> array of the same length`` within each group and
    scatter back to global linear order."""
    grp, lid = group_layout(gsize, lsize)
    out = np.empty_like(values)
    for gi in np.unique(grp):
        idx = np.nonzero(grp == gi)[0]
        order = idx[np.argsort(lid[idx])]
        out[order] = fn(values[order])
    return out
