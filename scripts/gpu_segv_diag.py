"""Which objects crash NVIDIA's OpenCL at interpreter exit after tests/test_restrict.py's
``test_in_place_shift_through_overlapping_views[opencl]`` (session 8: rc 139, "Garbage-
collecting"). Each variant runs in its own process and prints where it got to:

    python scripts/gpu_segv_diag.py VARIANT [--platform nvidia]

- ``overlap``: the test's first half (a kernel through two overlapping views of one array);
- ``disjoint``: the test's second half (two disjoint views);
- ``overlap_gc``: ``overlap``, then every object dropped and ``gc.collect()`` before exit;
- ``overlap_clear``: ``overlap``, then clpy's plans and caches cleared (``clpy.runtime``);
- ``overlap_steps``: ``overlap``, then the objects dropped one kind at a time with a
  ``gc.collect()`` after each (the sub-buffer cache, the array, the plans, the kernel), each
  step said before the next: the last step said is the one before the crash;
- ``subbuf``: pyopencl alone: two overlapping sub-buffers of one buffer, a kernel writing
  through one and reading through the other, no clpy;
- ``subbuf_noexec``: the two overlapping sub-buffers, no kernel;
- ``order:LETTERS``: ``subbuf`` keeping the program and kernel, then releasing in the order
  given: ``k`` kernel and program, ``p`` the parent buffer, ``x``/``y`` the sub-buffers;
- ``sub:L:K:ACTIONS``: two sub-buffers of one buffer, overlapping (``L`` = ``o``) or disjoint
  (``d``), a kernel that writes through ``y`` (``K`` = ``w``), only reads both (``r``) or
  none (``n``), then the actions in order: ``f`` finish the queue, ``Q`` release the queue,
  ``k``, ``p``, ``x``, ``y`` as for ``order``.
"""

from __future__ import annotations

import argparse
import faulthandler
import gc
import sys

import numpy as np

faulthandler.enable()


def say(msg: str) -> None:
    print(msg, flush=True)


def device(platform: str):  # noqa: ANN201
    import pyopencl as cl

    for p in cl.get_platforms():
        if platform in p.name.lower():
            return p.get_devices()[0]
    raise SystemExit(f"no platform {platform}")


def clpy_case(d, half: str) -> list:  # noqa: ANN001
    import clpy
    from clpy import Global, float32

    @clpy.kernel
    def shift_add(x: Global[float32], y: Global[float32]):
        i = clpy.get_global_id(0)
        y[i] = x[i] + x[i + 1]

    dev = clpy.get_device(d)
    n = max(int(d.mem_base_addr_align) // 8 // 4, 8)
    h = np.arange(3 * n, dtype=np.float32) ** 2
    a = clpy.to_device(h, dev)
    if half == "overlap":
        shift_add[(n,), (n,)](a[0 : n + 1], a[0:n], device=dev)
    else:
        shift_add[(n,), (n,)](a[0 : n + 1], a[2 * n : 3 * n], device=dev)
    got = a.get()
    say(f"launched, first values {got[:3]}")
    return [a, shift_add, dev]


def sub_case(d, spec: str) -> None:  # noqa: ANN001
    import pyopencl as cl

    _, lay, kind, actions = spec.split(":")
    ctx = cl.Context([d])
    q = cl.CommandQueue(ctx)
    n = max(int(d.mem_base_addr_align) // 8 // 4, 8)
    h = np.arange(4 * n, dtype=np.float32) ** 2
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=h)
    x = buf.get_sub_region(0, 4 * (n + 1), cl.mem_flags.READ_WRITE)
    y = buf.get_sub_region(0 if lay == "o" else 8 * n, 4 * n, cl.mem_flags.READ_WRITE)
    out = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * n)
    kp: list = []
    if kind != "n":
        dst = "y" if kind == "w" else "o"
        prg = cl.Program(
            ctx,
            "__kernel void k(__global const float *x, __global float *y, __global float *o)"
            f"{{ size_t i = get_global_id(0); {dst}[i] = x[i] + x[i + 1] + y[i]; }}",
        ).build()
        k = prg.k
        k(q, (n,), (n,), x, y, out)
        got = np.empty_like(h)
        cl.enqueue_copy(q, got, buf)
        say(f"launched, first values {got[:3]}")
        kp = [prg, k]
        del prg, k
    objs = {"k": kp, "p": [buf], "x": [x], "y": [y], "Q": [q, ctx]}
    del buf, x, y, q, ctx
    for c in actions:
        if c == "f":
            objs["Q"][0].finish()
        else:
            objs[c].clear()
        gc.collect()
        say(f"released {c}" if c in "kpxy" else f"did {c}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("variant")
    ap.add_argument("--platform", default="nvidia")
    a = ap.parse_args()
    d = device(a.platform)
    v = a.variant
    keep: list = []
    if v.startswith("overlap") or v == "disjoint":
        keep = clpy_case(d, "overlap" if v.startswith("overlap") else "disjoint")
    elif v in ("subbuf", "subbuf_noexec"):  # the sub: cases without release steps
        sub_case(d, "sub:o:w:" if v == "subbuf" else "sub:o:n:")
    elif v.startswith("order:"):  # as sub:o:w:LETTERS
        sub_case(d, "sub:o:w:" + v[len("order:") :])
    elif v.startswith("sub:"):
        sub_case(d, v)
    else:
        raise SystemExit(f"unknown variant {v}")
    if v == "overlap_gc":
        keep.clear()
        gc.collect()
        say("collected")
    if v == "overlap_clear":
        from clpy.runtime.devices import RUNTIME

        keep[1].launches.plans.clear()
        keep.clear()
        say(f"plans cleared; runtime {type(RUNTIME).__name__}")
        gc.collect()
        say("collected")
    if v == "overlap_steps":
        arr, kern, _ = keep
        say(f"sub-buffer cache: {len(arr._cache())} entries")
        arr._cache().clear()
        gc.collect()
        say("step 1: sub-buffer cache cleared")
        keep.clear()
        del arr
        gc.collect()
        say("step 2: array freed")
        plans = list(kern.launches.plans.values())
        for p in plans:
            say(f"  plan {type(p).__name__}: variants {sorted(getattr(p, '_variants', {}))}")
            for var in getattr(p, "_variants", {}).values():
                var.last = None
            if hasattr(p, "_again"):
                p._again = None
        gc.collect()
        say("step 3: variants' last arguments and the repeat memo dropped")
        kern.launches.plans.clear()
        del plans, p
        gc.collect()
        say("step 4: plans freed")
        del kern
        gc.collect()
        say("step 5: kernel freed")
    say("exiting")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
