"""What a launch plan (clpy/runtime/clplan.py) keeps of its kernel between launches: each
built variant with its argument setters and the arguments last set (``Variant``), the launches
it may repeat with other numbers (``Recent``), and the identity tests of its memos."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from clpy.abi import StructValue, Value

# The argument types whose objects never change value: a scalar parameter given the same
# object converts to the same bytes (a 0-d array may change in place; np.void is a struct).
_FROZEN = frozenset(
    {int, float, bool}
    | {t for t in np.sctypeDict.values() if issubclass(t, (np.integer, np.floating, np.bool_))}
)
_UNSET = object()  # (no launch argument)


class Recent:
    """A launch ``CLPlan._run_recent`` can repeat with other numbers: its buffer arguments
    (held, so their identities stay theirs) with ``match``, the test that a launch passes
    the same objects, the (slot, memory object) pairs they bound (``binds``) and the
    arguments list with those (None elsewhere), the variant, ``_noalias``'s memo entry and
    whether ``_resident`` held."""

    __slots__ = ("objs", "match", "binds", "template", "var", "alias", "resident")

    def __init__(
        self,
        objs: tuple[Any, ...],
        match: Callable[[tuple[Any, ...]], bool],
        template: list[Any],
        var: Variant,
        alias: Any,
        resident: bool,
    ) -> None:
        self.objs = objs
        self.match = match
        self.binds = tuple((j, b) for j, b in enumerate(template) if b is not None)
        self.template = template
        self.var = var
        self.alias = alias
        self.resident = resident


class Variant:
    """One emitted variant of a plan's kernel (``restrict`` on some buffers), built: its
    pyopencl ``Kernel``, argument setters and the arguments last set."""

    def __init__(self, cl: Any, program: Any, fname: str, source: str, params: Any) -> None:
        self._cl = cl
        self.program = program
        self.source = source
        self.kernel = cl.Kernel(program, fname)
        self.params = params
        self.last: list[Any] | None = None
        # with ``last`` when set_recent set it: the Recent whose buffers it binds, and per
        # slot the immutable number (Python's, NumPy's) whose conversion it holds
        self.bound: Recent | None = None
        self.raw: list[Any] = []
        self.slots = range(len(params))
        self.svm_seen = False
        self._bind_setters()

    def _bind_setters(self) -> None:
        set_buf = getattr(self.kernel, "_set_arg_buf", None) or self.kernel.set_arg
        self.setters = [
            set_buf if isinstance(p, (Value, StructValue)) else self.kernel.set_arg
            for p in self.params
        ]

    def set_args(self, cl_args: list[Any]) -> None:
        """Set only the arguments that changed since the last launch of this kernel: OpenCL
        keeps kernel arguments between enqueues (spec: clSetKernelArg). Values (scalars'
        bytes, clpy/abi/values.py; NumPy scalars, vector lanes, structs) go through
        pyopencl's raw-bytes setter, as its own generated invokers do: ``Kernel.set_arg``
        takes ~10 µs to classify a NumPy scalar. A slot's value is always the same type, so
        equal bytes are the same value (-0.0 is not 0.0). Call with the plan's lock held."""
        last = self.last
        self.last = None  # if a setter fails, the next launch sets everything
        self.bound = None
        self.raw = [_UNSET] * len(cl_args)
        if (
            last is not None
            and self.svm_seen
            and any(
                isinstance(a, self._cl.SVMPointer) != isinstance(b, self._cl.SVMPointer)
                for a, b in zip(cl_args, last)
                if b is not None
            )
        ):
            # NVIDIA's driver rejects a buffer in a slot that last held an SVM pointer
            # (INVALID_KERNEL_ARGS at enqueue, seen on an H200): start from a fresh kernel.
            self.kernel = self._cl.Kernel(self.program, self.kernel.function_name)
            self._bind_setters()
            last = None
        setters = self.setters
        if last is None:
            for j, a in enumerate(cl_args):
                setters[j](j, a)
        else:
            for j, a, b in zip(self.slots, cl_args, last):
                if a is not b and (type(a) is not bytes or a != b):
                    setters[j](j, a)
        # Holding the previous arguments keeps their objects (and ids) alive.
        self.last = cl_args

    def set_recent(
        self,
        rec: Recent,
        args: tuple[Any, ...],
        numbers: tuple[tuple[int, int, Callable[[Any], Any]], ...],
        others: tuple[tuple[int, int, Any], ...],
    ) -> list[Any]:
        """``set_args`` for a launch ``rec`` recognised (its buffer arguments are ``rec``'s
        objects): the buffers bind ``rec``'s memory objects, set only if the last launch of
        this kernel bound others; the other arguments, (slot, argument index, converter) in
        ``numbers`` (scalar parameters, all of them or none) or ``others``, are converted
        and set if they changed, except a scalar's argument that is the immutable number
        last set there (``raw``). Returns the arguments set. Call with the plan's lock
        held."""
        last = self.last
        if last is None or self.svm_seen:
            cl_args = rec.template.copy()
            pending: list[Any] = []  # (values and local memory upload nothing)
            for j, i, conv in numbers:
                cl_args[j] = conv(args[i])
            for j, i, conv in others:
                cl_args[j] = conv(args[i], pending)
            self.set_args(cl_args)
            raw = self.raw
            for j, i, _ in numbers:
                a = args[i]
                if type(a) in _FROZEN:
                    raw[j] = a
            self.bound = rec
            return cl_args
        self.last = None  # a converter or setter fails: the next launch sets everything
        cl_args = last.copy()
        setters = self.setters
        if self.bound is not rec:
            for j, b in rec.binds:
                if cl_args[j] is not b:
                    setters[j](j, b)
                    cl_args[j] = b
        raw = self.raw
        for j, i, conv in numbers:
            a = args[i]
            if a is raw[j]:  # (held there: no other object has its identity)
                continue
            v = conv(a)
            b = cl_args[j]
            if v is not b and (type(v) is not bytes or v != b):
                setters[j](j, v)
                cl_args[j] = v
            raw[j] = a if type(a) in _FROZEN else _UNSET
        if others:
            pending = []
            for j, i, conv in others:
                v = conv(args[i], pending)
                b = cl_args[j]
                if v is not b and (type(v) is not bytes or v != b):
                    setters[j](j, v)
                    cl_args[j] = v
        self.last = cl_args
        self.bound = rec
        return cl_args


def identical(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """The same objects in the same order (identity, not equality)."""
    return len(a) == len(b) and all(map(operator.is_, a, b))


def matcher(slots: tuple[int, ...], objs: tuple[Any, ...]) -> Callable[[tuple[Any, ...]], bool]:
    """A test that launch arguments hold ``objs`` at ``slots`` (the same objects; spelled
    out for up to four buffers, the common counts)."""
    n = len(slots)
    if n == 1:
        (i,), (a,) = slots, objs
        return lambda x: x[i] is a
    if n == 2:
        (i, j), (a, b) = slots, objs
        return lambda x: x[i] is a and x[j] is b
    if n == 3:
        (i, j, k), (a, b, c) = slots, objs
        return lambda x: x[i] is a and x[j] is b and x[k] is c
    if n == 4:
        (i, j, k, m), (a, b, c, d) = slots, objs
        return lambda x: x[i] is a and x[j] is b and x[k] is c and x[m] is d
    pairs = tuple(zip(slots, objs))
    return lambda x: all([x[i] is o for i, o in pairs])
