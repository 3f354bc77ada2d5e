"""Every registered built-in is complete, with no exemption list: it type-checks (each of its
overloads resolves to itself), it can be emitted for every target profile it claims (a
spelling, a custom emission or a lowering the emitter has), it has a simulator
implementation the registry resolves, and a docstring (DESIGN.md: one declaration per
built-in; STYLE.md rule 1)."""

from __future__ import annotations

import pytest

import clpy
from clpy.builtins.registry import REGISTRY, ArgInfo, Builtin
from clpy.emit.c_exprs import CUSTOM_EMIT
from clpy.emit.lowering import LOWERINGS, needs_lowering
from clpy.emit.targets import PROFILES, Target
from clpy.ir.operators import REDUCTIONS

NAMES = sorted(REGISTRY)


def _claims(b: Builtin, tgt: Target) -> bool:
    """The target can run ``b``: it has the features, or ``b`` is lowered there."""
    return b.lowering is not None or all(tgt.has(f) for f in b.features)


@pytest.mark.parametrize("name", NAMES)
def test_typed(name: str) -> None:
    b = REGISTRY[name]
    assert b.name == name
    assert b.overloads or (b.rule is not None and b.signature), (
        "a built-in has overloads, or a type rule and its signature as text")
    for ov in b.overloads:
        got = b.resolve([ArgInfo(p) for p in ov.params])
        assert got.ret is ov.ret, f"{name}{ov} resolves to {got}"


@pytest.mark.parametrize("name", NAMES)
def test_emittable_for_every_target_it_claims(name: str) -> None:
    b = REGISTRY[name]
    claimed = [t for t in PROFILES.values() if _claims(b, t)]
    assert claimed, f"{name} can be emitted for none of {', '.join(PROFILES)}"
    for tgt in claimed:
        if needs_lowering(b, tgt):
            assert b.lowering is not None and b.lowering.kind in LOWERINGS, (
                f"{name} needs lowering on {tgt} but has no lowering the emitter knows")
        elif b.emit:
            assert b.emit in CUSTOM_EMIT, f"{name}: unknown custom emission {b.emit!r}"
        else:
            assert b.cl_name and all(b.spell(ov) for ov in b.overloads)


@pytest.mark.parametrize("name", NAMES)
def test_simulated(name: str) -> None:
    impl = REGISTRY[name].sim_impl()
    assert callable(impl)
    assert REGISTRY[name].sim_impl() is impl  # resolved once, then cached


@pytest.mark.parametrize("name", NAMES)
def test_documented_and_public(name: str) -> None:
    b = REGISTRY[name]
    assert b.doc and len(b.doc.strip()) >= 5 and b.__doc__ == b.doc
    assert b.family
    assert getattr(clpy, name) is b


def test_every_lowering_kind_is_used_and_known() -> None:
    kinds = {b.lowering.kind for b in REGISTRY.values() if b.lowering is not None}
    assert kinds == set(LOWERINGS)
    assert {b.emit for b in REGISTRY.values() if b.emit} == set(CUSTOM_EMIT)


def test_operator_forms_are_registered_once_each() -> None:
    """Every scope, mode and OpenMP operator has its own registered declaration; the native
    add/min/max keep their OpenCL names."""
    for prefix in ("work_group", "sub_group"):
        for mode in ("reduce", "scan_inclusive", "scan_exclusive"):
            for red in REDUCTIONS.values():
                lowered = f"{prefix}_{mode}_{red.name}" + ("_lowered" if red.native else "")
                b = REGISTRY[lowered]
                assert b.collective is not None and b.collective.op == red.name
                assert b.lowering is not None and b.lowering.always
            user = REGISTRY[f"{prefix}_{mode}_user"]
            assert user.collective is not None and user.collective.op == "user"
            for native in ("add", "min", "max"):
                nb = REGISTRY[f"{prefix}_{mode}_{native}"]
                assert nb.lowering is not None and not nb.lowering.always


def test_simulator_table_resolves_through_the_registry() -> None:
    from clpy_sim.builtins import table

    impls = table()
    assert set(impls) == set(REGISTRY)


def k_direct_user_form(x: clpy.Global[clpy.float32]):
    x[0] = clpy.work_group_reduce_user(x[1], x[2])


def test_user_form_called_directly_names_the_right_call() -> None:
    with pytest.raises(clpy.CompileError, match="@clpy.reduction"):
        clpy.kernel(k_direct_user_form).source_for("opencl-c-2.0")
