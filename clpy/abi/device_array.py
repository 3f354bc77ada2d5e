"""``clpy.DeviceArray``: data that stays on a device between launches.

    x = clpy.to_device(np.arange(n, dtype=np.float32), device="opencl:gpu")
    y = clpy.zeros_like(x)
    for _ in range(100):
        step[(n,), (64,)](x, y, device=x.device)     # no host transfers
        x, y = y, x
    result = x.get()

On an OpenCL device the data is a ``pyopencl.array.Array`` in the context and on the queue clpy
uses for that device (``.cl_array``), so launches bind it in place. On the simulator it is a
NumPy array the simulator reads and writes directly: no copy in, no copy back. Either way a
launch that fails leaves a device array as it was on the simulator (written arrays are
snapshotted and restored); on an OpenCL device a kernel that faults may have written part of
it, as with any device-resident buffer.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class DeviceArray:
    """An array that lives on one device (``device``); ``get()`` copies it to the host."""

    __slots__ = ("device", "_host", "_cl", "_io")

    def __init__(self, device: Any, host: np.ndarray | None, cl_array: Any, io: Any = None) -> None:
        self.device = device
        self._host = host
        self._cl = cl_array
        # the runtime's mover of an OpenCL array's data (pinned staging: clpy/runtime/
        # transfers.py); None: pyopencl's own get/set
        self._io = io

    @property
    def cl_array(self) -> Any:
        """The ``pyopencl.array.Array`` (None on the simulator)."""
        return self._cl

    @property
    def sim_array(self) -> np.ndarray | None:
        """The simulator's NumPy array, used in place (None on an OpenCL device)."""
        return self._host

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._host.shape if self._host is not None else self._cl.shape)

    @property
    def dtype(self) -> np.dtype[Any]:
        return self._host.dtype if self._host is not None else self._cl.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def flags(self) -> Any:
        return self._host.flags if self._host is not None else self._cl.flags

    def get(self, out: np.ndarray | None = None) -> np.ndarray:
        """A host copy of the data; into ``out`` (same shape and dtype, C-contiguous, e.g. a
        ``clpy.pinned_empty`` array) when given."""
        if out is not None:
            if out.shape != self.shape or out.dtype != self.dtype or not out.flags.c_contiguous:
                raise ValueError(
                    f"DeviceArray.get(out=...): expected a C-contiguous {self.dtype} array of "
                    f"shape {self.shape}, got {out.dtype} {out.shape}"
                )
        if self._host is not None:
            if out is None:
                return self._host.copy()
            np.copyto(out, self._host)
            return out
        if self._io is not None:
            return self._io.read(self._cl, out)
        if out is None:
            return self._cl.get()
        self._cl.get(ary=out)
        return out

    def set(self, a: Any) -> None:
        """Overwrite the data with ``a`` (same shape; converted to this array's dtype)."""
        src = np.ascontiguousarray(a, dtype=self.dtype)
        if src.shape != self.shape:
            raise ValueError(f"DeviceArray.set: expected shape {self.shape}, got {src.shape}")
        if self._host is not None:
            np.copyto(self._host, src)
        elif self._io is not None:
            self._io.write(self._cl, src)
        else:
            self._cl.set(src)

    def copy(self) -> DeviceArray:
        """A new device array with the same data, on the same device."""
        if self._host is not None:
            return DeviceArray(self.device, self._host.copy(), None)
        return DeviceArray(self.device, None, self._cl.copy(), self._io)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = self.get()
        return a if dtype is None else a.astype(dtype)

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return f"<clpy.DeviceArray {self.dtype} {self.shape} on {self.device}>"
