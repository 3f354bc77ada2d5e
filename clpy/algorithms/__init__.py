"""Whole-array algorithms written as clpy kernels: ``reduce``, ``scan``, ``histogram``,
``argmin``/``argmax``, ``segmented_reduce`` and ``sort``, on any OpenCL device and on the
simulator, with any operator the collectives accept (``"+" "-" "*" "&" "|" "^" "&&" "||"
"min" "max"`` or a ``@clpy.reduction``).

    import clpy.algorithms as alg
    alg.reduce(x, "+")                 # NumPy in → NumPy scalar
    y = alg.scan(clpy.to_device(x))    # DeviceArray in → DeviceArray out, on the device
    counts = alg.histogram(img, 256, range=(0, 256))

Inputs are NumPy arrays (copied in; array results come back as NumPy), ``clpy.DeviceArray``s
or ``pyopencl.array.Array``s (results stay on that device, as the same kind of array).
Launch shapes come from the device's description (clpy/algorithms/_core.py ``tuning``).
"""

from __future__ import annotations

from clpy.algorithms.extrema import argmax, argmin
from clpy.algorithms.histograms import histogram
from clpy.algorithms.reductions import reduce, segmented_reduce
from clpy.algorithms.scans import scan
from clpy.algorithms.sorting import sort

__all__ = ["reduce", "scan", "histogram", "argmin", "argmax", "segmented_reduce", "sort"]
