"""Every built-in in the registry has a simulator implementation, named by its registry entry
(``Builtin.sim``) and resolved by ``Builtin.sim_impl()``; no family is deferred."""

from __future__ import annotations

import clpy  # noqa: F401  (declares every family)
from clpy.builtins.registry import REGISTRY
from clpy_sim.builtins import table


def test_every_builtin_has_a_simulator_implementation() -> None:
    impls = table()
    missing = sorted(n for n in REGISTRY if n not in impls)
    assert not missing, f"no simulator implementation for: {', '.join(missing)}"


def test_implementations_are_callables_keyed_by_registered_names() -> None:
    import importlib
    import pkgutil

    import clpy_sim.builtins as pkg

    impls = table()
    assert impls, "the simulator table is empty"
    own: dict[str, object] = {}
    for m in pkgutil.iter_modules(pkg.__path__):  # this package's modules (not plug-ins)
        own.update(getattr(importlib.import_module(f"clpy_sim.builtins.{m.name}"), "IMPLS", {}))
    unknown = sorted(n for n in own if n not in REGISTRY)
    assert not unknown, f"implementations for unregistered built-ins: {unknown}"
    assert all(callable(f) for f in impls.values())


def test_core_families_present() -> None:
    families = {b.family for n, b in REGISTRY.items() if n in table()}
    for fam in ("math", "work-item", "synchronization", "integer", "common", "geometric",
                "relational", "conversions", "vload/vstore", "misc-vector", "address-space"):
        assert fam in families, fam


def test_registry_names_each_implementation() -> None:
    impls = table()
    for name, impl in impls.items():
        b = REGISTRY[name]
        assert b.sim and b.sim_impl() is impl
