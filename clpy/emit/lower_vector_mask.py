"""Vector comparison masks made opaque, for a device whose ``<N x i1>`` lanes disagree.

OpenCL C 2.0 §6.3.d/e: a relational, equality or ``!`` operator on vectors gives a signed
integer vector whose lanes are -1 (all bits set) for true and 0 for false; ``any``, ``all``
and ``select`` read the most significant bit of each lane (§6.13.12). Clang computes it as an
LLVM ``icmp``/``fcmp`` giving a vector of ``i1`` and a ``sext`` to the lane type.

Oclgrind 21.10 (and its master, 26.03.1) interprets LLVM IR and keeps one byte per ``i1``
lane, but writes *true* two ways (jrprice/Oclgrind, src/core/):

- a vector ``icmp``/``fcmp`` stores ``0xFF`` (WorkItem.cpp, ``INSTRUCTION(icmp)``:
  ``uint64_t t = result.num > 1 ? -1 : 1;``);
- a constant stores 1 (common.cpp ``getConstantData``: ``getZExtValue()``), and so does a
  lane inserted from a scalar ``i1`` (a scalar comparison gives 1): ``insertelement`` and the
  ``shufflevector`` splat of one copy the byte.

``sext`` turns a set ``i1`` into -1 only when the whole operand is one bit
(``operand->getType()->getPrimitiveSizeInBits() == 1``, a scalar); a vector's lanes are
sign-extended as stored, so a lane of 1 becomes +1: ``any``/``all``/``select`` read it as
false. ``zext`` extends the stored byte too, so a vector ``icmp``'s true lane becomes 255.
Clang's optimizer (Oclgrind builds with ``-Oz``) makes such vectors from ordinary C:
``any((c ? A : B) < C)`` becomes a ``select`` between two folded constant ``<16 x i1>``
(fuzz seed 510801); ``(float3)(k) < (float3)(x)`` and ``(ulong2)(0) < (ulong2)(s, s)`` a
scalar compare splatted (510992, 500842); ``(char4)(0, 2, f(), 127) >= (char4)(31)`` three
constant lanes and one inserted (500893); ``-(a < b)`` a ``zext`` (255 per true lane).

Where the device's quirks say so (``Target.info["opaque_vector_masks"]``,
clpy/runtime/quirks.py) every vector comparison and vector ``!`` is written
``as_int4(-abs(a < b))``: ``abs`` is a call of the device's built-in library, which the
optimizer cannot see through, so the ``i1`` vector's only use is the ``sext`` into it; a lane
of +1 or -1 has ``abs`` 1, negated -1, and a false lane stays 0. Same value on every device
(tests/test_fuzz_oclgrind.py runs the raw and the wrapped forms on Oclgrind).
"""

from __future__ import annotations

from typing import Any

from clpy.types.core import Type, VectorType


def wants_opaque_mask(t: Type, hook: Any) -> bool:
    """Whether a comparison (or ``!``) of result type ``t`` is wrapped for the target of the
    emitter's lowering hook (``hook.tgt``)."""
    tgt = getattr(hook, "tgt", None)
    return (
        isinstance(t, VectorType) and tgt is not None and bool(tgt.info.get("opaque_vector_masks"))
    )


def opaque_mask(t: VectorType, text: str) -> str:
    """``as_<t>(-abs(<text>))``: the mask ``text`` (of the signed vector type ``t``) with
    every set lane -1, whatever the device stored for it."""
    return f"as_{t.cl_name}(-abs({text}))"
