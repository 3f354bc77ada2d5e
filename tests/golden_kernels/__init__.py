"""Kernels whose emitted OpenCL C is kept in tests/golden/<name>.cl (one module per area).

Each module lists ``CASES``: a ``Case`` names the golden file, says how to get the
specialization and which target to emit for. ``tests/test_golden.py`` compares the emitter's
output with the file (``pytest --update-golden`` rewrites it) and builds it on PoCL.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Case:
    """One golden file. ``make`` returns a ``Kernel`` or a ``Specialization``.

    ``needs`` lists device extensions/features the source needs at build time (``cl_khr_fp16``,
    ``generic``); the build check is skipped, with that reason, on a device without them.
    """

    name: str
    make: Callable[[], Any]
    target: str = "opencl-c-2.0"
    line_directives: bool = False
    needs: tuple[str, ...] = ()


def case(name: str, target: str = "opencl-c-2.0", line_directives: bool = False,
         needs: tuple[str, ...] = ()) -> Callable[[Callable[[], Any]], Case]:
    """Decorator form: ``@case("vec_swizzle")`` on a zero-argument function."""

    def wrap(fn: Callable[[], Any]) -> Case:
        return Case(name, fn, target, line_directives, needs)

    return wrap


def collect() -> list[Case]:
    """Every case of every module in this package, in a stable order."""
    import importlib
    import pkgutil

    out: list[Case] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        mod = importlib.import_module(f"{__name__}.{info.name}")
        for v in vars(mod).values():
            if isinstance(v, Case):
                out.append(v)
    names = [c.name for c in out]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError(f"duplicate golden names: {sorted(dup)}")
    return sorted(out, key=lambda c: c.name)
