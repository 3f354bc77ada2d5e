"""Why does a driver report a smaller maximum work-group size for clpy's kernel than for the
same kernel written by hand? (diagnostic for issue 18; run on the GPU host)

For a register-tiled SGEMM (private ``c[32]`` accumulators) and a local-atomics histogram, each
written in clpy and in C, build with several option sets and print the driver's
CL_KERNEL_WORK_GROUP_SIZE, private memory, the PTX's register declarations, and whether a
launch at 512 / 1024 work-items succeeds.

    python scripts/nv_wg_size_diag.py [platform-substring]
"""

from __future__ import annotations

import re
import sys

import numpy as np
import pyopencl as cl

import clpy
from clpy import Global, float32, int32, uint32

C_SGEMM = r"""
__kernel void sgemm_c(__global const float *A, int lda, __global const float *B, int ldb,
                      __global float *C, int ldc, int k)
{
    __local float b_s[16][32];
    float c[32];
    for (int i = 0; i < 32; i++) c[i] = 0.0f;
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int mid = get_group_id(0) * 512 + ty * 32 + tx;
    const int n0 = get_group_id(1) * 32;
    for (int i = 0; i < k; i += 16) {
        b_s[ty][tx] = B[(i + ty) * ldb + n0 + tx];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int j = 0; j < 16; j++) {
            float a = A[mid + (i + j) * lda];
            for (int kk = 0; kk < 32; kk++) c[kk] += a * b_s[j][kk];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int i = 0; i < 32; i++) C[(n0 + i) * ldc + mid] = c[i];
}
"""

C_HISTO = r"""
__kernel void histo_c(__global const uint *x, int n, __global uint *bins)
{
    __local uint h[256];
    for (int i = get_local_id(0); i < 256; i += get_local_size(0)) h[i] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = get_global_id(0); i < n; i += get_global_size(0))
        atomic_inc(&h[x[i] & 255]);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = get_local_id(0); i < 256; i += get_local_size(0))
        atomic_add(&bins[i], h[i]);
}
"""


@clpy.kernel
def sgemm(
    A: Global[float32],
    lda: int32,
    B: Global[float32],
    ldb: int32,
    C: Global[float32],
    ldc: int32,
    k: int32,
):
    b_s = clpy.local_array(float32, (16, 32))
    c = clpy.private_array(float32, 32)
    for i in range(32):
        c[i] = 0.0
    tx = clpy.get_local_id(0)
    ty = clpy.get_local_id(1)
    mid = clpy.get_group_id(0) * 512 + ty * 32 + tx
    n0 = clpy.get_group_id(1) * 32
    for i in range(0, k, 16):
        b_s[ty, tx] = B[(i + ty) * ldb + n0 + tx]
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
        for j in range(16):
            a = A[mid + (i + j) * lda]
            for kk in range(32):
                c[kk] += a * b_s[j, kk]
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    for i in range(32):
        C[(n0 + i) * ldc + mid] = c[i]


@clpy.kernel
def histo(x: Global[uint32], n: int32, bins: Global[uint32]):
    h = clpy.local_array(uint32, 256)
    for i in range(clpy.get_local_id(0), 256, clpy.get_local_size(0)):
        h[i] = 0
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    for i in range(clpy.get_global_id(0), n, clpy.get_global_size(0)):
        clpy.atomic_inc(h, x[i] & 255)
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    for i in range(clpy.get_local_id(0), 256, clpy.get_local_size(0)):
        clpy.atomic_add(bins, i, h[i])


def _regs(ptx: str) -> str:
    decl = re.findall(r"\.reg \.(\w+)\s+%\w+<(\d+)>", ptx)
    extra = re.findall(r"\.(maxntid|reqntid|minnctapersm|maxnreg)[^\n]*", ptx)
    return f"{decl} {extra}"


