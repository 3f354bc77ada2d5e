"""Typed IR statements and functions → OpenCL C."""

from __future__ import annotations

from clpy.abi import param_of
from clpy.emit.c_exprs import (
    RELATIONAL_OPERAND,
    ExprEmitter,
    const_text,
    type_name,
)
from clpy.emit.lower_narrow import convert_spelled_update
from clpy.emit.lower_uniform import loop_barrier_vars
from clpy.emit.writer import Writer
from clpy.ir.nodes import (
    Assert,
    Assign,
    Break,
    CallBuiltin,
    CallFunc,
    Const,
    Continue,
    Declare,
    Expr,
    ExprStmt,
    Field,
    For,
    Function,
    If,
    Index,
    Print,
    Return,
    Stmt,
    Swizzle,
    Var,
    VarRef,
    While,
)
from clpy.ir.walk import walk
from clpy.types import catalog as C
from clpy.types.core import AddressSpace, ArrayType, PointerType, ScalarType, Type, VectorType
from clpy.types.structs import StructType


def declaration(t: Type, name: str, const_ptr: bool = False) -> str:
    """``T name`` with C's array and pointer syntax."""
    if isinstance(t, ArrayType):
        space = "__local " if t.space is AddressSpace.LOCAL else ""
        dims = "".join(f"[{n}]" for n in t.shape)
        return f"{space}{type_name(t.elem)} {name}{dims}"
    if isinstance(t, PointerType):
        # __constant data is read-only already; "const" would only repeat it.
        const = (t.const or const_ptr) and t.space is not AddressSpace.CONSTANT
        return f"{t.with_const(const).cl_name} {name}"
    return f"{type_name(t)} {name}"


