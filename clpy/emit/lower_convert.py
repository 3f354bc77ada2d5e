"""Saturating conversions spelled out for devices whose ``convert_T_sat`` is wrong.

OpenCL C 2.0 §6.2.3.3: with ``_sat`` an out-of-range value saturates to the destination's
minimum or maximum and NaN converts to 0. Two drivers get that wrong:

- PoCL 3.0 returns the x86 "integer indefinite" for NaN: ``convert_int_sat*(NaN)`` is
  INT_MIN, ``convert_long_sat*`` LONG_MIN, ``convert_ulong_sat*`` 2**63, for every rounding
  mode, scalars and vectors, from float and double (every other edge value is right:
  tests/test_fuzz_nan.py checks ±0.5, 0.99, -1, 2**63, 2**64, huge, ±inf);
- NVIDIA's driver (580) has the same NaN bug and, by the three-way fuzz runs, saturates
  ``long``/``ulong`` results wrongly (LONG_MAX came back as -1 and -2: the bits of the
  unsaturated value).

On a target whose ``Target.info["lower_sat_conversions"]`` names the kind of source (``"float"``:
half, float, double; ``"int"``: integer sources; set from clpy/runtime/quirks.py) the call
becomes a helper that never relies on the device's saturation::

    long clpy_convert_long_sat_rte_float(float x) {
        return isnan(x) ? 0 : x < -0x1p63f ? LONG_MIN : x >= 0x1p63f ? LONG_MAX
            : convert_long_rte(x);
    }

The in-range branch is the plain conversion with the same rounding, which the spec defines
exactly: a value ``>= MIN`` and ``<= MAX`` (or ``< 2**N`` where ``MAX`` is not representable:
every such value is an integer) rounds to a value in range in every rounding mode. Vectors do the
same lane-wise with ``select``. Why a quirk and not every target: the generic text (``.source``,
``source_for("opencl-c-2.0")``) is what a reader expects from the spec and is right on conforming
devices; the guard costs two or three compares and selects per conversion, so giving it to
every listed device that needs it costs nothing measurable either.
"""

from __future__ import annotations

from clpy.emit.c_exprs import ExprEmitter
from clpy.emit.targets import Target
from clpy.ir.nodes import CallBuiltin
from clpy.types import catalog as C
from clpy.types.core import ScalarType, Type, element_of, lanes

KIND = "sat:"  # helper kinds: "sat:<dest cl_name><_rounding>" with the source type
# "sat:nan:<dest><_rounding>": only the NaN guarded, the rest the device's own saturating
# conversion (quirk "float-nan": Oclgrind, whose plain convert_T_rtp/_rtn of a negative value
# round the wrong way, while its saturating ones are right but for NaN)
NAN_ONLY = "nan:"

MACROS = {  # the limits of each integer type, by their OpenCL C macros
    "char": ("CHAR_MIN", "CHAR_MAX"),
    "uchar": ("0", "UCHAR_MAX"),
    "short": ("SHRT_MIN", "SHRT_MAX"),
    "ushort": ("0", "USHRT_MAX"),
    "int": ("INT_MIN", "INT_MAX"),
    "uint": ("0", "UINT_MAX"),
    "long": ("LONG_MIN", "LONG_MAX"),
    "ulong": ("0", "ULONG_MAX"),
}


def sat_lowered(call: CallBuiltin, tgt: Target) -> bool:
    """Whether ``call`` is a saturating conversion that ``tgt`` gets spelled out."""
    conv = call.builtin.conversion
    if conv is None or not conv.sat or len(call.args) != 1:
        return False
    kinds = tgt.info.get("lower_sat_conversions", ())
    src = element_of(call.args[0].type)
    if not isinstance(src, ScalarType) or src is C.bool_:
        return False
    if src.is_float:
        return "float" in kinds or "float-nan" in kinds
    return "int" in kinds and _int_needs_clamp(src, element_of(conv.dest))


