"""Atomic functions: OpenCL 1.x ``atomic_*``/``atom_*`` (spec 1.x §6.12.11, cl_khr_*_atomics)
and the C11-style OpenCL C 2.0 ones (spec §1.13.11).

Pointer argument: Python has no ``&``; every atomic takes either a pointer expression
(``counter``, ``counter + i``) or a pointer and an element index, which means ``&p[i]``::

    old = clpy.atomic_add(hist, bin, 1)            # atomic_add(&hist[bin], 1)
    clpy.atomic_fetch_add(counter, 1)              # atomic_fetch_add(counter, 1)
    old = clpy.atomic_compare_exchange(p, i, expected, desired)   # returns the old value

The pointee may be a plain type (``Global[int32]``) or an atomic type (``Global[atomic_int]``);
the emitter casts as each form needs. C11 forms lower to 1.x built-ins on OpenCL C 1.2 targets
(memory order and scope arguments are then dropped: 1.x atomics are relaxed, so only
``memory_order_relaxed`` is exactly equivalent; fences are kept as ``mem_fence``).
``compare_exchange_strong/weak(p, expected, desired)`` take ``expected`` as a pointer as in C
(``e = clpy.private_array(int32, 1)``) and return ``bool``; ``clpy.atomic_compare_exchange``
is the Python-friendly form returning the old value. ``clpy.atomic_add``/``atomic_fetch_add``
on float/double use a compare-exchange loop. Simulator: results of one sequential order of the
atomic operations (work-item order by default, ``clpy.sim.config(atomic_order="shuffled")``).
"""

from __future__ import annotations

from collections.abc import Sequence

from clpy.builtins.registry import (
    ArgInfo,
    AtomicSpec,
    Builtin,
    Lowering,
    NoMatch,
    Overload,
    declare,
)
from clpy.types import catalog as C
from clpy.types.atomics import AtomicType
from clpy.types.core import AddressSpace, ArrayType, PointerType, ScalarType, Type

INT32 = (C.int_, C.uint)
INT64 = (C.long, C.ulong)
INTS = INT32 + INT64
FLOATS = (C.float_, C.double)


def value_type(p: PointerType | ArrayType) -> ScalarType | None:
    e = p.elem
    if isinstance(e, AtomicType):
        return e.value
    return e if isinstance(e, ScalarType) else None


def _rule(b: Builtin, args: Sequence[ArgInfo]) -> Overload:
    spec = b.atomic
    assert spec is not None
    nv = spec.nvals + spec.explicit
    if spec.op == "fence":
        if len(args) != 3:
            raise NoMatch(f"{b.name}(flags, order, scope) takes 3 arguments")
        return Overload((C.uint, C.int_, C.int_), C.void)
    explicit = spec.explicit
    if explicit:  # the scope argument is optional; no index form (use ``p + i``)
        explicit = len(args) - 1 - spec.nvals
        if explicit not in (spec.explicit - 1, spec.explicit):
            raise NoMatch(
                f"{b.name} takes a pointer, {spec.nvals} value(s), then "
                f"{spec.explicit - 1} memory order(s) and an optional scope"
            )
        nv = spec.nvals + explicit
    elif len(args) not in (1 + nv, 2 + nv):
        raise NoMatch(
            f"{b.name} takes a pointer, an optional element index and {nv} more "
            f"argument(s); got {len(args)}"
        )
    p = args[0].type
    if isinstance(p, ArrayType) and p.space is AddressSpace.LOCAL and len(p.shape) == 1:
        p = PointerType(p.elem, AddressSpace.LOCAL)  # a clpy.local_array decays to a pointer
    if not isinstance(p, PointerType) or p.space in (AddressSpace.CONSTANT, AddressSpace.PRIVATE):
        raise NoMatch(
            f"{b.name} needs a Global, Local or generic pointer as its first argument, not {p}"
        )
    v = value_type(p)
    if spec.op.startswith("flag"):
        if not (isinstance(p.elem, AtomicType) and p.elem.flag) and v not in INT32:
            raise NoMatch(f"{b.name} needs a pointer to atomic_flag (or int), not {p}")
        v = C.int_
    elif v not in spec.types:
        raise NoMatch(
            f"{b.name} works on {', '.join(t.name for t in spec.types)}; the "
            f"pointer {p} points to {p.elem}"
        )
    assert v is not None
    params: list[Type] = [args[0].type]
    if len(args) == 2 + nv:
        it = args[1].type
        if not (isinstance(it, ScalarType) and it.is_int):
            raise NoMatch(f"the element index of {b.name} must be an integer, not {it}")
        params.append(it)
    if spec.op in ("cas_strong", "cas_weak"):
        e = args[len(params)].type
        if not (isinstance(e, (PointerType, ArrayType)) and e.elem is v):
            raise NoMatch(
                f"{b.name}: 'expected' must be a pointer to {v} (e.g. a "
                "clpy.private_array(..., 1)); clpy.atomic_compare_exchange(p, "
                "expected, desired) takes values and returns the old value"
            )
        params += [e, v]
    else:
        params += [v] * spec.nvals
    params += [C.int_] * explicit
    ret = {"old": v, "void": C.void, "bool": C.bool_}[spec.ret]
    return Overload(tuple(params), ret)


def _declare(name: str, spec: AtomicSpec, doc: str) -> Builtin:
    writes = frozenset() if spec.op == "fence" else frozenset({0})  # C: non-const pointer
    return declare(
        name,
        family="atomics",
        doc=doc,
        rule=_rule,
        writes_args=writes,
        atomic=spec,
        lowering=Lowering("atomic", always=True),
        signature=_signature(name, spec),
    )


