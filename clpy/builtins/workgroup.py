"""Work-group functions (spec §1.13.15): all/any, broadcast, reduce and scans.

Each collective carries a ``Collective(scope, mode, op)`` descriptor which the emitter's
lowering (clpy/emit/lower_collectives.py) and the simulator (sim/collectives.py) read. Native
calls are emitted where the target has ``__opencl_c_work_group_collective_functions``;
elsewhere they are lowered to local memory + barriers. Every one of them must be reached by
all work-items of the group in uniform control flow (``uniform=True``;
clpy/emit/lower_uniform.py rejects provably divergent calls).

Identities (spec §1.13.15): add 0; min INT_MAX/UINT_MAX/LONG_MAX/ULONG_MAX and +INF for floats;
max INT_MIN/0/LONG_MIN/0 and -INF for floats. Scans run in order of the linear local id.
"""

from __future__ import annotations

from clpy.builtins.registry import Builtin, Collective, Lowering, Overload, declare
from clpy.types import catalog as C
from clpy.types.core import ScalarType, Type

WG_FEATURE = "__opencl_c_work_group_collective_functions"

# The spec's gentype for work-group functions (half only with cl_khr_fp16).
# Order matters for overload resolution: a weak literal picks the first match.
COLLECTIVE_TYPES: tuple[ScalarType, ...] = (
    C.int_,
    C.uint,
    C.long,
    C.ulong,
    C.float_,
    C.double,
    C.half,
)
OPS = ("add", "min", "max")
SCAN_MODES = ("reduce", "scan_inclusive", "scan_exclusive")


def _collective(
    name: str, scope: str, mode: str, op: str, overloads: list[Overload], feature: str, doc: str
) -> Builtin:
    return declare(
        name,
        family="work-group" if scope == "wg" else "sub-group",
        doc=doc,
        overloads=overloads,
        uniform=True,
        features=frozenset({feature}),
        lowering=Lowering("collective"),
        collective=Collective(scope, mode, op),
    )


def declare_collectives(scope: str, prefix: str, feature: str, unit: str) -> dict[str, Builtin]:
    """Declare ``<prefix>_all/any/broadcast/reduce_*/scan_*`` for one scope (``"wg"``: the
    work-group, ``"sg"``: the sub-group). ``unit`` names the group in docstrings."""
    out: dict[str, Builtin] = {}
    pred = [Overload((C.int_,), C.int_)]
    out["all"] = _collective(
        f"{prefix}_all",
        scope,
        "all",
        "logical_and",
        pred,
        feature,
        f"Non-zero (1) when ``predicate`` is non-zero for every work-item of the {unit}.",
    )
    out["any"] = _collective(
        f"{prefix}_any",
        scope,
        "any",
        "logical_or",
        pred,
        feature,
        f"Non-zero (1) when ``predicate`` is non-zero for some work-item of the {unit}.",
    )
    bcast: list[Overload] = []
    dims = (1, 2, 3) if scope == "wg" else (1,)
    idt: Type = C.size_t if scope == "wg" else C.uint
    for t in COLLECTIVE_TYPES:
        for d in dims:
            bcast.append(Overload((t,) + (idt,) * d, t))
    out["broadcast"] = _collective(
        f"{prefix}_broadcast",
        scope,
        "broadcast",
        "",
        bcast,
        feature,
        f"The value ``a`` of the work-item whose {unit} local id is the given one "
        "(1-, 2- or 3-D form for work-groups). The id must be the same for all work-items.",
    )
    for mode in SCAN_MODES:
        for op in OPS:
            what = {
                "reduce": "Reduction",
                "scan_inclusive": "Inclusive scan",
                "scan_exclusive": "Exclusive scan",
            }[mode]
            ident = {
                "add": "0",
                "min": "the type's largest value (+INF for floats)",
                "max": "the type's smallest value (-INF for floats)",
            }[op]
            out[f"{mode}_{op}"] = _collective(
                f"{prefix}_{mode}_{op}",
                scope,
                mode,
                op,
                [Overload((t,), t) for t in COLLECTIVE_TYPES],
                feature,
                f"{what} with ``{op}`` over the {unit} in linear local id order; identity "
                f"{ident} (spec §1.13.15).",
            )
    return out


WORK_GROUP = declare_collectives("wg", "work_group", WG_FEATURE, "work-group")

__all__ = ["WORK_GROUP", "WG_FEATURE", "COLLECTIVE_TYPES", "declare_collectives"]
