"""clpy kernels over Dask arrays: one launch per chunk, on each worker's own device.

    import clpy.dask
    y = clpy.dask.map_blocks(saxpy, 2.0, x, out="y")            # x: a dask.array
    v = clpy.dask.map_blocks(step, u, out="v", depth=1, boundary=0.0)   # stencil with halos
    s = clpy.dask.reduce(x, "max").compute()
    c = clpy.dask.scan(x, my_reduction)

Dask is an optional dependency (``pip install clpy-kernels[dask]``), imported when these
functions run; ``import clpy`` never imports it. Semantics: docs/dask.md.
"""

from __future__ import annotations

from clpy.dask.algorithms import reduce, scan
from clpy.dask.blocks import BLOCK_OFFSET, BLOCK_SHAPE, BLOCK_SIZE, BlockValue, map_blocks
from clpy.dask.devices import worker_device, worker_devices, worker_rank

__all__ = [
    "map_blocks",
    "reduce",
    "scan",
    "BLOCK_SIZE",
    "BLOCK_SHAPE",
    "BLOCK_OFFSET",
    "BlockValue",
    "worker_device",
    "worker_devices",
    "worker_rank",
]
