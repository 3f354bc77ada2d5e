"""AMD APP SDK NBody: all-pairs gravitational n-body with softening, explicit integration,
positions and velocities as ``float4`` (mass in ``.w``). Each 256-item work-group walks the
bodies in tiles staged in local memory (a barrier pair per tile); the host ping-pongs the
position and velocity buffers for ``steps`` steps.

Ported from the AMD APP SDK 2.x sample ``NBody`` (``NBody_Kernels.cl``, kernel ``nbody_sim``;
``NBody.cpp``: GROUP_SIZE 256, delT 0.005, espSqr 500).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import clpy
from benchmarks.programs.common import Host, OrigHost, f32, i32
from clpy import Global, float4, float32, int32

NAME = "nbody"
ORIGIN = "AMD APP SDK 2.x samples/opencl/cl/app/NBody/NBody_Kernels.cl, NBody.cpp"
KIND = "all-pairs n-body, float4, local tiles of 256 bodies"
CL_FILE = "nbody.cl"
SIZES = {
    "small": dict(n=512, steps=1),
    "bench": dict(n=2048, steps=2),
    "gpu": dict(n=8192, steps=2),
}
TOL = dict(rtol=1e-4, atol=1e-3)
GROUP = 256
DT = 0.005
EPS_SQR = 500.0


@clpy.kernel
def nbody_sim(
    pos: Global[float4],
    vel: Global[float4],
    num_bodies: int32,
    dt: float32,
    eps_sqr: float32,
    new_pos: Global[float4],
    new_vel: Global[float4],
):
    local_pos = clpy.local_array(float4, GROUP)
    tid = clpy.get_local_id(0)
    gid = clpy.get_global_id(0)
    num_tiles = num_bodies // GROUP
    my_pos = pos[gid]
    acc = float4(0.0)
    for i in range(num_tiles):
        local_pos[tid] = pos[i * GROUP + tid]
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
        for j in range(GROUP):
            p = local_pos[j]
            r = p - my_pos
            dist_sqr = r.x * r.x + r.y * r.y + r.z * r.z
            inv_dist = 1.0 / clpy.sqrt(dist_sqr + eps_sqr)
            inv_dist_cube = inv_dist * inv_dist * inv_dist
            s = p.w * inv_dist_cube
            acc += s * r
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    old_vel = vel[gid]
    np_ = my_pos + old_vel * dt + acc * 0.5 * dt * dt
    np_.w = my_pos.w
    new_pos[gid] = np_
    new_vel[gid] = old_vel + acc * dt


def make_inputs(size: str, seed: int = 0) -> dict[str, Any]:
    p = SIZES[size]
    rng = np.random.default_rng(seed)
    n = p["n"]
    pos = np.empty((n, 4), np.float32)
    pos[:, :3] = rng.uniform(-50, 50, (n, 3))
    pos[:, 3] = rng.uniform(1, 1000, n)
    vel = np.zeros((n, 4), np.float32)
    return dict(pos=pos, vel=vel, steps=p["steps"])


def numpy_reference(inp: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    pos = inp["pos"].astype(np.float64)
    vel = inp["vel"].astype(np.float64)
    n = pos.shape[0]
    for _ in range(inp["steps"]):
        acc = np.empty_like(pos)
        for a in range(0, n, 512):
            r = pos[None, :, :] - pos[a : a + 512, None, :]  # (rows, n, 4): body j - body i
            d2 = (r[..., :3] ** 2).sum(axis=2) + EPS_SQR
            s = pos[None, :, 3] / (d2 * np.sqrt(d2))
            acc[a : a + 512] = (s[..., None] * r).sum(axis=1)
        new_pos = pos + vel * DT + acc * 0.5 * DT * DT
        new_pos[:, 3] = pos[:, 3]
        vel = vel + acc * DT
        pos = new_pos
    return pos.astype(np.float32), vel.astype(np.float32)


def run_clpy(
    inp: dict[str, Any], device: Any, *, resident: bool, events: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    h = Host(device, resident, events)
    n = inp["pos"].shape[0]
    pos = [h.put(inp["pos"]), h.empty((n, 4), np.float32)]
    vel = [h.put(inp["vel"]), h.empty((n, 4), np.float32)]
    cur = 0
    for _ in range(inp["steps"]):
        h(nbody_sim, (n,), (GROUP,), pos[cur], vel[cur], n, DT, EPS_SQR, pos[1 - cur], vel[1 - cur])
        cur = 1 - cur
    return h.get(pos[cur]), h.get(vel[cur])


def run_original(
    inp: dict[str, Any], ctx: Any, queue: Any, events: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    o = OrigHost(ctx, queue, CL_FILE, "", events)
    n = inp["pos"].shape[0]
    pos = [o.buf(inp["pos"]), o.empty(16 * n)]
    vel = [o.buf(inp["vel"]), o.empty(16 * n)]
    cur = 0
    for _ in range(inp["steps"]):
        o(
            "nbody_sim",
            (n,),
            (GROUP,),
            pos[cur],
            vel[cur],
            i32(n),
            f32(DT),
            f32(EPS_SQR),
            o.local(16 * GROUP),
            pos[1 - cur],
            vel[1 - cur],
        )
        cur = 1 - cur
    return o.read(pos[cur], (n, 4), np.float32), o.read(vel[cur], (n, 4), np.float32)
