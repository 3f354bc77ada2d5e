"""The Python cost of a NumPy-argument launch on the registered path (issue 18): ``touch``
with 4 MiB ``x`` in and ``y`` in and out, bound in place, on PoCL with the driver's calls
stubbed (``--stub``: maps, copies, the kernel, finishes), µs of CPU per launch; ``-p`` prints
a profile by own time.

    PYTHONPATH=. python benchmarks/numpy_launch_python.py --stub [-p]
"""

import cProfile
import io
import pstats
import sys
import time
import warnings

import numpy as np
import pyopencl as cl

import clpy
from benchmarks.transfer_setup import touch
from clpy.runtime import registered, transfers

warnings.simplefilter("ignore")
transfers.STAGE_CPU_DEVICES = True
transfers.PIPELINE = "register"
registered.BIND_UNIFIED = True
dev = clpy.get_device("opencl:pocl")
n = (4 << 20) // 4
pad = 8192
x = np.ones(n + 2 * pad, np.float32)[pad : pad + n]
y = np.zeros(n + 2 * pad, np.float32)[pad : pad + n]
nn = np.int32(n)
touch[n](x, y, nn, device=dev)


class _M:
    class base:
        @staticmethod
        def release(q):
            pass


class _E:
    command_execution_status = 0

    def wait(self):
        pass


if "--stub" in sys.argv:
    cl.enqueue_map_buffer = lambda *a, **k: (_M(), _E())
    cl._cl._enqueue_copy_buffer = lambda *a, **k: _E()
    cl.enqueue_nd_range_kernel = lambda *a, **k: _E()
    q = dev.queue
    type(q).finish = lambda self: None
    t = transfers.staging_for(cl, q)
    t._copy = lambda *a: None
for _ in range(50):
    touch[n](x, y, nn, device=dev)
t0 = time.process_time()
K = 2000
for _ in range(K):
    touch[n](x, y, nn, device=dev)
print(f"{(time.process_time() - t0) / K * 1e6:.1f} us per launch")
if "-p" in sys.argv:
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(K):
        touch[n](x, y, nn, device=dev)
    pr.disable()
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(22)
    print(s.getvalue()[:4500])
