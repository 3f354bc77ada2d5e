"""Calls in the native engine's generated C: work-item queries (from the group's ids and the
work-item's local linear id ``wi``), fences, atomics whose result is unused, and the pure
built-ins of sim/native/builtins.py (``c_call``)."""

from __future__ import annotations

from clpy.ir.nodes import CallBuiltin, CallFunc, Const, Expr
from clpy.types.core import ScalarType
from clpy_sim.native.builtins import c_call
from clpy_sim.native.cgen_expr import ExprGen, Ptr
from clpy_sim.native.ctypes_c import Geometry, Unsupported, c_type, scalar_c

_FENCES = frozenset({"mem_fence", "read_mem_fence", "write_mem_fence", "atomic_work_item_fence"})
# read-modify-writes whose final memory does not depend on the order of the work-items
_ORDER_FREE = {"add": "+", "sub": "-", "inc": "+", "dec": "-", "and": "&", "or": "|", "xor": "^"}


def local_id(d: int, dims: int) -> str:
    if d >= dims:
        return "0"
    if d == 0:
        return "wi" if dims == 1 else "(wi % L0)"
    if d == 1:
        return "(wi / L0)" if dims == 2 else "((wi / L0) % L1)"
    return "(wi / (L0 * L1))"


class BuiltinGen(ExprGen):
    """Built-in calls; the kernel generator (sim/native/cgen.py) supplies ``geom``."""

    geom: Geometry
    uses_atomics: bool
    ordered: bool = False  # groups must run in order on one thread (atomic_value)

    def x_CallFunc(self, e: CallFunc) -> str:
        return self.call_func(e)

    def x_CallBuiltin(self, e: CallBuiltin) -> str:
        return self.builtin(e)

    def dim(self, e: CallBuiltin) -> int:
        if not e.args:
            return 0
        a = e.args[0]
        if not isinstance(a, Const):
            raise Unsupported(f"{e.builtin.name} of a dimension that is not a constant", e.loc)
        return int(a.value)

    def builtin(self, e: CallBuiltin) -> str:
        b = e.builtin
        name = b.name
        dims = self.geom.dims
        if b.index or name == "get_work_dim":
            ct = c_type(e.type, e.loc)
            return f"(({ct})({self.query(e, dims)}))"
        if name in _FENCES:
            return "0"
        if b.atomic is not None:
            return self.atomic_value(e)
        va = b.vector_access
        if va is not None:
            if va.half or va.store:
                raise Unsupported(f"{name}", e.loc)
            return self.vload(e, va.lanes, va.stride)
        if b.collective is not None or b.uniform:
            raise Unsupported(f"work-group function {name}", e.loc)
        args = [self.expr(a) for a in e.args]
        out = c_call(e, args)
        if out is None:
            raise Unsupported(f"built-in {name} ({e.overload})", e.loc)
        return out

    def query(self, e: CallBuiltin, dims: int) -> str:
        name = e.builtin.name
        if name == "get_work_dim":
            return str(dims)
        if name == "get_local_linear_id":
            return "wi"
        if name == "get_global_linear_id":
            terms = []
            stride = ""
            for d in range(dims):
                gid = f"(clpy_g[{d}] * L{d} + {local_id(d, dims)})"
                terms.append(f"{gid}{stride}")
                stride += f" * N[{d}]"
            return "(" + " + ".join(terms) + ")"
        d = self.dim(e)
        if name == "get_local_id":
            return local_id(d, dims)
        if name == "get_group_id":
            return f"clpy_g[{d}]" if d < dims else "0"
        if name == "get_global_id":
            if d >= dims:
                return "0"
            return f"(clpy_g[{d}] * L{d} + {local_id(d, dims)} + N[{6 + d}])"
        if name in ("get_local_size", "get_enqueued_local_size"):
            return f"L{d}" if d < dims else "1"
        if name == "get_global_size":
            return f"N[{d}]" if d < dims else "1"
        if name == "get_num_groups":
            return f"N[{3 + d}]" if d < dims else "1"
        if name == "get_global_offset":
            return f"N[{6 + d}]" if d < dims else "0"
        raise Unsupported(f"work-item function {name}", e.loc)

    def builtin_stmt(self, e: CallBuiltin) -> str | None:
        """A call whose result is unused, as a C statement (None: as an expression)."""
        b = e.builtin
        spec = b.atomic
        if spec is None:
            if b.name in _FENCES:
                return ";"
            va = b.vector_access
            if va is not None and va.store and not va.half:
                return self.vstore(e, va.lanes, va.stride)
            return None
        if spec.op == "fence":
            return ";"
        sym = _ORDER_FREE.get(spec.op)
        if sym is None and spec.op not in ("min", "max"):
            raise Unsupported(f"{b.name} (its result depends on the order)", e.loc)
        indexed = not spec.explicit and len(e.overload.params) == 2 + spec.nvals
        p = self.ptr(e.args[0])
        off = self.expr(e.args[1]) if indexed else None
        rest = e.args[2 if indexed else 1 :]
        elem = _pointee(e.args[0])
        if not isinstance(elem, ScalarType) or not elem.is_int:
            raise Unsupported(f"{b.name} on {elem} (its result depends on the order)", e.loc)
        ct = scalar_c(elem, e.loc)
        if off is not None and p.off == "0":
            place = f"{p.base}[{self.checked_ix(off, p.count, e.args[1])}]"
        else:
            place = p.at(off if off is not None else "0")
        self.atomic_sites.append((p.base, False))  # type: ignore[attr-defined]
        if spec.op in ("inc", "dec"):
            val = "1"
        else:
            val = f"({ct})({self.expr(rest[0])})"
        self.uses_atomics = True
        cmp = "<" if spec.op == "min" else ">"
        # local memory is the running thread's own (one group at a time): a plain update;
        # global memory too where this call runs the launch's every group (no other thread)
        if sym is not None:
            plain = f"{{ {ct} *clpy_ap = &{place}; *clpy_ap = ({ct})(*clpy_ap {sym} {val}); }}"
        else:
            plain = (
                f"{{ {ct} *clpy_ap = &{place}; {ct} clpy_av = {val}; "
                f"if (clpy_av {cmp} *clpy_ap) *clpy_ap = clpy_av; }}"
            )
        if p.base in self.local_mems:  # type: ignore[attr-defined]
            return plain
        if sym is not None:
            fn = {"+": "add", "-": "sub", "&": "and", "|": "or", "^": "xor"}[sym]
            atomic = f"__atomic_fetch_{fn}(&{place}, {val}, __ATOMIC_RELAXED);"
        else:
            atomic = (
                f"{{ {ct} *clpy_ap = &{place}; {ct} clpy_av = {val}; "
                f"{ct} clpy_ao = __atomic_load_n(clpy_ap, __ATOMIC_RELAXED); "
                f"while (clpy_av {cmp} clpy_ao && !__atomic_compare_exchange_n(clpy_ap, &clpy_ao, "
                f"clpy_av, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {{}} }}"
            )
        if self.in_func is not None:  # type: ignore[attr-defined]
            return atomic
        return f"if (clpy_solo) {plain} else {atomic}"

    def atomic_value(self, e: CallBuiltin) -> str:
        """An atomic whose result is used: exact when the work-items run it in the NumPy
        engine's order (group-major, then local id), one at a time. So: one such call in the
        kernel, reached at most once per work-item (in no loop, no device function), no other
        atomic on its memory; the launch then runs its groups in order on one thread."""
        b = e.builtin
        spec = b.atomic
        assert spec is not None
        why = f"{b.name} with its result used"
        if spec.op == "fence":
            return "0"
        loops = self.group_loops or any(t.kind != "func" for t in self.targets)  # type: ignore[attr-defined]
        if self.in_func is not None or loops:  # type: ignore[attr-defined]
            raise Unsupported(f"{why} in a loop or device function", e.loc)
        elem = _pointee(e.args[0])
        if not isinstance(elem, ScalarType) or not elem.is_int:
            raise Unsupported(f"{why} on {elem}", e.loc)
        if spec.op not in (*_ORDER_FREE, "min", "max", "xchg", "cmpxchg", "load"):
            raise Unsupported(f"{b.name}", e.loc)
        indexed = not spec.explicit and len(e.overload.params) == 2 + spec.nvals
        p = self.ptr(e.args[0])
        rest = e.args[2 if indexed else 1 :]
        place = p.at(self.expr(e.args[1]) if indexed else "0")
        ct = scalar_c(elem, e.loc)
        self.atomic_sites.append((p.base, True))  # type: ignore[attr-defined]
        self.ordered = True
        r = "__ATOMIC_RELAXED"
        vals = [f"({ct})({self.expr(a)})" for a in rest[: spec.nvals]]
        op = spec.op
        if op == "load":
            return f"__atomic_load_n(&{place}, {r})"
        if op in ("inc", "dec"):
            return f"__atomic_fetch_{'add' if op == 'inc' else 'sub'}(&{place}, ({ct})1, {r})"
        if op in _ORDER_FREE:
            fn = {"+": "add", "-": "sub", "&": "and", "|": "or", "^": "xor"}[_ORDER_FREE[op]]
            return f"__atomic_fetch_{fn}(&{place}, {vals[0]}, {r})"
        if op == "xchg":
            return f"__atomic_exchange_n(&{place}, {vals[0]}, {r})"
        if op == "cmpxchg":
            return (
                f"({{ {ct} clpy_ae = {vals[0]}; __atomic_compare_exchange_n(&{place}, "
                f"&clpy_ae, {vals[1]}, 0, {r}, {r}); clpy_ae; }})"
            )
        cmp = "<" if op == "min" else ">"
        return (
            f"({{ {ct} *clpy_ap = &{place}; {ct} clpy_av = {vals[0]}; "
            f"{ct} clpy_ao = *clpy_ap; if (clpy_av {cmp} clpy_ao) *clpy_ap = clpy_av; clpy_ao; }})"
        )

    def _base(self, off: Expr, stride: int, p: Ptr) -> str:
        b = f"(int64_t)({self.expr(off)}) * {stride}"
        return b if p.off == "0" else f"({b} + {p.off})"

    def vload(self, e: CallBuiltin, n: int, stride: int) -> str:
        """``vloadN(offset, p)``: element by element, each index checked as a load is."""
        p = self.ptr(e.args[1])
        base = self._base(e.args[0], stride, p)
        items = [f"{p.base}[clpy_ix({base} + {k}, {p.count})]" for k in range(n)]
        if n == 1:
            return items[0]
        ct = c_type(e.type, e.loc)
        if n == 3:
            items.append("0")
        return f"(({ct}){{{', '.join(items)}}})"

    def vstore(self, e: CallBuiltin, n: int, stride: int) -> str:
        data, off, pe = e.args
        p = self.ptr(pe)
        base = self._base(off, stride, p)
        ct = c_type(data.type, e.loc)
        out = [f"{{ {ct} clpy_vs = {self.expr(data)}; int64_t clpy_vb = {base};"]
        for k in range(n):
            el = "clpy_vs" if n == 1 else f"clpy_vs[{k}]"
            out.append(f"{p.base}[clpy_ix(clpy_vb + {k}, {p.count})] = {el};")
        return " ".join(out) + " }"


def _pointee(e: Expr) -> object:
    t = e.type
    return getattr(t, "elem", None)