def lower_sat_conversion(ex: ExprEmitter, call: CallBuiltin, tgt: Target) -> str | None:
    """``clpy_convert_<T>_sat<_rX>_<S>(x)`` on targets that need it, else None (native)."""
    if not sat_lowered(call, tgt):
        return None
    conv = call.builtin.conversion
    assert conv is not None
    rnd = f"_{conv.rounding}" if conv.rounding else ""
    src = call.args[0].type
    kinds = tgt.info.get("lower_sat_conversions", ())
    nan_only = element_of(src).is_float and "float" not in kinds
    ex.helpers.add((f"{KIND}{NAN_ONLY if nan_only else ''}{conv.dest.cl_name}{rnd}", src))
    return f"{helper_name(conv.dest.cl_name, rnd, src)}({ex(call.args[0])})"


def helper_name(dest: str, rnd: str, src: Type) -> str:
    return f"clpy_convert_{dest}_sat{rnd}_{src.cl_name}"


def _limits(t: ScalarType) -> tuple[int, int]:
    if t.is_signed:
        return -(2 ** (t.bits - 1)), 2 ** (t.bits - 1) - 1
    return 0, 2**t.bits - 1


def _int_needs_clamp(src: ScalarType, dst: ScalarType) -> bool:
    slo, shi = _limits(src)
    dlo, dhi = _limits(dst)
    return slo < dlo or shi > dhi


def _float_lit(v: int, double: bool) -> str:
    """``v`` (exactly representable) as a C literal of the comparison type."""
    suffix = "" if double else "f"
    if v and abs(v) & (abs(v) - 1) == 0 and abs(v) > 2**24:
        return f"{'-' if v < 0 else ''}0x1p{abs(v).bit_length() - 1}{suffix}"
    return f"{v}.0{suffix}"


def _float_bounds(dst: ScalarType, double: bool) -> tuple[str, str]:
    """C conditions on ``x`` for "below the minimum" and "above the maximum" of ``dst``.

    The maximum 2**N - 1 of a wide type is not representable in float (or double): the
    condition is then ``x >= 2**N``, since no representable value lies between the two."""
    lo, hi = _limits(dst)
    mant = 53 if double else 24
    below = f"x < {_float_lit(lo, double)}"
    if hi < 2**mant:
        above = f"x > {_float_lit(hi, double)}"
    else:
        above = f"x >= {_float_lit(hi + 1, double)}"
    return below, above


def sat_helper_source(kind: str, src: Type) -> str:
    """The C function for helper ``kind`` (``sat:long4_rte``) taking ``src``."""
    spec = kind[len(KIND) :]
    nan_only = spec.startswith(NAN_ONLY)
    spec = spec.removeprefix(NAN_ONLY)
    dest_name, _, rnd = spec.partition("_")
    rnd = f"_{rnd}" if rnd else ""
    selem = element_of(src)
    n = lanes(src)
    dst_elem = next(e for e in MACROS if dest_name in (e, f"{e}{n}"))
    delem = getattr(C, dst_elem if dst_elem != "int" else "int_")
    assert isinstance(selem, ScalarType) and isinstance(delem, ScalarType)
    name = helper_name(dest_name, rnd, src)
    head = f"{dest_name} {name}({src.cl_name} x)"
    why = f"    // convert_{dest_name}_sat{rnd} as OpenCL C 2.0 §6.2.3.3 defines it\n"
    mn, mx = MACROS[dst_elem]
    if not selem.is_float:
        return _int_helper(head, why, selem, delem, dest_name, n, mn, mx)
    double = selem is C.double
    pre = ""
    if selem is C.half:  # compare in float: a half vector would turn the bounds into half
        fl = "float" if n == 1 else f"float{n}"
        head = head.replace(f"({src.cl_name} x)", f"({src.cl_name} h)")
        pre = f"    {fl} x = convert_{fl}(h);\n"
    if nan_only:
        why = "    // NaN converts to 0 (OpenCL C 2.0 §6.2.3.3); the rest the device's own\n"
        own = f"convert_{dest_name}_sat{rnd}(x)"
        if n == 1:
            return f"{head} {{\n{why}{pre}    return isnan(x) ? 0 : {own};\n}}"
        imask = f"convert_{_signed_name(delem)}{n}(isnan(x))"
        return f"{head} {{\n{why}{pre}    return select({own}, ({dest_name})0, {imask});\n}}"
    below, above = _float_bounds(delem, double)
    plain = f"convert_{dest_name}{rnd}(x)"
    if n == 1:
        body = f"    return isnan(x) ? 0 : {below} ? {mn} : {above} ? {mx}\n        : {plain};"
        return f"{head} {{\n{why}{pre}{body}\n}}"
    mask = f"long{n}" if double else f"int{n}"
    fvec = f"double{n}" if double else f"float{n}"
    imask = f"convert_{_signed_name(delem)}{n}"  # select wants a mask of the lanes' size
    lines = [
        f"    {mask} lo = {below}, hi = {above};",
        "    // out-of-range and NaN lanes convert 0, then take their saturated value",
        f"    {dest_name} r = convert_{dest_name}{rnd}(select(x, ({fvec})0, lo | hi | isnan(x)));",
    ]
    if delem.is_signed:
        lines.append(f"    r = select(r, ({dest_name}){mn}, {imask}(lo));")
    lines.append(f"    return select(r, ({dest_name}){mx}, {imask}(hi));")
    return f"{head} {{\n{why}{pre}" + "\n".join(lines) + "\n}"


