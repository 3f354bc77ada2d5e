"""Overlapping sub-buffers in one kernel, spelled several ways (issue 18).

    python scripts/gpu_alias_diag.py [--platform nvidia]

tests/test_device_array_views.py::test_overlapping_views_are_one_memory failed on the H100
(driver 580, session 7): with ``x`` and ``y`` overlapping aligned sub-buffers of one buffer
(``y`` starts ``k`` elements into ``x``), ``y[i] = 5; out[i] = x[i + k];`` read 0, not 5. clpy
emits that variant without ``restrict`` (its arguments alias); ``x`` is ``const``. The OpenCL
API leaves overlapping sub-buffers in one command undefined, so this asks which spellings the
driver runs as the C says: ``const`` or not, ``volatile``, a fence between the two statements,
and the whole buffer with an offset argument instead of two sub-buffers.
"""

from __future__ import annotations

import argparse

import numpy as np

KERNELS = {
    "const": "__global const float* x, __global float* y",
    "plain": "__global float* x, __global float* y",
    "volatile": "__global volatile float* x, __global float* y",
}
BODIES = {
    "straight": "y[i] = 5.0f; out[i] = x[i + k];",
    "fence": "y[i] = 5.0f; mem_fence(CLK_GLOBAL_MEM_FENCE); out[i] = x[i + k];",
    # clpy's variant: the output no other argument reaches is restrict (the others not)
    "straight_rout": "y[i] = 5.0f; out[i] = x[i + k];",
    "fence_rout": "y[i] = 5.0f; mem_fence(CLK_GLOBAL_MEM_FENCE); out[i] = x[i + k];",
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--platform", default="")
    a = ap.parse_args()
    import pyopencl as cl

    for plat in cl.get_platforms():
        if a.platform.lower() not in plat.name.lower():
            continue
        for dev in plat.get_devices():
            ctx = cl.Context([dev])
            q = cl.CommandQueue(ctx)
            n = max(dev.mem_base_addr_align // 32, 32)  # float32 elements per alignment
            mf = cl.mem_flags
            for kname, params in KERNELS.items():
                for bname, body in BODIES.items():
                    restrict_out = bname.endswith("_rout")
                    outp = "__global float* restrict out" if restrict_out else "__global float* out"
                    src = (
                        f"__kernel void k({params}, {outp}, int k)"
                        f" {{ int i = get_global_id(0); {body} }}"
                    )
                    prg = cl.Program(ctx, src).build(options=["-cl-std=CL2.0"])
                    for mode in ("subbuffers", "one_buffer"):
                        base = cl.Buffer(ctx, mf.READ_WRITE, 3 * n * 4)
                        cl.enqueue_fill_buffer(q, base, np.float32(0), 0, 3 * n * 4)
                        out = cl.Buffer(ctx, mf.READ_WRITE, n * 4)
                        if mode == "subbuffers":
                            xb = base.get_sub_region(0, 2 * n * 4)
                            yb = base.get_sub_region(n * 4, n * 4)
                            prg.k(q, (n,), None, xb, yb, out, np.int32(n))
                        else:  # y is x + k: the same buffer twice, y's kernel offset in k
                            src2 = src.replace("y[i] = 5.0f", "y[i + k] = 5.0f")
                            p2 = cl.Program(ctx, src2).build(options=["-cl-std=CL2.0"])
                            p2.k(q, (n,), None, base, base, out, np.int32(n))
                        got = np.empty(n, np.float32)
                        cl.enqueue_copy(q, got, out)
                        ok = bool((got == 5).all())
                        print(f"{dev.name[:24]:24} {kname:8} {bname:8} {mode:10} "
                              f"{'OK' if ok else 'wrong: ' + str(got[:4])}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
