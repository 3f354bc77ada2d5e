"""AMD APP SDK BitonicSort: an in-place bitonic sorting network over 2^p unsigned keys, one
launch per pass of every stage (p(p+1)/2 launches), each work-item comparing and swapping one
pair of keys in global memory.

Ported from the AMD APP SDK 2.x sample ``BitonicSort`` (``BitonicSort_Kernels.cl``, kernel
``bitonicSort``; ``BitonicSort.cpp``: global size n/2, work-group 256, stages and passes
looped on the host).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import clpy
from benchmarks.programs.common import Host, OrigHost
from clpy import Global, uint32

NAME = "bitonic"
ORIGIN = "AMD APP SDK 2.x samples/opencl/cl/app/BitonicSort/BitonicSort_Kernels.cl, .cpp"
KIND = "bitonic sorting network, one launch per pass (many short launches)"
CL_FILE = "bitonic.cl"
SIZES = {"small": dict(logn=10), "bench": dict(logn=16), "gpu": dict(logn=22)}
TOL: dict[str, float] = {}
GROUP = 256


@clpy.kernel
def bitonic_sort(
    the_array: Global[uint32], stage: uint32, pass_of_stage: uint32, direction: uint32
):
    sort_increasing = direction
    thread_id = uint32(clpy.get_global_id(0))
    pair_distance = uint32(1) << (stage - pass_of_stage)
    block_width = 2 * pair_distance
    left_id = (thread_id % pair_distance) + (thread_id // pair_distance) * block_width
    right_id = left_id + pair_distance
    left = the_array[left_id]
    right = the_array[right_id]
    same_direction_block_width = uint32(1) << stage
    if (thread_id // same_direction_block_width) % 2 == 1:
        sort_increasing = 1 - sort_increasing
    greater = left if left > right else right
    lesser = right if left > right else left
    if sort_increasing != 0:
        the_array[left_id] = lesser
        the_array[right_id] = greater
    else:
        the_array[left_id] = greater
        the_array[right_id] = lesser


def make_inputs(size: str, seed: int = 0) -> dict[str, Any]:
    n = 1 << SIZES[size]["logn"]
    rng = np.random.default_rng(seed)
    return dict(keys=rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32))


def numpy_reference(inp: dict[str, Any]) -> np.ndarray:
    return np.sort(inp["keys"])


def _passes(n: int) -> list[tuple[int, int]]:
    stages = n.bit_length() - 1
    return [(s, p) for s in range(stages) for p in range(s + 1)]


def run_clpy(inp: dict[str, Any], device: Any, *, resident: bool, events: Any = None) -> np.ndarray:
    h = Host(device, resident, events)
    n = inp["keys"].size
    keys = h.put(inp["keys"])
    g, loc = (n // 2,), (min(GROUP, n // 2),)
    for stage, p in _passes(n):
        h(bitonic_sort, g, loc, keys, stage, p, 1)
    return h.get(keys)


def run_original(inp: dict[str, Any], ctx: Any, queue: Any, events: Any = None) -> np.ndarray:
    o = OrigHost(ctx, queue, CL_FILE, "", events)
    n = inp["keys"].size
    keys = o.buf(inp["keys"])
    g, loc = (n // 2,), (min(GROUP, n // 2),)
    u = np.uint32
    for stage, p in _passes(n):
        o("bitonicSort", g, loc, keys, u(stage), u(p), u(1))
    return o.read(keys, (n,), np.uint32)
