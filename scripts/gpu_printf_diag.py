"""Which printf calls a device drops: fuzz seed 354812 (H100, driver 580) printed nothing for
``printf("p1 %d %lu %g\\n", lin, 0UL, 0.5f)`` in a loop, where the simulator and PoCL print
every line (OpenCL C 2.0 §6.15.14).

    python scripts/gpu_printf_diag.py [--platform nvidia] > printf.log

Each variant is a kernel of 8 work-items that prints its tag on every line; the driver's output
goes to this process's stdout. Count the lines per tag afterwards (``--count printf.log``):
the expected count is given on a line ``want <tag> <n>`` before the kernel runs.
"""

from __future__ import annotations

import argparse
import collections
import sys

VARIANTS = {  # tag: (body, lines expected from 8 work-items)
    "full_loop": (
        'for (int i = 6; i > 0; i -= 2) printf("full_loop %d %lu %g\\n", lin, 0UL, 0.5f);',
        24,
    ),
    "full_flat": ('printf("full_flat %d %lu %g\\n", lin, 0UL, 0.5f);', 8),
    "int_ulong": ('printf("int_ulong %d %lu\\n", lin, 0UL);', 8),
    "ulong_float": ('printf("ulong_float %lu %g\\n", 0UL, 0.5f);', 8),
    "int_float": ('printf("int_float %d %g\\n", lin, 0.5f);', 8),
    "int_ulong_f": ('printf("int_ulong_f %d %lu %f\\n", lin, 0UL, 0.5f);', 8),
    "int_ulong_dbl": ('printf("int_ulong_dbl %d %lu %g\\n", lin, 0UL, (double)0.5f);', 8),
    "long_arg": ('printf("long_arg %d %lu %g\\n", lin, (ulong)lin, 0.5f);', 8),
    "ulong_first": ('printf("ulong_first %lu %d %g\\n", 0UL, lin, 0.5f);', 8),
    "int_uint_g": ('printf("int_uint_g %d %u %g\\n", lin, 0u, 0.5f);', 8),
    "neg8": ('printf("neg8 %d %lu %g\\n", lin, as_ulong(-8L), 0.5f);', 8),
    "long_long_g": ('printf("long_long_g %ld %lu %g\\n", (long)lin, 0UL, 0.5f);', 8),
}


def run(platform: str) -> None:
    import numpy as np  # noqa: F401
    import pyopencl as cl

    for plat in cl.get_platforms():
        if platform.lower() not in plat.name.lower():
            continue
        for dev in plat.get_devices():
            ctx = cl.Context([dev])
            q = cl.CommandQueue(ctx)
            for tag, (body, n) in VARIANTS.items():
                print(f"want {tag} {n}", flush=True)
                src = f"__kernel void k() {{ int lin = (int)get_global_id(0); {body} }}"
                try:
                    prg = cl.Program(ctx, src).build(options=["-cl-std=CL1.2"])
                    prg.k(q, (8,), (2,))
                    q.finish()
                except Exception as e:  # a build failure is a result too
                    print(f"error {tag} {type(e).__name__}: {str(e)[:200]}", flush=True)
                sys.stdout.flush()


def count(path: str) -> None:
    want: dict[str, int] = {}
    got: collections.Counter[str] = collections.Counter()
    for line in open(path, errors="replace"):
        w = line.split()
        if len(w) == 3 and w[0] == "want":
            want[w[1]] = int(w[2])
        elif w and w[0] in VARIANTS:
            got[w[0]] += 1
    for tag, n in want.items():
        print(f"{tag:14} {got[tag]:3} of {n}{'' if got[tag] == n else '  WRONG'}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--platform", default="")
    ap.add_argument("--count")
    a = ap.parse_args()
    if a.count:
        count(a.count)
    else:
        run(a.platform)
    return 0


if __name__ == "__main__":
    sys.exit(main())
