"""The simulator's native engine: a kernel's typed IR compiled to C by the machine's C compiler
and run work-group by work-group, with the NumPy engine (the rest of ``sim/``) as its reference.

The native engine gives the NumPy engine's results bit for bit for every kernel it accepts; a
kernel it cannot compile (a construct or built-in it does not implement, no C compiler) runs on
the NumPy engine, and ``clpy.sim.why_not(kernel)`` says why. With checkers on, C detectors
hand every launch the NumPy engine could report on back to it (``checked_run.py``).
docs/simulator.md "Native engine" has the design: barrier regions as loops over work-items,
group-uniform values as scalars, private values as arrays with one element per work-item,
groups on a thread pool where nothing can depend on their order.
"""
