"""Comparing what two devices computed.

Integers bit for bit. Floats bit for bit too, except that any NaN equals any NaN (the spec
pins NaN-ness, not payloads): generated kernels use only operations whose results the spec
pins (correctly rounded or 0 ulp, spec §7.4), with contraction off. Printed lines compare as
multisets: the order of printf output between work-items is unspecified; so do the fetch
results of one atomic counter (``tickets``). In printed text ``nan`` and ``-nan`` are equal:
C99 §7.19.6.1 (which OpenCL C §6.15.14 follows) leaves the sign a NaN prints with to the
implementation (NVIDIA prints ``-nan`` where the simulator and PoCL print ``nan``); nothing
else is loosened (``-inf`` is not ``inf``).
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np

from clpy.fuzz.runner import Outcome


def same_values(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Element-wise: equal bits, or both NaN for floating types."""
    if a.dtype.kind == "f":
        bits = a.view(f"u{a.dtype.itemsize}") == b.view(f"u{b.dtype.itemsize}")
        return bits | (np.isnan(a) & np.isnan(b))
    return a == b


# A printed NaN with a minus sign: a whole token (after a separator such as " " or ","), in
# either case (%f prints nan, %F NAN). clpy's prints use no field width, so no padding shifts.
_SIGNED_NAN = re.compile(r"(?<![\w.])-(nan|NAN)(?![\w.])")


def printed_line(line: str) -> str:
    """A printed line with the sign of every NaN dropped, for comparison."""
    return _SIGNED_NAN.sub(r"\1", line)


def differences(ref: Outcome, other: Outcome, limit: int = 4) -> list[str]:
    """Human-readable differences between two successful outcomes (empty: they agree)."""
    assert ref.outputs is not None and other.outputs is not None
    out: list[str] = []
    for name, a in ref.outputs.items():
        b = other.outputs.get(name)
        if b is None:
            out.append(f"{name}: missing on {other.device}")
            continue
        if name == "tickets":  # atomic fetch results: a permutation is right
            a, b = np.sort(a), np.sort(b)
        ok = same_values(a, b)
        if ok.all():
            continue
        bad = np.flatnonzero(~ok)
        shown = ", ".join(f"[{i}] {a[i]!r} vs {b[i]!r}" for i in bad[:limit])
        out.append(
            f"{name}: {len(bad)} of {a.size} differ ({ref.device} vs {other.device}): {shown}"
        )
    pa = Counter(map(printed_line, ref.prints))
    pb = Counter(map(printed_line, other.prints))
    if pa != pb:
        only_a = list((pa - pb).elements())[:limit]
        only_b = list((pb - pa).elements())[:limit]
        out.append(
            f"printf: {len(ref.prints)} vs {len(other.prints)} lines; only on "
            f"{ref.device}: {only_a}; only on {other.device}: {only_b}"
        )
    return out