def _int_helper(
    head: str, why: str, s: ScalarType, d: ScalarType, dest: str, n: int, mn: str, mx: str
) -> str:
    """Integer to integer: clamp in the source type, then the (now exact) conversion.

    A scalar's clamp is one ``?:`` in the source type and ``convert_T`` of its result, not a
    ternary between the limits and ``(T)x``: on the H100 (driver 580) ``max((uchar)254,
    h(x))`` was 255 for every ``x`` when ``h`` returned ``x < 0 ? 0 : x > UCHAR_MAX ?
    UCHAR_MAX : (uchar)x`` (fuzz seed 340201; seed 354812's ``h(lid) < (uchar)255`` was false
    in a loop), and right with the conversion outside the ternary, in every use of
    scripts/gpu_sat_diag.py (768 cases, benchmarks/results/nvidia_diag/sat_h100_s7.json)."""
    slo, shi = _limits(s)
    dlo, dhi = _limits(d)
    lo = slo < dlo
    hi = shi > dhi
    # A narrower destination's limits fit the source type; ``(S)MAX`` keeps C from
    # converting x for a comparison with an unsigned limit (long vs UINT_MAX is fine too).
    scast = s.cl_name
    below = f"x < ({scast})0" if dlo == 0 else f"x < ({scast}){mn}"
    above = f"x > ({scast}){mx}"
    if n == 1:
        pre, x = "", "x"
        if s.bits < 32:
            # compared in int: on the H100 (driver 580) ``convert_ushort(x < (short)0 ? 0 :
            # x)`` divided into 65535 took a ``b == 0`` guard for x == 7 (fuzz seed 380415),
            # right in int and in six other spellings (scripts/gpu_udiv_diag.py, 112 cases,
            # benchmarks/results/nvidia_diag/udiv_h100_s8.json)
            pre, x = "    int w = (int)x;\n", "w"
            below = "w < 0" if dlo == 0 else f"w < {mn}"
            above = f"w > {mx}"
        parts = []
        if lo:
            parts.append(f"{below} ? {mn}")
        if hi:
            parts.append(f"{above} ? {mx}")
        return f"{head} {{\n{why}{pre}    return convert_{dest}({' : '.join(parts)} : {x});\n}}"
    mask = f"convert_{_signed_name(d)}{n}"
    lines = [f"    {dest} r = convert_{dest}(x);"]
    if lo:
        lines.append(f"    r = select(r, ({dest}){mn}, {mask}({below}));")
    if hi:
        lines.append(f"    r = select(r, ({dest}){mx}, {mask}({above}));")
    lines.append("    return r;")
    return f"{head} {{\n{why}" + "\n".join(lines) + "\n}"


def _signed_name(t: ScalarType) -> str:
    return t.cl_name[1:] if t.cl_name.startswith("u") else t.cl_name
