"""What a launch plan (clpy/runtime/clplan.py) keeps of its kernel between launches: each
built variant with its argument setters and the arguments last set (``Variant``), the launches
it may repeat with other numbers (``Recent``), and the identity tests of its memos."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from clpy.abi import StructValue, Value


class Recent:
    """A launch ``CLPlan._run_recent`` can repeat with other numbers: its buffer arguments
    (held, so their identities stay theirs), the arguments list with what they bound (None
    elsewhere), the variant, ``_noalias``'s memo entry and whether ``_resident`` held."""

    __slots__ = ("objs", "ids", "template", "var", "alias", "resident")

    def __init__(
        self, objs: tuple[Any, ...], template: list[Any], var: Variant, alias: Any, resident: bool
    ) -> None:
        self.objs = objs
        self.ids = tuple(map(id, objs))
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


def identical(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """The same objects in the same order (identity, not equality)."""
    return len(a) == len(b) and all(map(operator.is_, a, b))


def ids_of(slots: tuple[int, ...]) -> Callable[[tuple[Any, ...]], tuple[int, ...]]:
    """A function taking the launch arguments to the ids of those in ``slots`` (spelled
    out for up to four: ~0.15 µs, where ``tuple(map(id, ...))`` takes ~0.4)."""
    n = len(slots)
    if n == 1:
        (i,) = slots
        return lambda a: (id(a[i]),)
    if n == 2:
        i, j = slots
        return lambda a: (id(a[i]), id(a[j]))
    if n == 3:
        i, j, k = slots
        return lambda a: (id(a[i]), id(a[j]), id(a[k]))
    if n == 4:
        i, j, k, m = slots
        return lambda a: (id(a[i]), id(a[j]), id(a[k]), id(a[m]))
    return lambda a: tuple([id(a[i]) for i in slots])