class StmtEmitter:
    def __init__(
        self, fn: Function, w: Writer, ex: ExprEmitter, vector_printf: bool = True
    ) -> None:
        self.fn = fn
        self.w = w
        self.ex = ex
        self.names = ex.names
        # False where a driver mangles %vN conversions (NVIDIA): vectors are printed lane by
        # lane with the same text (comma-separated, spec §1.13.13.2).
        self.vector_printf = vector_printf
        # Variables declared volatile where the device needs it (lower_uniform.py
        # loop_barrier_vars: PoCL and a private variable of a divergent loop after a barrier).
        tgt = getattr(ex.call_hook, "tgt", None)
        quirk = tgt is not None and tgt.info.get("volatile_loop_vars")
        self.volatile = loop_barrier_vars(fn) if quirk else frozenset()

    # ------------------------------------------------------------------ function

    def function(self) -> None:
        fn = self.fn
        params = ", ".join(self.param(p) for p in fn.params)
        qual = "__kernel void" if fn.is_kernel else f"{type_name(fn.ret)}"
        fname = self.ex.fn_names.get(fn, fn.name)
        head = f"{qual} {fname}({params})"
        if len(head) > 96 and fn.params:
            self.w.line(f"{qual} {fname}(", fn.loc)
            for i, p in enumerate(fn.params):
                sep = "," if i < len(fn.params) - 1 else ")"
                self.w.line(f"        {self.param(p)}{sep}")
            self.w.open("")
            self.w.lines[-1] = self.w.lines[-1].lstrip()
        else:
            self.w.open(head, fn.loc)
        self.block(fn.body)
        self.w.close()

    def param(self, p: Var) -> str:
        if self.fn.is_kernel:  # a kernel's signature is its parameter ABI's (clpy/abi)
            restrict = p.name in self.fn.noalias
            return param_of(self.fn, p, 0).c_declaration(self.names(p), restrict)
        const = isinstance(p.type, PointerType) and p.name not in self.fn.written
        return declaration(p.type, self.names(p), const_ptr=const)

    # ------------------------------------------------------------------ statements

    def block(self, stmts: tuple[Stmt, ...]) -> None:
        for s in stmts:
            getattr(self, f"s_{type(s).__name__}")(s)

    def s_Declare(self, s: Declare) -> None:
        v = s.var
        const_ptr = isinstance(v.type, PointerType) and v.name not in self.fn.written
        decl = declaration(v.type, self.names(v), const_ptr)
        if v in self.volatile:
            decl = f"volatile {decl}"
            if s.init is not None and self._fieldwise(v, s.init, s, decl):
                return
        if s.init is None:
            self.w.line(f"{decl};", s.loc)
        else:
            self.w.line(f"{decl} = {self.ex(self.ex.implicit(s.init))};", s.loc)

    def _fieldwise(self, v: Var, value: Expr, s: Stmt, decl: str | None = None) -> bool:
        """A whole struct stored into a ``volatile`` one field by field, through a private
        copy: PoCL 3.0 loses a whole-struct copy into a volatile struct across a later
        barrier (the field read back 0; fuzz seed 353992), and is right field by field.
        False (nothing emitted) where the struct has an array field."""
        paths = _leaf_fields(v.type) if isinstance(v.type, StructType) else None
        if not paths:
            return False
        tmp = self.names(Var(f"clpy_{v.name}_value", v.type))
        self.w.line(f"{declaration(v.type, tmp)} = {self.ex(self.ex.implicit(value))};", s.loc)
        name = self.names(v)
        if decl is not None:
            self.w.line(f"{decl};", s.loc)
        for f in paths:
            self.w.line(f"{name}{f} = {tmp}{f};", s.loc)
        return True

    def s_Assign(self, s: Assign) -> None:
        root = s.target.var if isinstance(s.target, VarRef) else None
        if not s.op and root in self.volatile and self._fieldwise(root, s.value, s):
            return
        if s.op and root is not None and convert_spelled_update(s, self.ex.target_info()):
            # `s -= x` narrows as `(short)(s - x)` does: spelled out where the device's
            # narrowing conversion is a quirk (lower_narrow.py); a variable, evaluated twice
            name = self.ex(s.target)
            value = self.ex.operand(self.ex.implicit(s.value))
            text = f"convert_{root.type.cl_name}({name} {s.op} {value})"
            self.w.line(f"{name} = {text};", s.loc)
            return
        op = f"{s.op}=" if s.op else "="
        self.w.line(f"{self.ex(s.target)} {op} {self.ex(self.ex.implicit(s.value))};", s.loc)

    def s_ExprStmt(self, s: ExprStmt) -> None:
        self.w.line(f"{self.ex(s.expr)};", s.loc)

    def s_If(self, s: If) -> None:
        self.w.open(f"if ({self.ex(s.cond)})", s.loc)
        self._if_rest(s)

    def _if_rest(self, s: If) -> None:
        self.block(s.body)
        if len(s.orelse) == 1 and isinstance(s.orelse[0], If):
            inner = s.orelse[0]
            self.w.depth -= 1
            self.w.line(f"}} else if ({self.ex(inner.cond)}) {{", inner.loc)
            self.w.depth += 1
            self._if_rest(inner)
            return
        if s.orelse:
            self.w.depth -= 1
            self.w.line("} else {")
            self.w.depth += 1
            self.block(s.orelse)
        self.w.close()

    def s_While(self, s: While) -> None:
        self.w.open(f"while ({self.ex(s.cond)})", s.loc)
        self.block(s.body)
        self.w.close()

    def s_For(self, s: For) -> None:
        name = self.names(s.var)
        t = s.var.type
        decl = f"{type_name(t)} {name}" if s.declares else name
        if s.declares and s.var in self.volatile:  # a divergent loop's counter (seed 330552)
            decl = f"volatile {decl}"
        # `i > c & 3` would compare first (found by clpy.fuzz): parenthesize a looser stop
        stop = self.ex.sub(s.stop, RELATIONAL_OPERAND)
        needs_stop_temp = not _loop_invariant(s.stop, s.body)
        opened = False
        if needs_stop_temp:  # Python evaluates range()'s stop once
            self._open_scope(s)
            opened = True
            stop_name = self.names(Var(f"{s.var.name}_stop", t))
            self.w.line(f"const {type_name(t)} {stop_name} = {self.ex(s.stop)};")
            stop = stop_name
        step = s.step
        if isinstance(step, Const):
            cmp = "<" if step.value > 0 else ">"
            cond = f"{name} {cmp} {stop}"
            if step.value == 1:
                inc = f"++{name}"
            elif step.value == -1:
                inc = f"--{name}"
            elif step.value > 0:
                inc = f"{name} += {self.ex(step)}"
            else:
                inc = f"{name} -= {const_text(-step.value, step.type)}"
        else:
            step_text = self.ex(step)
            if not _loop_invariant(step, s.body):
                if not opened:
                    self._open_scope(s)
                    opened = True
                step_name = self.names(Var(f"{s.var.name}_step", t))
                self.w.line(f"const {type_name(t)} {step_name} = {step_text};")
                step_text = step_name
            if s.ascending:  # a size query: positive (clpy/frontend/ranges.py)
                cond = f"{name} < {stop}"
            else:
                cond = f"({step_text} > 0) ? ({name} < {stop}) : ({name} > {stop})"
            inc = f"{name} += {step_text}"
        self.w.open(f"for ({decl} = {self.ex(s.start)}; {cond}; {inc})", s.loc)
        self.block(s.body)
        self.w.close()
        if opened:
            self.w.close()

    def _open_scope(self, s: Stmt) -> None:
        """A bare ``{`` block holding a loop's evaluated-once bounds."""
        self.w.line("{", s.loc)
        self.w.depth += 1

    def s_Break(self, s: Break) -> None:
        self.w.line("break;", s.loc)

    def s_Continue(self, s: Continue) -> None:
        self.w.line("continue;", s.loc)

    def s_Return(self, s: Return) -> None:
        if s.value is None:
            self.w.line("return;", s.loc)
        else:
            self.w.line(f"return {self.ex(self.ex.implicit(s.value))};", s.loc)

    def s_Print(self, s: Print) -> None:
        fmt: list[str] = []
        args: list[str] = []
        for i, a in enumerate(s.args):
            if i:
                fmt.append(_escape(s.sep))
            if isinstance(a, Const) and a.type is C.void:
                fmt.append(_escape(str(a.value)))
                continue
            text = self.ex(a)
            t = a.type
            if isinstance(t, VectorType) and not self.vector_printf:
                lane_spec, _ = printf_spec(t, text)
                conv = lane_spec[-1]
                length = {8: "hh", 16: "h", 32: "", 64: "l"}[t.elem.bits]
                one = "%f" if t.elem.is_float else f"%{length}{conv}"
                fmt.append(",".join([one] * t.n))
                lanes = [f"({text}).s{'0123456789ABCDEF'[k]}" for k in range(t.n)]
                if t.elem.bits == 16 and t.elem.is_float:
                    lanes = [f"(float){x}" for x in lanes]
                args.extend(lanes)
                continue
            spec, arg = printf_spec(t, text)
            fmt.append(spec)
            args.append(arg)
        fmt.append(_escape(s.end))
        joined = "".join(fmt)
        self.w.line(f'printf("{joined}"{"".join(", " + x for x in args)});', s.loc)

    def s_Assert(self, s: Assert) -> None:
        where = f"{s.loc.file.rsplit('/', 1)[-1]}:{s.loc.line}"
        msg = _escape(f"clpy assertion failed at {where}: {s.message}\n")
        self.w.open(f"if (!({self.ex(s.cond)}))", s.loc)
        self.w.line(f'printf("{msg}");')
        self.w.close()


