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

ALL = (INT, FLOAT, DOUBLE, FDIV, VECTOR, SWIZZLE, CONVERT, CONTROL, FUNC, STRUCT, LOCAL,
       COLLECTIVE, SUBGROUP, REDUCTION, ATOMIC, PRINTF)  # fmt: skip
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
