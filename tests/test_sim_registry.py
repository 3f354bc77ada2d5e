"""Every built-in in the registry has a simulator implementation (except the families the
collectives/atomics issue adds: their modules plug into ``sim.builtins`` the same way)."""

from __future__ import annotations

import clpy  # noqa: F401  (declares every family)
from clpy.builtins.registry import REGISTRY
from sim.builtins import table

LATER = ("work-group", "sub-group", "atomic", "image", "pipe", "enqueue", "collective",
         "async")


def _deferred(family: str) -> bool:
    return any(word in family for word in LATER)


def test_every_builtin_has_a_simulator_implementation() -> None:
    impls = table()
    missing = sorted(n for n, b in REGISTRY.items() if not _deferred(b.family) and n not in impls)
    assert not missing, f"no simulator implementation for: {', '.join(missing)}"


def test_implementations_are_callables_keyed_by_registered_names() -> None:
    import importlib
    import pkgutil

    import sim.builtins as pkg

    impls = table()
    assert impls, "the simulator table is empty"
    own: dict[str, object] = {}
    for m in pkgutil.iter_modules(pkg.__path__):  # this package's modules (not plug-ins)
        own.update(getattr(importlib.import_module(f"sim.builtins.{m.name}"), "IMPLS", {}))
    unknown = sorted(n for n in own if n not in REGISTRY)
    assert not unknown, f"implementations for unregistered built-ins: {unknown}"
    assert all(callable(f) for f in impls.values())


def test_core_families_present() -> None:
    families = {b.family for n, b in REGISTRY.items() if n in table()}
    for fam in ("math", "work-item", "synchronization", "integer", "common", "geometric",
                "relational", "conversions", "vload/vstore", "misc-vector", "address-space"):
        assert fam in families, fam


def test_registry_sim_slot_is_filled() -> None:
    impls = table()
    for name, impl in impls.items():
        if name in REGISTRY:
            assert REGISTRY[name].sim is impl or REGISTRY[name].sim is not None
