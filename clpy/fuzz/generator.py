"""Random well-defined clpy kernels (CLsmith's recipe in clpy's language).

``generate(seed, features)`` gives a ``Program``: a few typed variables initialised from
random inputs, a body of statements (assignments, swizzle and field stores, ``if``/``else``
on divergent conditions, bounded ``for``/``while`` loops with ``break``/``continue``, local
memory exchanges between barriers, work-group and sub-group collectives, order-independent
atomics, ``print``), then every variable written to the work-item's own output slots.
Barriers and collectives appear only at the top level of the kernel, so every work-item of
a group reaches them. The same seed gives the same program.
"""

from __future__ import annotations

import zlib

import numpy as np

from clpy.fuzz import features as F
from clpy.fuzz.exprgen import ExprGen, UserFunc
from clpy.fuzz.limits import COLLECTIVE_OPS, key
from clpy.fuzz.nodes import BOOL, Expr, Helper, Param, Program, Stmt
from clpy.fuzz.types import FT, INT32, INTS, SCALARS, UINT32, vec

INPUT_LEN = 64  # elements per input buffer (a power of two: indices are masked)


class Generator:
    """``avoid``: collective constructs (clpy.fuzz.limits ``key`` names) some listed device's
    target cannot emit; the generator picks another. With none avoided the random choices
    are the same as without the argument, so a seed's program does not change."""

    def __init__(
        self, seed: int, features: frozenset[str], avoid: frozenset[str] = frozenset()
    ) -> None:
        self.seed = seed
        self.rng = np.random.default_rng([seed, zlib.crc32(b"clpy.fuzz")])
        self.features = features
        self.avoid = avoid
        self.helpers: list[Helper] = []
        self.params: list[Param] = []
        self.inputs: dict[FT, tuple[str, int]] = {}
        for t in INTS + tuple(SCALARS[f] for f in ("float", "double") if f in features):
            name = f"in_{t.cl}"
            self.inputs[t] = (name, INPUT_LEN)
            self.params.append(Param(name, f"Global[{t.py}]", t.cl, INPUT_LEN, "in"))
        self.g = ExprGen(self.rng, features, self._add_helper, self.inputs)
        self.counter = 0
        self.outputs: list[tuple[str, FT]] = []  # (expression text, scalar or vector type)
        self.atomic_ops: list[str] = []
        self.ticketed = False
        self.prints = 0
        # a loop with a work-item-dependent trip count was generated (see F.LOOP_BARRIER)
        self.divergent_loop = False

    def _add_helper(self, h: Helper) -> str:
        if all(x.name != h.name for x in self.helpers):
            self.helpers.append(h)
        return h.name

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    # ------------------------------------------------------------------ geometry
    def geometry(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        if self.rng.random() < 0.25:
            lx, ly = self.g.pick(((4, 2), (8, 4), (2, 8), (16, 2), (3, 5)))
            gx, gy = lx * int(self.rng.integers(1, 4)), ly * int(self.rng.integers(1, 3))
            return (gx, gy), (lx, ly)
        lx = self.g.pick((1, 2, 7, 8, 16, 32, 64, 13))
        return (lx * int(self.rng.integers(1, 5)),), (lx,)

    # ------------------------------------------------------------------ program
    def program(self) -> Program:
        gsize, lsize = self.geometry()
        self.lsize = lsize
        self.lsize_total = int(np.prod(lsize))
        body: list[Stmt] = [
            Stmt("lin = clpy.get_global_linear_id()", pinned=True),
            Stmt("lid = clpy.get_local_linear_id()", pinned=True),
        ]
        self.g.scope.add(INT32, "lin")
        self.g.scope.add(INT32, "lid")
        if F.FUNC in self.features:
            for _ in range(int(self.rng.integers(0, 3))):
                self.user_func()
        if F.STRUCT in self.features and self.rng.random() < 0.5:
            body += self.struct_decl()
        for _ in range(int(self.rng.integers(3, 9))):
            body.append(self.declare(self.g.random_type()))
        for _ in range(int(self.rng.integers(3, 12))):
            body.append(self.stmt(0, top=True))
        body += self.output_stmts()
        return Program(
            name=f"fuzz_{self.seed}",
            seed=self.seed,
            params=tuple(self.params),
            body=tuple(body),
            helpers=tuple(self.helpers),
            global_size=gsize,
            local_size=lsize,
            features=self.features,
        )

    def declare(self, t: FT) -> Stmt:
        name = self.fresh("v")
        init = self.g.expr(t, 2)
        self.g.scope.add(t, name)
        self.outputs.append((name, t))
        return Stmt(f"{name}: {t.spelling} = {{0}}", (init,), declares=name)

    def assign_target(self) -> tuple[str, FT] | None:
        opts = [
            (n, t)
            for t, ns in self.g.scope.vars.items()
            for n in ns
            if n not in ("lin", "lid") and not n.startswith("i")
        ]
        opts += [(n, t) for t, ns in self.g.scope.fields.items() for n in ns]
        return self.g.pick(opts) if opts else None

    # ------------------------------------------------------------------ statements
    def stmt(self, depth: int, top: bool = False, in_loop: bool = False) -> Stmt:
        kinds = ["assign"] * 6
        if depth < 3 and F.CONTROL in self.features:
            kinds += ["if", "if", "for", "while"]
        if in_loop and F.CONTROL in self.features:
            kinds += ["break"]
        if "vector" in self.features:
            kinds += ["swizzle_store"]
        barriers = F.LOOP_BARRIER in self.features or not self.divergent_loop
        if top and barriers:
            if F.LOCAL in self.features:
                kinds += ["local"]
            if F.COLLECTIVE in self.features:
                kinds += ["collective", "collective"]
            if F.SUBGROUP in self.features:
                kinds += ["subgroup"]
            if F.REDUCTION in self.features:
                kinds += ["reduction"]
        if top:
            if F.ATOMIC in self.features and not self.ticketed:
                kinds += ["ticket"]
        if F.ATOMIC in self.features:
            kinds += ["atomic"]
        if F.PRINTF in self.features and self.prints < 2:
            kinds += ["print"]
        kind = self.g.pick(kinds)
        return getattr(self, f"s_{kind}")(depth, in_loop)

    def block(self, depth: int, in_loop: bool) -> tuple[Stmt, ...]:
        saved = self.g.scope.copy()
        out = tuple(
            self.stmt(depth + 1, in_loop=in_loop) for _ in range(int(self.rng.integers(1, 4)))
        )
        self.g.scope = saved
        return out

    def s_assign(self, depth: int, in_loop: bool) -> Stmt:
        tgt = self.assign_target()
        if tgt is None:
            return self.declare(INT32)
        name, t = tgt
        return Stmt(f"{name} = {{0}}", (self.g.expr(t, 3),))

    def s_swizzle_store(self, depth: int, in_loop: bool) -> Stmt:
        vecs = [(n, t) for t, ns in self.g.scope.vars.items() for n in ns if t.is_vector]
        if not vecs:
            return self.s_assign(depth, in_loop)
        name, t = self.g.pick(vecs)
        k = int(self.rng.integers(1, min(t.lanes, 4) + 1))
        lanes = self.rng.permutation(t.lanes)[:k]
        if t.lanes <= 4 and self.rng.random() < 0.5:
            sw = "".join("xyzw"[i] for i in lanes)
        else:
            sw = "s" + "".join(f"{i:x}" for i in lanes)
        return Stmt(f"{name}.{sw} = {{0}}", (self.g.expr(vec(t.elem, k), 2),))

    def s_if(self, depth: int, in_loop: bool) -> Stmt:
        cond = self.g.cond(2)
        body = self.block(depth, in_loop)
        orelse = self.block(depth, in_loop) if self.rng.random() < 0.5 else None
        return Stmt("if {0}:", (cond,), body=body, orelse=orelse)

    def s_for(self, depth: int, in_loop: bool) -> Stmt:
        i = self.fresh("i")
        k = int(self.rng.integers(0, 3))
        kids: tuple[Expr, ...] = ()
        if k == 0:
            head = f"for {i} in range({int(self.rng.integers(0, 5))}):"
        elif k == 1:
            start, step = int(self.rng.integers(4, 9)), int(self.rng.integers(1, 3))
            head = f"for {i} in range({start}, {{0}}, -{step}):"
            kids = (Expr(INT32, "({0} & 3)", (self.g.expr(INT32, 1),), keep=True),)
        else:
            head = f"for {i} in range({{0}}):"
            kids = (Expr(INT32, "({0} & 7)", (self.g.expr(INT32, 1),), keep=True),)
        self.divergent_loop |= k != 0  # the bound may depend on the work-item
        saved = self.g.scope.copy()
        self.g.scope.add(INT32, i)
        body = tuple(
            self.stmt(depth + 1, in_loop=True) for _ in range(int(self.rng.integers(1, 4)))
        )
        self.g.scope = saved
        return Stmt(head, kids, body=body)

    def s_while(self, depth: int, in_loop: bool) -> Stmt:
        w = self.fresh("w")
        bound = Expr(INT32, "({0} & 7)", (self.g.expr(INT32, 1),), keep=True)
        self.divergent_loop = True
        saved = self.g.scope.copy()
        inner = tuple(
            self.stmt(depth + 1, in_loop=True) for _ in range(int(self.rng.integers(1, 3)))
        )
        self.g.scope = saved
        return Stmt(
            f"{w} = 0\nwhile {w} < {{0}}:", (bound,), body=(Stmt(f"{w} += 1", pinned=True),) + inner
        )

    def s_break(self, depth: int, in_loop: bool) -> Stmt:
        kw = self.g.pick(("break", "continue"))
        return Stmt("if {0}:", (self.g.cond(1),), body=(Stmt(kw, pinned=True),))

    def s_local(self, depth: int, in_loop: bool) -> Stmt:
        tgt = self.assign_target()
        if tgt is None or tgt[0].count(".") or tgt[1].is_vector:
            return self.s_assign(depth, in_loop)
        name, t = tgt
        tile = self.fresh("tile")
        n = self.lsize_total
        shift = int(self.rng.integers(1, n + 1))
        text = (
            f"{tile} = clpy.local_array({t.py}, {n})\n"
            f"{tile}[lid] = {{0}}\n"
            "clpy.barrier()\n"
            f"{name} = {tile}[(lid + {shift}) % {n}]\n"
            "clpy.barrier()"
        )
        return Stmt(text, (self.g.expr(t, 2),))

    def _collective_type(self) -> FT:
        return self.g.pick((INT32, UINT32, SCALARS["long"], SCALARS["ulong"]))

    def _collective_arg(self, t: FT, op: str) -> Expr:
        """Arguments small enough that signed sums and products cannot overflow."""
        e = self.g.expr(t, 2)
        if t.signed and op in ("+", "-"):
            return Expr(t, f"(({{0}} & {t.py}(1023)) - {t.py}(512))", (e,), keep=True)
        if t.signed and op == "*":
            return Expr(t, f"(({{0}} & {t.py}(2)) - {t.py}(1))", (e,), keep=True)
        return e

    _MODE_OF_K = ("reduce", "scan_inclusive", "scan_exclusive", "broadcast")

    def _allowed(self, scope: str, k: int, op: str) -> tuple[int, str] | None:
        """``(k, op)`` if the targets can emit it, else another allowed choice (None: none)."""
        if self._ok(scope, k, op):
            return k, op
        opts = [(kk, o) for kk in range(3) for o in COLLECTIVE_OPS] + [(3, op), (4, op)]
        ok = [c for c in opts if self._ok(scope, *c)]
        return self.g.pick(ok) if ok else None

    def _ok(self, scope: str, k: int, op: str) -> bool:
        if k < 3:
            return key(scope, self._MODE_OF_K[k], op) not in self.avoid
        if k == 3:
            return key(scope, "broadcast") not in self.avoid
        return not {key(scope, "all"), key(scope, "any")} <= self.avoid

    def _collective(self, scope: str) -> Stmt:
        t = self._collective_type()
        tgt = self.fresh("c")
        k = int(self.rng.integers(0, 6))
        op = self.g.pick(COLLECTIVE_OPS)
        if self.avoid:
            choice = self._allowed(scope, k, op)
            if choice is None:
                return self.s_assign(0, False)
            k, op = choice
        arg = self._collective_arg(t, op)
        if k < 3:
            fn = self._MODE_OF_K[k]
            call = f'clpy.{scope}_{fn}({{0}}, "{op}")'
        elif k == 3 and scope == "sub_group":
            call = "clpy.sub_group_broadcast({0}, 0)"
        elif k == 3:
            who = int(self.rng.integers(0, self.lsize_total))
            lx = self.lsize[0]
            ids = f"{who % lx}, {who // lx}" if len(self.lsize) == 2 else str(who)
            call = f"clpy.work_group_broadcast({{0}}, {ids})"
        else:
            fns = [f for f in ("all", "any") if key(scope, f) not in self.avoid]
            fn = self.g.pick(("all", "any")) if len(fns) == 2 else fns[0]
            t = INT32
            arg = self.g.cond(2)
            call = f"clpy.{scope}_{fn}({{0}})"
        self.g.scope.add(t, tgt)
        self.outputs.append((tgt, t))
        return Stmt(f"{tgt}: {t.py} = {call}", (arg,), declares=tgt)

    def s_collective(self, depth: int, in_loop: bool) -> Stmt:
        return self._collective("work_group")

    def s_subgroup(self, depth: int, in_loop: bool) -> Stmt:
        return self._collective("sub_group")

    def s_reduction(self, depth: int, in_loop: bool) -> Stmt:
        scope = "work_group"
        fns: tuple[str, ...] = ("reduce", "scan_inclusive", "scan_exclusive")
        if self.avoid:
            fns = tuple(f for f in fns if key(scope, f, "user") not in self.avoid)
            if not fns:
                return self.s_assign(depth, in_loop)
        s = self.reduction_struct()
        tgt = self.fresh("r")
        a = self.g.expr(INT32, 2)
        b = self.g.expr(UINT32, 2)
        fn = self.g.pick(fns)
        cons = Expr(INT32, f"{s}({{0}}, {{1}})", (a, b), keep=True)
        stmt = Stmt(f"{tgt} = clpy.{scope}_{fn}({{0}}, {s.lower()}_op)", (cons,), declares=tgt)
        self.outputs.append((f"{tgt}.hi", INT32))
        self.outputs.append((f"{tgt}.acc", UINT32))
        return stmt

    def reduction_struct(self) -> str:
        name = "RedPair"
        if all(h.name != name for h in self.helpers):
            self._add_helper(
                Helper(name, ("@clpy.struct\nclass RedPair:\n    hi: int32\n    acc: uint32"))
            )
            # max of one field, wrapping sum of the other: associative and commutative,
            # so any combination order gives the same bits.
            self._add_helper(
                Helper(
                    "redpair_op",
                    (
                        "@clpy.reduction(identity=RedPair(-2147483648, 0))\n"
                        "def redpair_op(a: RedPair, b: RedPair) -> RedPair:\n"
                        "    return RedPair(max(a.hi, b.hi), a.acc + b.acc)"
                    ),
                )
            )
        return name

    def s_atomic(self, depth: int, in_loop: bool) -> Stmt:
        if not self.atomic_ops:
            self.params.append(Param("counters", "Global[int32]", "int", 8, "atomic"))
            self.params.append(Param("ucounters", "Global[uint32]", "uint", 8, "atomic"))
        # one operator per slot: mixing add with min on one location would be order-dependent
        ops = ("add", "sub", "min", "max", "and", "or", "xor", "inc")
        slot = int(self.rng.integers(0, 8))
        op = ops[slot]
        self.atomic_ops.append(op)
        buf, t = self.g.pick((("counters", INT32), ("ucounters", UINT32)))
        if op == "sub":
            op = "add" if self.rng.random() < 0.5 else "sub"  # add and sub commute
        if op == "inc":
            return Stmt(f"clpy.atomic_inc({buf}, {slot})")
        return Stmt(f"clpy.atomic_{op}({buf}, {slot}, {{0}})", (self.g.expr(t, 2),))

    def s_ticket(self, depth: int, in_loop: bool) -> Stmt:
        """Fetch results of one counter: which work-item gets which value depends on the
        order, the multiset of values does not (compare.py sorts ``tickets``)."""
        self.ticketed = True
        self.params.append(Param("ticket", "Global[uint32]", "uint", 1, "atomic"))
        self.params.append(Param("tickets", "Global[uint32]", "uint", 1, "out"))
        take = Stmt("tickets[lin] = clpy.atomic_inc(ticket, 0)")
        if self.rng.random() < 0.5:
            return Stmt("if {0}:", (self.g.cond(1),), body=(take,))
        return take

    def s_print(self, depth: int, in_loop: bool) -> Stmt:
        self.prints += 1
        ints = [t for t in self.g.scope.vars if not t.is_vector and not t.is_float and t != BOOL]
        t = self.g.pick(ints) if ints else INT32
        parts = [self.g.expr(t, 1)]
        fmt = f'print("p{self.prints}", lin, {{0}}'
        if "float" in self.features and self.rng.random() < 0.5:
            parts.append(self.g.expr(SCALARS["float"], 1))
            fmt += ", {1}"
        return Stmt("if {0}:", (self.g.cond(1),), body=(Stmt(fmt + ")", tuple(parts)),))

    # ------------------------------------------------------------------ definitions
    def user_func(self) -> None:
        name = self.fresh("uf")
        ptypes = tuple(self.g.random_type(0.2) for _ in range(int(self.rng.integers(1, 4))))
        ret = self.g.random_type(0.2)
        saved, saved_inputs = self.g.scope, self.g.inputs
        self.g.scope, self.g.inputs, self.g.in_kernel = type(saved)(), {}, False
        pnames = [f"p{k}" for k in range(len(ptypes))]
        for n, t in zip(pnames, ptypes):
            self.g.scope.add(t, n)
        outer_funcs = list(self.g.funcs)
        body: list[str] = []
        for k in range(int(self.rng.integers(0, 3))):
            t = self.g.random_type(0.2)
            e = self.g.expr(t, 2)
            body.append(f"    t{k}: {t.spelling} = {e.render()}")
            self.g.scope.add(t, f"t{k}")
        if self.rng.random() < 0.5:
            c = self.g.cond(1).render()
            body.append(f"    if {c}:\n        return {self.g.expr(ret, 2).render()}")
        body.append(f"    return {self.g.expr(ret, 3).render()}")
        self.g.scope, self.g.inputs, self.g.in_kernel = saved, saved_inputs, True
        self.g.funcs = outer_funcs + [UserFunc(name, ptypes, ret)]
        params = ", ".join(f"{n}: {t.spelling}" for n, t in zip(pnames, ptypes))
        self._add_helper(
            Helper(name, f"@clpy.func\ndef {name}({params}) -> {ret.spelling}:\n" + "\n".join(body))
        )

    def struct_decl(self) -> list[Stmt]:
        fields = [
            (f"f{k}", self.g.pick(self.g.scalar_types()))
            for k in range(int(self.rng.integers(2, 5)))
        ]
        sname = "Rec"
        text = "@clpy.struct\nclass Rec:\n" + "\n".join(f"    {n}: {t.py}" for n, t in fields)
        self._add_helper(Helper(sname, text))
        self.params.append(Param("in_rec", "Global[Rec]", "Rec", INPUT_LEN, "in"))
        self.struct_fields = fields
        var = self.fresh("s")
        out: list[Stmt] = []
        if self.rng.random() < 0.5:
            init = Expr(INT32, "in_rec[{0}]", (self.g.index(INPUT_LEN, 1),))
        else:
            kids = tuple(self.g.expr(t, 1) for _, t in fields)
            holes = ", ".join(f"{{{i}}}" for i in range(len(kids)))
            init = Expr(INT32, f"Rec({holes})", kids, keep=True)
        out.append(Stmt(f"{var} = {{0}}", (init,), declares=var))
        for n, t in fields:
            self.g.scope.fields.setdefault(t, []).append(f"{var}.{n}")
            self.outputs.append((f"{var}.{n}", t))
        if F.FUNC in self.features and self.rng.random() < 0.7:
            fname = self.fresh("sf")
            n0, t0 = fields[0]
            n1, t1 = fields[-1]
            body = (
                f"    r.{n0} = {self.g.pick(['r.' + n for n, t in fields if t == t0])}\n"
                f"    return r.{n1}"
            )
            self._add_helper(Helper(fname, f"@clpy.func\ndef {fname}(r: Rec) -> {t1.py}:\n{body}"))
            self.g.scope.reads.setdefault(t1, []).append(f"{fname}({var})")
        return out

    # ------------------------------------------------------------------ outputs
    def output_stmts(self) -> list[Stmt]:
        per: dict[str, list[tuple[str, FT]]] = {}
        for text, t in self.outputs:
            per.setdefault(t.cl, []).append((text, t))
        out: list[Stmt] = []
        for cl, items in per.items():
            e = SCALARS[cl]
            width = sum(t.lanes for _, t in items)
            buf = f"out_{cl}"
            self.params.append(Param(buf, f"Global[{e.py}]", cl, width, "out"))
            off = 0
            for text, t in items:
                if t.is_vector:
                    s = f"clpy.vstore{t.lanes}({text}, 0, {buf} + (lin * {width} + {off}))"
                else:
                    s = f"{buf}[lin * {width} + {off}] = {text}"
                out.append(Stmt(s))
                off += t.lanes
        return out


def generate(
    seed: int, features: frozenset[str] | None = None, avoid: frozenset[str] = frozenset()
) -> Program:
    """The program of ``seed`` with ``features`` (default: all of ``features.DEFAULT``),
    leaving out the ``avoid`` constructs (clpy.fuzz.limits: what a listed target cannot
    emit)."""
    feats = frozenset(F.DEFAULT if features is None else features)
    return Generator(seed, feats, avoid).program()
