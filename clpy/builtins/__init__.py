"""The built-in registry; importing this package declares every family."""

from clpy.builtins import (  # noqa: F401  (imported for their declarations)
    address_space,
    async_copy,
    atomics,
    common,
    conversions,
    enqueue,
    geometric,
    images,
    integer,
    math,
    pipes,
    reductions,
    relational,
    samplers,
    subgroup,
    sync,
    vector_misc,
    vloadstore,
    workgroup,
    workitem,
)
from clpy.builtins.registry import REGISTRY, Builtin, Overload, declare

__all__ = ["REGISTRY", "Builtin", "Overload", "declare"]
