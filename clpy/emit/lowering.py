"""Per-target lowering of built-in calls.

A built-in whose declaration carries a ``Lowering(kind, min_version, always)`` is lowered when
the target lacks one of its ``features`` (or is older than ``min_version``, or always with
``always``): ``LOWERINGS[kind]`` returns replacement C text and may register helper code
(``ex.helpers``). Built-ins without a lowering that need a missing feature are reported by
``program._check_target``.

Lowered work-group collectives need ``__local`` scratch memory. OpenCL C only allows
``__local`` variables at kernel function scope, so the hook of a kernel declares one scratch
array at the top of the kernel body (``finish``) and passes it to helper functions; its size is
``Target.info["max_work_group_size"]`` slots (default ``DEFAULT_MAX_WORK_GROUP_SIZE``) of the
largest type lowered (plus a few for chunk totals), so any work-group size chosen at launch
fits.

Saturating conversions (``convert_T_sat*``) are spelled out with explicit NaN checks and clamps
on targets whose ``Target.info["lower_sat_conversions"]`` says the driver gets them wrong
(clpy/emit/lower_convert.py).

Forcing the lowered path on a target that has the native feature (to compare both on one
device): ``without_features(target, "__opencl_c_work_group_collective_functions")`` or
``Target.info["lower"] = {feature, ...}``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from clpy.builtins.registry import Builtin
from clpy.emit import lower_builtins as lb
from clpy.emit.c_exprs import ExprEmitter
from clpy.emit.lower_abs import lower_int_abs
from clpy.emit.lower_add_sat import lower_add_sat
from clpy.emit.lower_atomics import lower_atomic
from clpy.emit.lower_collectives import lower_collective
from clpy.emit.lower_convert import lower_sat_conversion
from clpy.emit.lower_helpers import scratch_slots
from clpy.emit.lower_mad_sat import lower_mad_sat
from clpy.emit.lower_nan import lower_nan_guard
from clpy.emit.lower_narrow import lower_narrow_minmax
from clpy.emit.lower_rtz import lower_rtz_conversion
from clpy.emit.lower_uniform import check_uniform
from clpy.emit.targets import Target, target_of
from clpy.emit.writer import Writer
from clpy.errors import FeatureError
from clpy.ir.nodes import CallBuiltin, Function, Loc
from clpy.types.core import element_of

Lower = Callable[[ExprEmitter, CallBuiltin, Target], str]
# ``Lowering.kind`` → the code that writes the replacement text (the built-in declarations
# name these kinds; the dependency runs emit → builtins).
LOWERINGS: dict[str, Lower] = {
    "collective": lower_collective,
    "atomic": lower_atomic,
    "barrier": lb.lower_barrier,
    "enqueued_local_size": lb.lower_enqueued_local_size,
    "global_linear_id": lb.lower_global_linear_id,
    "local_linear_id": lb.lower_local_linear_id,
    "ctz": lb.lower_ctz,
    "to_space": lb.lower_to_space,
    "get_fence": lb.lower_get_fence,
    "sub_group_pipe": lb.lower_sub_group_pipe,
    "mad_sat": lower_mad_sat,
    "nan_guard": lower_nan_guard,
    "int_abs": lower_int_abs,
    "narrow_minmax": lower_narrow_minmax,
    "add_sat": lower_add_sat,
}

DEFAULT_MAX_WORK_GROUP_SIZE = 1024
SCRATCH = "clpy_scratch"
# The element type of the scratch array by the alignment it must have.
_SCRATCH_ELEMS = (
    (4, "uint"),
    (8, "ulong"),
    (16, "ulong2"),
    (32, "ulong4"),
    (64, "ulong8"),
    (128, "ulong16"),
)


class LoweringHook:
    """The emitter's ``call_hook`` for one function on one target.

    Built-in lowerings call ``scratch(type_size, type_align, loc)`` to get a ``__local``
    pointer expression; ``finish`` then declares the scratch array in the kernel body.
    """

    def __init__(self, tgt: Target, fn: Function | None = None) -> None:
        self.tgt = tgt
        self.fn = fn
        self.scratch_bytes = 0
        self.scratch_align = 4
        if fn is not None:
            check_uniform(fn)

    def __call__(self, ex: ExprEmitter, call: CallBuiltin) -> str | None:
        if call.builtin.conversion is not None:  # saturation some drivers get wrong
            lowered = lower_sat_conversion(ex, call, self.tgt)
            return lowered if lowered is not None else lower_rtz_conversion(ex, call, self.tgt)
        lowering = call.builtin.lowering
        if lowering is None or not needs_lowering_call(call, self.tgt):
            return None
        return LOWERINGS[lowering.kind](ex, call, self.tgt)

    @property
    def max_group(self) -> int:
        return int(self.tgt.info.get("max_work_group_size", DEFAULT_MAX_WORK_GROUP_SIZE))

    def scratch(self, size: int, align: int, cl_type: str, loc: Loc, what: str) -> str:
        """A ``__local cl_type*`` to scratch space for one slot per work-item."""
        if self.fn is None or not self.fn.is_kernel:
            raise FeatureError(
                f"{what} is lowered to local-memory code on target {self.tgt}, which needs "
                "__local scratch declared in the kernel; call it from the kernel body, not "
                "from a @clpy.func (or use a target with the native feature)",
                loc,
            )
        self.scratch_bytes = max(self.scratch_bytes, size * scratch_slots(self.max_group))
        self.scratch_align = max(self.scratch_align, align)
        limit = self.tgt.info.get("local_mem_size")
        if limit is not None and self.scratch_bytes > int(limit):
            raise FeatureError(
                f"{what} lowered for target {self.tgt} needs {self.scratch_bytes} bytes of "
                f"local memory ({self.max_group} work-items x {size} bytes) but the device has "
                f"{limit}",
                loc,
            )
        return f"(__local {cl_type}*){SCRATCH}"

    def finish(self, w: Writer, start: int) -> None:
        """Declare the scratch array after the opening brace of the function at ``start``."""
        if not self.scratch_bytes:
            return
        for i in range(start, len(w.lines)):
            line = w.lines[i]
            if line.rstrip().endswith("{") and not line.startswith("#"):
                elem_align, elem = next(
                    (a, n) for a, n in _SCRATCH_ELEMS if a >= self.scratch_align
                )
                count = -(-self.scratch_bytes // elem_align)
                w.lines.insert(
                    i + 1, f"{w.indent}__local {elem} {SCRATCH}[{count}];  // lowered collectives"
                )
                return


def call_hook_for(tgt: Target, fn: Function | None = None) -> LoweringHook:
    return LoweringHook(tgt, fn)


def needs_lowering(b: Builtin, tgt: Target) -> bool:
    """The target lacks a feature of ``b``, is older than its OpenCL C version, ``b`` is
    always lowered (reductions with operators OpenCL lacks), or the target's device gets the
    native built-in wrong (``Target.info["lower_builtins"]``, from clpy/runtime/quirks.py)."""
    lowering = b.lowering
    if lowering is not None and (lowering.always or tgt.version < lowering.min_version):
        return True
    forced = frozenset(tgt.info.get("lower", ()))
    if b.features & forced or b.name in tgt.info.get("lower_builtins", ()):
        return True
    return not all(tgt.has(f) for f in b.features)


def needs_lowering_call(call: CallBuiltin, tgt: Target) -> bool:
    """Whether this call is lowered on ``tgt``: per built-in (``needs_lowering``), or because
    the device gets the native built-in wrong for this argument type (``"name:type"``, e.g.
    ``"mad_sat:long"``, in ``Target.info["lower_builtins"]``; the element type of the first
    argument)."""
    if needs_lowering(call.builtin, tgt):
        return True
    forced = tgt.info.get("lower_builtins", ())
    if call.builtin.lowering is None or not call.args or not forced:
        return False
    elem = element_of(call.args[0].type)
    return f"{call.builtin.name}:{elem.cl_name}" in forced


def without_features(target: Any, *features: str) -> Target:
    """The target with some features removed, e.g. to force lowered collectives."""
    t = target_of(target)
    feats = frozenset(f for f in features if not f.startswith("cl_"))
    exts = frozenset(f for f in features if f.startswith("cl_"))
    return replace(
        t,
        features=t.features - feats,
        extensions=t.extensions - exts,
        name=t.name + "".join(f"-{f}" for f in features),
    )
