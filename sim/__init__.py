"""clpy's simulator: executes a kernel's typed IR with NumPy, one array lane per work-item,
and checks it for out-of-bounds accesses, data races, barrier divergence, uninitialised local
reads, integer division by zero and loops that make no progress. The folder sim/ is installed
as the package ``clpy_sim`` (no generic top-level name in users' environments).

    import clpy_sim as sim
    sim.launch(kernel.specialize().function, (1024,), (64,), [x, out, np.int32(n)])

Users reach it as device ``"sim"`` and tune it with ``clpy.sim.config(...)``.
"""

from clpy_sim.config import CHECKS, SimConfig, config, current
from clpy_sim.errors import Report, SimulationError, SimulationWarning
from clpy_sim.launch import launch
from clpy_sim.shadow_pool import release_pools as release_memory

SUPPORTS_NON_UNIFORM = True  # global sizes need not be multiples of the local size (CL 2.0)

__all__ = [
    "launch",
    "release_memory",
    "config",
    "current",
    "SimConfig",
    "CHECKS",
    "SimulationError",
    "SimulationWarning",
    "Report",
]
