"""Vector data load and store functions (spec §1.13.7, table 15).

``vloadN(offset, p)`` reads N elements at ``p + offset*N``; ``vstoreN(data, offset, p)`` writes
them. The ``_half`` forms read and write ``half`` data converted to/from float (or double for
stores), with an optional rounding suffix; the ``a`` forms (``vloada_halfN``) need
``sizeof(halfN)`` alignment and use a stride of 4 for N = 3. Pointers may point into global,
local, private or generic memory, and into constant memory for loads. A ``local_array`` or
``private_array`` (1-D) can be passed where a pointer is expected: it decays to a pointer to its
first element as in C. Reading and writing through ``half*`` needs no cl_khr_fp16; ``vloadN`` of
``half`` (giving ``halfN``) does.
"""

from __future__ import annotations

from collections.abc import Sequence

from clpy.builtins.registry import (
    ArgInfo,
    Builtin,
    NoMatch,
    Overload,
    VectorAccess,
    declare,
    resolve_overload,
)
from clpy.types import catalog as C
from clpy.types.core import AddressSpace, ArrayType, PointerType, ScalarType, Type, VectorType

SIZES = (2, 3, 4, 8, 16)
ELEMS: tuple[ScalarType, ...] = (
    C.float_,
    C.int_,
    C.uint,
    C.double,
    C.long,
    C.ulong,
    C.char,
    C.uchar,
    C.short,
    C.ushort,
    C.half,
)
_S = AddressSpace
LOAD_SPACES = (_S.GLOBAL, _S.LOCAL, _S.CONSTANT, _S.PRIVATE, _S.GENERIC)
STORE_SPACES = (_S.GLOBAL, _S.LOCAL, _S.PRIVATE, _S.GENERIC)
ROUNDINGS = ("", "_rte", "_rtz", "_rtp", "_rtn")
_ROUND_DOC = {
    "": "round to nearest even",
    "_rte": "round to nearest even",
    "_rtz": "round toward zero",
    "_rtp": "round toward +infinity",
    "_rtn": "round toward -infinity",
}


def decaying_rule(b: Builtin, args: Sequence[ArgInfo]) -> Overload:
    """Overload resolution where a 1-D ``local_array``/``private_array`` argument decays to a
    pointer to its element in its address space, as C arrays do in calls. Stores refuse
    ``Constant`` pointers (which a generic pointer parameter would otherwise accept)."""
    for i in b.writes_args:
        t = args[i].type if i < len(args) else None
        if isinstance(t, PointerType) and t.space is AddressSpace.CONSTANT:
            raise NoMatch(
                f"{b.name} writes through argument {i + 1}, but {t} points to "
                "read-only Constant memory"
            )
    try:
        return resolve_overload(b, args)
    except NoMatch:
        decayed = [
            ArgInfo(_decayed(a.type), a.weak, a.value) if _decays(a.type) else a for a in args
        ]
        if not any(_decays(a.type) for a in args):
            raise
        ov = resolve_overload(b, decayed)
        params = tuple(a.type if _decays(a.type) else p for a, p in zip(args, ov.params))
        return Overload(params, ov.ret)


def _decays(t: Type) -> bool:
    return isinstance(t, ArrayType) and len(t.shape) == 1 and isinstance(t.elem, ScalarType)


def _decayed(t: Type) -> PointerType:
    assert isinstance(t, ArrayType)
    return PointerType(t.elem, t.space)


def _ptr(elem: ScalarType, space: AddressSpace) -> PointerType:
    return PointerType(elem, space)


def _loads(elem: ScalarType, ret: Type) -> list[Overload]:
    return [Overload((C.size_t, _ptr(elem, sp)), ret) for sp in LOAD_SPACES]


def _stores(data: Sequence[Type], elem: ScalarType) -> list[Overload]:
    return [Overload((d, C.size_t, _ptr(elem, sp)), C.void) for d in data for sp in STORE_SPACES]


_STORE = frozenset({2})


def _load(lanes: int, stride: int, half: bool = False) -> VectorAccess:
    return VectorAccess(lanes, stride, store=False, half=half)


def _store(lanes: int, stride: int, half: bool = False, rounding: str = "") -> VectorAccess:
    return VectorAccess(lanes, stride, store=True, half=half, rounding=rounding[1:] or None)


for _n in SIZES:
    declare(
        f"vload{_n}",
        family="vload/vstore",
        rule=decaying_rule,
        vector_access=_load(_n, _n),
        overloads=[ov for e in ELEMS for ov in _loads(e, VectorType(e, _n))],
        doc=f"Reads {_n} elements starting at p + offset * {_n} as a {_n}-vector "
        "(aligned to the element size).",
    )
    declare(
        f"vstore{_n}",
        family="vload/vstore",
        rule=decaying_rule,
        writes_args=_STORE,
        vector_access=_store(_n, _n),
        overloads=[ov for e in ELEMS for ov in _stores([VectorType(e, _n)], e)],
        doc=f"Writes the {_n} components of data to p + offset * {_n} (aligned to the "
        "element size).",
    )

declare(
    "vload_half",
    family="vload/vstore",
    rule=decaying_rule,
    vector_access=_load(1, 1, half=True),
    overloads=_loads(C.half, C.float_),
    doc="Reads the half at p + offset and returns it as a float.",
)
for _n in SIZES:
    declare(
        f"vload_half{_n}",
        family="vload/vstore",
        rule=decaying_rule,
        vector_access=_load(_n, _n, half=True),
        overloads=_loads(C.half, VectorType(C.float_, _n)),
        doc=f"Reads {_n} halfs at p + offset * {_n} and returns them as a float{_n}.",
    )
    _stride = 4 if _n == 3 else _n
    declare(
        f"vloada_half{_n}",
        family="vload/vstore",
        rule=decaying_rule,
        vector_access=_load(_n, _stride, half=True),
        overloads=_loads(C.half, VectorType(C.float_, _n)),
        doc=f"Reads a half{_n} at p + offset * {_stride}, aligned to "
        f"{2 * _stride} bytes, and returns it as a float{_n}.",
    )

for _r in ROUNDINGS:
    declare(
        f"vstore_half{_r}",
        family="vload/vstore",
        rule=decaying_rule,
        writes_args=_STORE,
        vector_access=_store(1, 1, True, _r),
        overloads=_stores([C.float_, C.double], C.half),
        doc=f"Converts the float (or double) data to half ({_ROUND_DOC[_r]}) and writes "
        "it to p + offset.",
    )
    for _n in SIZES:
        _data = [VectorType(C.float_, _n), VectorType(C.double, _n)]
        declare(
            f"vstore_half{_n}{_r}",
            family="vload/vstore",
            rule=decaying_rule,
            vector_access=_store(_n, _n, True, _r),
            writes_args=_STORE,
            overloads=_stores(_data, C.half),
            doc=f"Converts float{_n} (or double{_n}) data to half{_n} "
            f"({_ROUND_DOC[_r]}) and writes it to p + offset * {_n}.",
        )
        _stride = 4 if _n == 3 else _n
        declare(
            f"vstorea_half{_n}{_r}",
            family="vload/vstore",
            rule=decaying_rule,
            vector_access=_store(_n, _stride, True, _r),
            writes_args=_STORE,
            overloads=_stores(_data, C.half),
            doc=f"Converts float{_n} (or double{_n}) data to half{_n} "
            f"({_ROUND_DOC[_r]}) and writes it to p + offset * {_stride}, aligned to "
            f"{2 * _stride} bytes.",
        )
