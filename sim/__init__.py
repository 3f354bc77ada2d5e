"""clpy's simulator: executes a kernel's typed IR with NumPy, one array lane per work-item,
and checks it for out-of-bounds accesses, data races, barrier divergence, uninitialised local
reads, integer division by zero and loops that make no progress.

    import sim
    sim.launch(kernel.specialize().function, (1024,), (64,), [x, out, np.int32(n)])

Users reach it as device ``"sim"`` and tune it with ``clpy.sim.config(...)``.
"""

from sim.config import CHECKS, SimConfig, config, current
from sim.errors import Report, SimulationError, SimulationWarning
from sim.launch import launch

SUPPORTS_NON_UNIFORM = True  # global sizes need not be multiples of the local size (CL 2.0)

__all__ = [
    "launch",
    "config",
    "current",
    "SimConfig",
    "CHECKS",
    "SimulationError",
    "SimulationWarning",
    "Report",
]
