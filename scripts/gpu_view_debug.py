"""What clpy passes for two overlapping DeviceArray views (test_overlapping_views_are_one_memory,
wrong on the H100 only): each buffer argument's kind and byte span, the variant's noalias set and
its source. python scripts/gpu_view_debug.py [--platform nvidia]"""

from __future__ import annotations

import sys

import numpy as np

sys.path.insert(0, ".")  # the repository root: tests/ holds the kernel
import clpy  # noqa: E402
from clpy.runtime import clplan  # noqa: E402
from tests.test_device_array_views import write_then_read  # noqa: E402

plat = sys.argv[sys.argv.index("--platform") + 1] if "--platform" in sys.argv else ""
dev = next(d for d in clpy.devices() if not d.is_sim and plat.lower() in d.name.lower())
spans = clplan._byte_span


def _span(cl, buf, own):  # type: ignore[no-untyped-def]
    r = spans(cl, buf, own)
    print("span", type(buf).__name__, "own" if own else "", r, flush=True)
    return r


clplan._byte_span = _span
noalias = clplan.CLPlan._noalias


def _noalias(self, cl_args, uploaded):  # type: ignore[no-untyped-def]
    r = noalias(self, cl_args, uploaded)
    print("args", [type(a).__name__ for a in cl_args], "uploaded", uploaded, "noalias", r)
    src = self.spec.source_for(dev.target, noalias=frozenset(self.buffers) if r is None else r)
    print(src[src.index("__kernel") :][:300], flush=True)
    return r


clplan.CLPlan._noalias = _noalias  # type: ignore[method-assign]
a = dev.cl_device.mem_base_addr_align // 32
print("align elements", a, "device", dev.name)
d = clpy.to_device(np.zeros(3 * a, np.float32), dev)
out = clpy.zeros((a,), np.float32, dev)
write_then_read[a](d[0 : 2 * a], d[a : 2 * a], out, np.int32(a), device=dev)
print("out", out.get()[:4], "d", d.get()[a : a + 4])
