"""clpy's differential kernel fuzzer (CLsmith's method in clpy's language): random
well-defined kernels run on the simulator and on OpenCL devices, outputs compared, failures
reduced to small reproducers. Command line: ``python -m clpy.fuzz`` (clpy/fuzz/cli.py)."""

from __future__ import annotations

from clpy.fuzz.campaign import Result, check
from clpy.fuzz.generator import generate

__all__ = ["Result", "check", "generate"]