def _try(q: cl.CommandQueue, knl: cl.Kernel, g: tuple, loc: tuple) -> str:
    try:
        cl.enqueue_nd_range_kernel(q, knl, g, loc).wait()
        return "ok"
    except cl.Error as e:
        return f"FAIL {e.code} {e.what}"


def main() -> None:
    want = sys.argv[1] if len(sys.argv) > 1 else "nvidia"
    dev = [d for p in cl.get_platforms() if want in p.name.lower() for d in p.get_devices()][0]
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    print("device:", dev.name, dev.driver_version, "max wg", dev.max_work_group_size)
    cdev = clpy.get_device(dev)
    m = k = 512
    n = 64
    A = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, m * k * 4)
    B = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, k * n * 4)
    C = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, m * n * 4)
    xs = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 1 << 20)
    bins = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 1024)
    spec_s = sgemm.specialize(
        A=Global[float32],
        lda=int32,
        B=Global[float32],
        ldb=int32,
        C=Global[float32],
        ldc=int32,
        k=int32,
    )
    spec_h = histo.specialize(x=Global[uint32], n=int32, bins=Global[uint32])
    clpy_s = spec_s.source_for(cdev.target)
    clpy_h = spec_h.source_for(cdev.target)
    print("----- clpy sgemm source -----\n" + clpy_s)
    cases = [
        ("sgemm_c", C_SGEMM, "sgemm_c"),
        ("sgemm clpy", clpy_s, "sgemm"),
        ("histo_c", C_HISTO, "histo_c"),
        ("histo clpy", clpy_h, "histo"),
    ]
    opts = [
        "",
        "-cl-std=CL1.2",
        "-cl-std=CL2.0",
        "-cl-std=CL2.0 -cl-fp32-correctly-rounded-divide-sqrt",
        "-cl-fp32-correctly-rounded-divide-sqrt",
        "-cl-std=CL3.0",
    ]
    for label, src, name in cases:
        for o in opts:
            try:
                prg = cl.Program(ctx, src).build(options=o)
            except cl.Error as e:
                print(f"{label:11s} [{o}] build failed: {str(e)[:200]}")
                continue
            knl = getattr(prg, name)
            wg = knl.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, dev)
            pm = knl.get_work_group_info(cl.kernel_work_group_info.PRIVATE_MEM_SIZE, dev)
            ptx = prg.binaries[0].decode(errors="replace")
            if name.startswith("sgemm"):
                for j, a in enumerate(
                    [A, np.int32(m), B, np.int32(n), C, np.int32(m), np.int32(k)]
                ):
                    knl.set_arg(j, a)
                r512 = _try(q, knl, (m // 16, n // 32 * 16), (32, 16))
                r1024 = "-"
            else:
                for j, a in enumerate([xs, np.int32(1 << 18), bins]):
                    knl.set_arg(j, a)
                r512 = _try(q, knl, (512 * 8,), (512,))
                r1024 = _try(q, knl, (1024 * 8,), (1024,))
            print(
                f"{label:11s} [{o}] WG_SIZE={wg} private={pm} 512:{r512} 1024:{r1024} {_regs(ptx)}"
            )
    # What clpy itself says
    for kern, args, size in [
        (
            sgemm,
            (
                np.zeros(m * k, np.float32),
                np.int32(m),
                np.zeros(k * n, np.float32),
                np.int32(n),
                np.zeros(m * n, np.float32),
                np.int32(m),
                np.int32(k),
            ),
            ((m // 16, n // 32 * 16), (32, 16)),
        ),
        (
            histo,
            (np.zeros(1 << 18, np.uint32), np.int32(1 << 18), np.zeros(256, np.uint32)),
            ((1024 * 8,), (1024,)),
        ),
    ]:
        try:
            kern[size](*args, device=cdev)
            print(kern.__name__, "clpy launch ok")
        except Exception as e:  # noqa: BLE001 (diagnostic)
            print(kern.__name__, "clpy launch:", type(e).__name__, str(e)[:300])


if __name__ == "__main__":
    main()
