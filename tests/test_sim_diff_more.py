"""More differential kernels: returns inside loops (kernels and device functions), elif
chains, tiled matrix multiply with 2-D local memory, private vector arrays, printf-free
divergent barriers per work-group, multiple batches — simulator vs PoCL."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import clpy
import clpy_sim as sim
from clpy import Global, float4, float32, int32, uint32
from tests.test_sim_util import compare

RNG = np.random.default_rng(7)


@clpy.func
def find_first(p: Global[int32], n: int32, target: int32) -> int32:
    for k in range(n):
        if p[k] == target:
            return k
        if p[k] > 1000:
            break
    return -1


@clpy.kernel
def k_search(data: Global[int32], targets: Global[int32], out: Global[int32], n: int32):
    i = clpy.get_global_id(0)
    out[i] = find_first(data, n, targets[i])


@clpy.kernel
def k_early_return(x: Global[int32], out: Global[int32]):
    i = clpy.get_global_id(0)
    v = x[i]
    out[i] = -7
    k = 0
    while k < 50:
        if v % 7 == 0:
            out[i] = k
            return
        elif v % 5 == 0:
            v = v // 5 + 3
        elif v % 3 == 0:
            v = v + 11
        else:
            v = v * 3 + 1
        k += 1
    out[i] = v


@clpy.kernel
def k_matmul(a: Global[float32], b: Global[float32], c: Global[float32], n: int32):
    ta = clpy.local_array(float32, (8, 8))
    tb = clpy.local_array(float32, (8, 8))
    row = clpy.get_global_id(1)
    col = clpy.get_global_id(0)
    ly = clpy.get_local_id(1)
    lx = clpy.get_local_id(0)
    acc = 0.0
    for t in range(n // 8):
        ta[ly][lx] = a[row * n + t * 8 + lx]
        tb[ly][lx] = b[(t * 8 + ly) * n + col]
        clpy.barrier()
        for k in range(8):
            acc += ta[ly][k] * tb[k][lx]
        clpy.barrier()
    c[row * n + col] = acc


@clpy.kernel
def k_group_uniform_loop(x: Global[float32], out: Global[float32]):
    lid = clpy.get_local_id(0)
    g = clpy.get_group_id(0)
    tmp = clpy.local_array(float32, 16)
    tmp[lid] = x[clpy.get_global_id(0)]
    clpy.barrier()
    for _r in range(g % 3 + 1):  # trip count differs per work-group, uniform within one
        v = tmp[(lid + 1) % 16]
        clpy.barrier()
        tmp[lid] = v + 1.0
        clpy.barrier()
    out[clpy.get_global_id(0)] = tmp[lid]


@clpy.kernel
def k_private_vectors(x: Global[float4], out: Global[float4]):
    i = clpy.get_global_id(0)
    acc = clpy.private_array(float4, 4)
    for k in range(4):
        acc[k] = x[i] * float32(k + 1)
    s = acc[0] + acc[1]
    s.w = acc[3].x
    out[i] = s + acc[i % 4]


@clpy.kernel
def k_bits(x: Global[uint32], out: Global[uint32]):
    i = clpy.get_global_id(0)
    v = x[i]
    c = uint32(0)
    while v != 0:
        v &= v - 1
        c += 1
    out[i] = c * 1000 + (x[i] >> 28) + ((x[i] << 3) ^ x[i]) % 1000


def _search_args() -> list[Any]:
    data = RNG.permutation(500).astype(np.int32)
    return [data, RNG.integers(0, 700, 128).astype(np.int32), np.zeros(128, np.int32),
            np.int32(500)]


CASES: list[tuple[str, Any, tuple[int, ...], tuple[int, ...], Any]] = [
    ("search", k_search, (128,), (32,), _search_args),
    ("early_return", k_early_return, (256,), (64,),
     lambda: [RNG.integers(1, 10**6, 256).astype(np.int32), np.zeros(256, np.int32)]),
    ("matmul", k_matmul, (32, 32), (8, 8),
     lambda: [RNG.random(32 * 32, np.float32), RNG.random(32 * 32, np.float32),
              np.zeros(32 * 32, np.float32), np.int32(32)]),
    ("group_uniform_loop", k_group_uniform_loop, (96,), (16,),
     lambda: [RNG.random(96, np.float32), np.zeros(96, np.float32)]),
    ("private_vectors", k_private_vectors, (64,), (16,),
     lambda: [RNG.random((64, 4), np.float32), np.zeros((64, 4), np.float32)]),
    ("bits", k_bits, (128,), (32,),
     lambda: [RNG.integers(0, 2**32, 128, dtype=np.uint64).astype(np.uint32),
              np.zeros(128, np.uint32)]),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("max_lanes", [32, 1 << 18])
def test_more_kernels_match_pocl(cl_context: Any, case: Any, max_lanes: int) -> None:
    _, kern, g, l_, make = case
    with sim.config(max_lanes=max_lanes):
        compare(cl_context, kern, g, l_, make(), ulps=8.0)


@clpy.kernel
def k_printf(x: Global[float32], v: Global[float4], k: Global[int32]):
    i = clpy.get_global_id(0)
    if i % 3 == 0:
        print("i", i, "x", x[i], "k", k[i], v[i], sep=" ")
    print(k[i] * 2, end=";\n")


def test_printf_matches_pocl(cl_context: Any, capfd: Any) -> None:
    from tests.test_sim_util import run_cl, run_sim

    n = 12
    args = [np.array([0.5, 1e-7, 3.0, 1234567.0, -2.25, 0.1] * 2, np.float32),
            RNG.random((n, 4)).astype(np.float32), np.arange(n, dtype=np.int32) - 5]
    from dataclasses import replace

    from clpy.emit.targets import target_of
    from tests.test_sim_util import TARGET

    fn = k_printf.specialize().function
    run_sim(fn, (n,), (1,), args)
    sim_out = capfd.readouterr().out
    # The device's own printf of vectors (%v4hlf), unless its quirks say it mangles them
    # (NVIDIA), and the lane-by-lane form clpy emits for such devices: both print the same.
    device_flags = clpy.get_device(cl_context.devices[0]).target.info
    for lanes in {bool(device_flags.get("no_vector_printf")), True}:
        base = target_of(TARGET)
        tgt = replace(base, name=f"printf-lanes-{lanes}",
                      info={**base.info, "no_vector_printf": lanes})
        run_cl(cl_context, fn, (n,), (1,), args, target=tgt)
        dev_out = capfd.readouterr().out
        # work-groups of one work-item: PoCL prints whole work-items in order too
        assert sorted(sim_out.splitlines()) == sorted(dev_out.splitlines()), lanes
    assert sim_out.splitlines()[:2] == ["i 0 x 0.5 k -5 " + ",".join(
        f"{c:f}" for c in args[1][0]), "-10;"]
