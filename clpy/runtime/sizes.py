"""Global and local work sizes: parsing ``k[global_size, local_size]`` and checking them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from clpy.ir.nodes import CallBuiltin, Cast, Function
from clpy.ir.walk import walk

Dims = tuple[int, ...]
Sizes = tuple[Dims, "Dims | None"]


def _dims(v: Any, what: str, kname: str) -> Dims:
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
        out: Dims = (int(v),)
    elif (
        isinstance(v, (tuple, list))
        and 1 <= len(v) <= 3
        and all(isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)) for x in v)
    ):
        out = tuple(int(x) for x in v)
    else:
        raise TypeError(f"{kname}[...]: {what} must be an int or a tuple of 1 to 3 ints, got {v!r}")
    if any(x < 0 for x in out):
        raise ValueError(f"{kname}[...]: {what} {out} has a negative entry")
    if what == "local_size" and any(x == 0 for x in out):
        raise ValueError(f"{kname}[...]: local_size {out} has a zero entry")
    return out


def _plain(dims: tuple[Any, ...]) -> bool:
    """1 to 3 positive Python ints (what ``_dims`` returns unchanged)."""
    n = len(dims)
    if n == 1:
        x = dims[0]
        return type(x) is int and x > 0
    if n == 2:
        x, y = dims
        return type(x) is int and type(y) is int and x > 0 and y > 0
    if n == 3:
        x, y, z = dims
        return type(x) is int and type(y) is int and type(z) is int and x > 0 and y > 0 and z > 0
    return False


def parse_sizes(sizes: Any, kname: str) -> Sizes:
    """``k[n]``, ``k[g, l]``, ``k[(w, h), None]``, ``k[(w, h), (8, 8)]`` → (global, local)."""
    # Fast path for the common spellings with plain positive ints (no cache: 16.0 == 16
    # would hit): k[n], k[n, l], k[(w, h), None], k[(w, h), (8, 8)]; those spelled as the
    # result are returned as they are (the same tuple).
    t = type(sizes)
    if t is tuple and len(sizes) == 2:
        g0, l0 = sizes
        if type(g0) is tuple and len(g0) == 1:  # (1-D spelled out: the most common)
            (g,) = g0
            if type(g) is int and g > 0:
                if l0 is None:
                    return sizes
                if type(l0) is tuple and len(l0) == 1:
                    (lo,) = l0
                    if type(lo) is int and lo > 0:
                        return sizes
        elif type(g0) is tuple:
            if _plain(g0):
                if l0 is None:
                    return sizes
                if type(l0) is tuple and len(l0) == len(g0) and _plain(l0):
                    return sizes
        elif type(g0) is int and type(l0) is int and g0 > 0 and l0 > 0:
            return (g0,), (l0,)
    elif t is int and sizes > 0:
        return (sizes,), None
    if isinstance(sizes, tuple) and len(sizes) == 2:
        g = _dims(sizes[0], "global_size", kname)
        loc = None if sizes[1] is None else _dims(sizes[1], "local_size", kname)
    elif isinstance(sizes, tuple) and len(sizes) == 1:
        g, loc = _dims(sizes[0], "global_size", kname), None
    elif isinstance(sizes, tuple):
        raise TypeError(
            f"{kname}[...] takes [global_size] or [global_size, local_size]; "
            f"for a {len(sizes)}-D global size with no local size write "
            f"{kname}[{sizes!r}, None]"
        )
    else:
        g, loc = _dims(sizes, "global_size", kname), None
    if loc is not None and len(loc) != len(g):
        raise ValueError(
            f"{kname}[...]: global_size {g} and local_size {loc} have different "
            "numbers of dimensions"
        )
    return g, loc


def check_uniform(kname: str, g: Dims, loc: Dims, device: str, non_uniform: bool) -> None:
    """A ``ValueError`` saying how to pad when ``loc`` does not divide ``g`` and the device
    cannot run non-uniform work-groups (OpenCL 2.0 §3.2)."""
    if non_uniform:
        return
    for d, (gi, li) in enumerate(zip(g, loc)):
        if gi % li:
            padded = list(g)
            padded[d] = -(-gi // li) * li
            shown = padded[0] if len(padded) == 1 else tuple(padded)
            raise ValueError(
                f"{kname}[...]: global size {gi} is not a multiple of local size {li} in "
                f"dimension {d}, and {device} does not support non-uniform work-groups: pad "
                f"the global size to {shown} (and skip the extra work-items with "
                f"`if gid < n`), or pass local_size=None"
            )


def check_limits(
    kname: str, loc: Dims, device: str, max_wg: int, max_items: tuple[int, ...]
) -> None:
    total = 1
    for d, li in enumerate(loc):
        total *= li
        if d < len(max_items) and li > max_items[d]:
            raise ValueError(
                f"{kname}[...]: local size {li} in dimension {d} exceeds the "
                f"maximum {max_items[d]} of {device}"
            )
    if total > max_wg:
        raise ValueError(
            f"{kname}[...]: a work-group of {total} work-items (local size "
            f"{loc}) exceeds the maximum {max_wg} for this kernel on {device}"
        )


def pick_local(g: Dims, budget: int = 256) -> Dims:
    """A concrete local size dividing ``g`` (for the simulator when the user gives None):
    per dimension the largest divisor that keeps the work-group within ``budget``."""
    out: list[int] = []
    for gi in g:
        best = 1
        for li in range(min(gi, budget), 0, -1):
            if gi % li == 0:
                best = li
                break
        out.append(best)
        budget = max(1, budget // best)
    return tuple(out)


# Work-item queries bounded by the NDRange (the others are bounded by the work-group size).
_PER_DIM = frozenset(
    {"get_global_id", "get_global_size", "get_global_offset", "get_group_id", "get_num_groups"}
)
_LINEAR = frozenset({"get_global_linear_id"})


@dataclass(frozen=True)
class IndexRange:
    """The largest NDRange a kernel's work-item indices can hold (clpy/builtins/workitem.py:
    ``int`` unless a call asks for another type): ``per_dim`` bounds offset + size - 1 and the
    size in each dimension, ``linear`` the total count - 1; ``where`` names the call."""

    per_dim: int | None
    per_dim_where: str
    linear: int | None
    linear_where: str


def index_range(fn: Function) -> IndexRange | None:
    """What ``fn`` (and the device functions it calls) needs of the NDRange; None: nothing."""
    per_dim: int | None = None
    linear: int | None = None
    pw = lw = ""
    for f in (fn, *fn.callees):
        for n in walk(f.body):
            if not (isinstance(n, Cast) and isinstance(n.value, CallBuiltin)):
                continue
            b = n.value.builtin
            if not b.index or not getattr(n.type, "is_int", False):
                continue
            limit = (1 << (n.type.bits - (1 if n.type.is_signed else 0))) - 1  # type: ignore[attr-defined]
            where = f"clpy.{b.name} as {n.type} at {n.loc.file}:{n.loc.line}"
            if b.name in _PER_DIM and (per_dim is None or limit < per_dim):
                per_dim, pw = limit, where
            elif b.name in _LINEAR and (linear is None or limit < linear):
                linear, lw = limit, where
    if per_dim is None and linear is None:
        return None
    return IndexRange(per_dim, pw, linear, lw)


def check_index_range(kname: str, g: Dims, offset: Any, r: IndexRange | None) -> None:
    """A ``ValueError`` when the NDRange does not fit the kernel's work-item index types: the
    ids would wrap. The message names the call to widen (``clpy.get_global_id(0, clpy.int64)``)."""
    if r is None:
        return
    offs = [0] * len(g) if offset is None else [int(x) for x in np.atleast_1d(offset)]
    if r.per_dim is not None:
        for d, gi in enumerate(g):
            o = offs[d] if d < len(offs) else 0
            top = max(gi, o + gi - 1)
            if top > r.per_dim:
                raise ValueError(
                    f"{kname}[...]: global size {gi}"
                    + (f" with offset {o}" if o else "")
                    + f" in dimension {d} reaches {top}, beyond the {r.per_dim} that the "
                    f"kernel's work-item indices hold ({r.per_dim_where}); ask for 64-bit "
                    f"indices there, e.g. clpy.get_global_id({d}, clpy.int64)"
                )
    if r.linear is not None:
        total = int(np.prod(g, dtype=object))
        if total - 1 > r.linear:
            raise ValueError(
                f"{kname}[...]: {total} work-items in all do not fit the kernel's linear "
                f"work-item index ({r.linear_where}); ask for 64-bit indices there: "
                f"clpy.get_global_linear_id(clpy.int64)"
            )


def check_device_ids(
    kname: str, g: Dims, offset: Any, r: IndexRange | None, limit: int | None, device: str
) -> None:
    """A ``ValueError`` when the kernel asks for work-item indices wider than the global ids
    ``device`` computes correctly (``limit``: the quirk ``max_global_id``,
    clpy/runtime/quirks.py) and offset + global size - 1 exceeds it: the driver would wrap
    the ids, and the result would depend on the device that ran the kernel."""
    if r is None or r.per_dim is None or limit is None or r.per_dim <= limit:
        return
    offs = [0] * len(g) if offset is None else [int(x) for x in np.atleast_1d(offset)]
    for d, gi in enumerate(g):
        o = offs[d] if d < len(offs) else 0
        top = max(gi, o + gi - 1)
        if top > limit:
            raise ValueError(
                f"{kname}[...]: global size {gi}"
                + (f" with offset {o}" if o else "")
                + f" in dimension {d} reaches global id {top}, beyond the {limit} that "
                f"{device} computes correctly (its driver wraps larger global ids to 32 bits; "
                f"{r.per_dim_where}): split the launch into NDRanges that end at or below "
                f"{limit}, or run it on another device"
            )