def printf_spec(t: Type, text: str) -> tuple[str, str]:
    """printf conversion for a value (spec §1.13.13; vectors use ``%vN<len><conv>``)."""
    if isinstance(t, VectorType):
        e = t.elem
        length = {8: "hh", 16: "h", 32: "hl", 64: "l"}[e.bits]
        conv = "f" if e.is_float else ("d" if e.is_signed else "u")
        if e.is_float:
            length = {16: "h", 32: "hl", 64: "l"}[e.bits]
        return f"%v{t.n}{length}{conv}", text
    if isinstance(t, PointerType):
        return "%p", text
    assert isinstance(t, ScalarType)
    if t.is_float:
        return "%g", text if t is not C.half else f"(float)({text})"
    if t.is_bool:
        return "%d", f"(int)({text})"
    if t.bits == 64:
        return ("%ld" if t.is_signed else "%lu"), text
    return ("%d" if t.is_signed else "%u"), text


def _escape(text: str) -> str:
    return (
        text.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("%", "%%")
        .replace("\n", "\\n")
        .replace("\t", "\\t")
    )


def _root_var(target: Expr) -> Var | None:
    """The variable an assignment stores into (``s.n``, ``v.x``, ``arr[i][j]`` → s, v, arr);
    None for stores through pointers."""
    while isinstance(target, (Field, Swizzle, Index)):
        if isinstance(target, Index) and isinstance(target.base.type, PointerType):
            return None
        target = target.base
    return target.var if isinstance(target, VarRef) else None


def _loop_invariant(e: Expr, body: tuple[Stmt, ...]) -> bool:
    """True when ``e`` is a constant or variables that the loop body never assigns."""
    assigned: set[Var] = set()
    for n in walk(body):
        if isinstance(n, Assign):
            root = _root_var(n.target)
            if root is not None:
                assigned.add(root)
        elif isinstance(n, For):
            assigned.add(n.var)
    for n in walk([ExprStmt(e.loc, e)]):
        if isinstance(n, (CallBuiltin, CallFunc, Index)):
            return False
        if isinstance(n, VarRef) and n.var in assigned:
            return False
    return True


__all__ = ["StmtEmitter", "declaration", "StructType"]


def _leaf_fields(t: StructType, prefix: str = "") -> list[str] | None:
    """``.f0``, ``.inner.f1`` ... for every scalar and vector field of ``t``, nested structs
    included; None when a field is an array (C cannot assign one)."""
    out: list[str] = []
    for fname, ftype in t.fields:
        if isinstance(ftype, StructType):
            inner = _leaf_fields(ftype, f"{prefix}.{fname}")
            if inner is None:
                return None
            out += inner
        elif isinstance(ftype, ArrayType):
            return None
        else:
            out.append(f"{prefix}.{fname}")
    return out
