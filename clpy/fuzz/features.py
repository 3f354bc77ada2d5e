"""Feature names for ``--features``: each switches one family of generated constructs on."""

from __future__ import annotations

INT = "int"  # always on: integer scalars of every width and signedness
FLOAT = "float"
DOUBLE = "double"
FDIV = "fdiv"  # float `/` and `sqrt`: pinned only where the device rounds them correctly
VECTOR = "vector"
SWIZZLE = "swizzle"
CONVERT = "convert"
CONTROL = "control"
FUNC = "func"
STRUCT = "struct"
LOCAL = "local"
COLLECTIVE = "collective"
SUBGROUP = "subgroup"
REDUCTION = "reduction"
ATOMIC = "atomic"
PRINTF = "printf"
# Constructs a listed device is known to get wrong (the tests/test_fuzz_*.py files document
# each); clpy.fuzz.campaign.device_features drops them for that device, so a large run
# reports new bugs instead of these.
# abs/abs_diff of a signed INT_MIN (PoCL 3.0 makes it poison in abs of an int; clpy computes
# them in the unsigned type there, clpy/emit/lower_abs.py, so it is no longer dropped for PoCL).
SIGNED_ABS = "signed-abs"
# convert_T_sat*(NaN), scalar and vector: PoCL 3.0 and NVIDIA's driver give INT_MIN ..., not 0;
# clpy lowers these for them (clpy/emit/lower_convert.py), so it is no longer dropped for PoCL.
NAN_SAT = "nan-sat"

# A barrier (local-memory exchange, collective) after a loop whose trip count depends on the
# work-item (PoCL 3.0: a private variable assigned in the loop reads another work-item's value
# after the barrier; clpy declares such variables volatile there). Without it the generator
# makes no barrier after such a loop.
LOOP_BARRIER = "loop-barrier"
# ceil/floor/trunc/round of a NaN the device compiler can see (PoCL 3.0 folds a constant NaN into
# garbage; clpy guards them there); without it their scalar arguments are never NaN and vectors
# use rint.
NAN_ROUND = "nan-round"

ALL = (INT, FLOAT, DOUBLE, FDIV, VECTOR, SWIZZLE, CONVERT, CONTROL, FUNC, STRUCT, LOCAL,
       COLLECTIVE, SUBGROUP, REDUCTION, ATOMIC, PRINTF, SIGNED_ABS, NAN_SAT,
       LOOP_BARRIER, NAN_ROUND)  # fmt: skip
DEFAULT = frozenset(ALL)


def parse(text: str | None) -> frozenset[str]:
    """``"all"``, a comma list (``"int,vector,control"``), or ``"all,-printf"``."""
    if not text or text == "all":
        return DEFAULT
    chosen: set[str] = {INT}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        if part == "all":
            chosen |= DEFAULT
        elif part.startswith("-"):
            chosen.discard(part[1:])
        elif part in ALL:
            chosen.add(part)
        else:
            raise ValueError(f"--features: unknown feature {part!r}; known: {', '.join(ALL)}")
    return frozenset(chosen)
