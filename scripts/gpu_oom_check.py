"""A device array that does not fit: ``clpy.zeros`` of 16 GiB arrays until the device runs
out, which must say ``MemoryError`` naming the call, the shape and the device (NVIDIA
allocates at first use: its own error names the fill kernel). Usage:
``python scripts/gpu_oom_check.py [platform]``"""

from __future__ import annotations

import sys

import numpy as np

import clpy


def main() -> int:
    plat = sys.argv[1] if len(sys.argv) > 1 else "nvidia"
    dev = next(d for d in clpy.devices() if plat in d.name.lower())
    keep = []
    try:
        for _ in range(64):
            keep.append(clpy.zeros((16 << 30) // 4, np.float32, device=dev))
            print("allocated", len(keep) * 16, "GiB", flush=True)
    except MemoryError as e:
        print("MemoryError:", str(e)[:400])
        return 0
    print("no MemoryError")
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
