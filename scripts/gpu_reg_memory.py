"""Device memory taken by clpy's registered host buffers on NVIDIA (issue 18): a
``USE_HOST_PTR`` buffer has a device-side copy there (its map and unmap are the transfers), so
a registration kept after ``clpy.to_device`` may hold as much device memory as the array.
Free device memory is read with CuPy (``cudaMemGetInfo``: the whole device, every context).

    python scripts/gpu_reg_memory.py [--gib 8] [--big-gib 45]

Steps: to_device of a ``--gib`` array (free memory before and after, after freeing the device
array, after ``clpy.clear_caches()``); then whether a ``--big-gib`` array (more than half the
device) can be put on the device at all, and a second allocation of the same size after it.
"""

from __future__ import annotations

import argparse
import gc
import time

import numpy as np


def free_gib() -> float:
    import cupy

    free, _ = cupy.cuda.runtime.memGetInfo()
    return free / 2**30


def say(msg: str) -> None:
    print(f"{msg} | device free {free_gib():.2f} GiB", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gib", type=float, default=8)
    ap.add_argument("--big-gib", type=float, default=45)
    ap.add_argument("--platform", default="nvidia")
    a = ap.parse_args()
    import clpy

    dev = next(d for d in clpy.devices() if a.platform in str(d).lower())
    print("device", dev, flush=True)
    say("start")
    h = np.ones(int(a.gib * 2**30) // 4, np.float32)
    say(f"host array {a.gib} GiB made")
    t0 = time.perf_counter()
    d = clpy.to_device(h, device=dev)
    say(f"to_device {time.perf_counter() - t0:.2f} s")
    back = d.get()
    say(f"get, equal={np.array_equal(back, h)}")
    del back
    del d
    gc.collect()
    say("device array freed")
    clpy.clear_caches()
    say("clear_caches")
    del h
    gc.collect()
    say("host array freed")
    big = np.ones(int(a.big_gib * 2**30) // 4, np.float32)
    say(f"host array {a.big_gib} GiB made")
    try:
        t0 = time.perf_counter()
        d1 = clpy.to_device(big, device=dev)
        say(f"to_device {time.perf_counter() - t0:.2f} s")
    except Exception as e:  # noqa: BLE001
        say(f"to_device failed: {type(e).__name__}: {e}")
        return
    try:
        d2 = clpy.zeros(big.shape, big.dtype, device=dev)
        say("second device array of that size: ok")
        d2[:4] = 3.0
    except Exception as e:  # noqa: BLE001
        say(f"second device array failed: {type(e).__name__}: {str(e)[:300]}")
    try:
        got = d1.get()
        say(f"first array back, equal={np.array_equal(got, big)}")
    except Exception as e:  # noqa: BLE001
        say(f"get failed: {type(e).__name__}: {str(e)[:300]}")


if __name__ == "__main__":
    main()