def _signature(name: str, spec: AtomicSpec) -> str:
    if spec.op == "fence":
        return f"{name}(flags: uint, order: int, scope: int) -> void"
    vals = {
        "cmpxchg": ["cmp: T", "val: T"],
        "cas_strong": ["expected: Ptr[T]", "desired: T"],
        "cas_weak": ["expected: Ptr[T]", "desired: T"],
    }.get(spec.op, ["val: T"] * spec.nvals)
    if spec.explicit:
        vals += ["order: int"] * (spec.explicit - 1) + ["[scope: int]"]
        head = "p: Global|Local|Ptr[T]"
    else:
        head = "p: Global|Local|Ptr[T], [index: int]"
    ret = {"old": "T", "void": "void", "bool": "bool"}[spec.ret]
    kinds = ", ".join(t.name for t in spec.types)
    return f"{name}({', '.join([head, *vals])}) -> {ret}  (T: {kinds})"


_OPS_1X = {
    "add": "old + val",
    "sub": "old - val",
    "xchg": "val",
    "inc": "old + 1",
    "dec": "old - 1",
    "min": "min(old, val)",
    "max": "max(old, val)",
    "and": "old & val",
    "or": "old | val",
    "xor": "old ^ val",
}
ATOMICS: dict[str, Builtin] = {}
for _op, _what in _OPS_1X.items():
    _n = 0 if _op in ("inc", "dec") else 1
    _types: tuple[ScalarType, ...] = INT32 + ((C.float_,) if _op == "xchg" else ())
    if _op == "add":
        _types = INT32 + FLOATS  # float add: a compare-exchange loop
    ATOMICS[f"atomic_{_op}"] = _declare(
        f"atomic_{_op}",
        AtomicSpec(_op, _n, "old", _types),
        f"OpenCL 1.x: atomically ``*p = {_what}``; returns the old value. "
        f"``atomic_{_op}(p, [i,] ...)``, ``i`` an element index.",
    )
    ATOMICS[f"atom_{_op}"] = _declare(
        f"atom_{_op}",
        AtomicSpec(_op, _n, "old", INTS + (FLOATS if _op == "add" else ())),
        f"cl_khr_int64_*_atomics spelling (32- and 64-bit): atomically ``*p = {_what}``; "
        "returns the old value.",
    )
for _pre in ("atomic", "atom"):
    ATOMICS[f"{_pre}_cmpxchg"] = _declare(
        f"{_pre}_cmpxchg",
        AtomicSpec("cmpxchg", 2, "old", (INT32 if _pre == "atomic" else INTS)),
        "Atomically ``*p = old == cmp ? val : old``; returns the old value: "
        f"``{_pre}_cmpxchg(p, [i,] cmp, val)``.",
    )
ATOMICS["atomic_compare_exchange"] = _declare(
    "atomic_compare_exchange",
    AtomicSpec("cmpxchg", 2, "old", INTS + FLOATS),
    "clpy's Python-friendly compare-exchange: ``old = atomic_compare_exchange(p, [i,] "
    "expected, desired)`` stores ``desired`` when ``*p == expected`` (bitwise for floats) and "
    "returns the old value (success when ``old == expected``).",
)

_C11_TYPES = INTS + FLOATS
_C11 = {
    "atomic_init": AtomicSpec("init", 1, "void", _C11_TYPES, True),
    "atomic_store": AtomicSpec("store", 1, "void", _C11_TYPES, True),
    "atomic_load": AtomicSpec("load", 0, "old", _C11_TYPES, True),
    "atomic_exchange": AtomicSpec("xchg", 1, "old", _C11_TYPES, True),
    "atomic_compare_exchange_strong": AtomicSpec("cas_strong", 2, "bool", _C11_TYPES, True),
    "atomic_compare_exchange_weak": AtomicSpec("cas_weak", 2, "bool", _C11_TYPES, True),
    "atomic_flag_test_and_set": AtomicSpec("flag_set", 0, "bool", INT32, True),
    "atomic_flag_clear": AtomicSpec("flag_clear", 0, "void", INT32, True),
}
for _op in ("add", "sub", "or", "xor", "and", "min", "max"):
    _C11[f"atomic_fetch_{_op}"] = AtomicSpec(
        _op, 1, "old", INTS + (FLOATS if _op == "add" else ()), True
    )
for _name, _spec in list(_C11.items()):
    ATOMICS[_name] = _declare(
        _name,
        _spec,
        f"OpenCL C 2.0 {_name} (spec §1.13.11); memory_order_seq_cst, memory_scope_device.",
    )
    if _name == "atomic_init":
        continue
    _ex = AtomicSpec(
        _spec.op,
        _spec.nvals,
        _spec.ret,
        _spec.types,
        True,
        explicit=(3 if _spec.op.startswith("cas") else 2),
    )
    ATOMICS[f"{_name}_explicit"] = _declare(
        f"{_name}_explicit",
        _ex,
        f"{_name} with explicit memory_order (two for compare-exchange: success, failure) "
        "and memory_scope arguments (spec §1.13.11).",
    )
ATOMICS["atomic_work_item_fence"] = _declare(
    "atomic_work_item_fence",
    AtomicSpec("fence", 0, "void", ()),
    "``atomic_work_item_fence(flags, order, scope)``: a fence for this work-item's accesses "
    "(spec §1.13.11.1); ``mem_fence(flags)`` on OpenCL C 1.2.",
)
