"""Vendor quirks, as data, and the code-generation ``Target`` built from a device description.

What a device *reports* (``CL_DEVICE_OPENCL_C_ALL_VERSIONS``, ``CL_DEVICE_OPENCL_C_FEATURES``,
extensions) is the starting point; the table below corrects it where a driver accepts more or
less than it says. Every vendor-specific decision lives in ``QUIRKS`` and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass

from clpy.emit.targets import CL20_FEATURES, Target
from clpy.runtime.info import DeviceInfo

Version = tuple[int, int]


@dataclass(frozen=True)
class Quirk:
    """A correction for the devices whose platform name, vendor or version contains ``match``.

    ``cl_std``: the OpenCL C version to build with (``-cl-std=CL<x.y>``) instead of the highest
    reported one. ``add_features`` / ``drop_features``: corrections to the reported OpenCL C
    features. ``std_for_feature``: features the compiler accepts only under another
    ``-cl-std``; a program that needs one of them is built with that standard instead.
    ``max_global_id``: the largest global id (offset + global size - 1, per dimension) the
    driver computes correctly; the launcher refuses a larger NDRange for a kernel whose
    work-item indices would otherwise hold it (clpy/runtime/sizes.py ``check_device_ids``).
    ``kernel_wg_query_low``: the driver's CL_KERNEL_WORK_GROUP_SIZE is lower than what it
    runs, so the launcher checks only the device's maximum and lets the driver decide.
    ``lower_sat_conversions``: the sources (``"float"``, ``"int"``) from which the driver's
    ``convert_T_sat*`` is wrong; clpy spells those conversions out with explicit NaN checks and
    clamps (clpy/emit/lower_convert.py).
    ``lower_negation``: the signed types (``"char"``, ``"short"``, ``"int"``, ``"long"``) whose
    negation the driver can get wrong; clpy calls a helper written as ``negation_spelling``
    (clpy/emit/lower_negation.py ``SPELLINGS``).
    ``narrow_casts``: the integer types a conversion to which, from a computed wider integer,
    the driver can get wrong; clpy writes it ``convert_T(v)`` (clpy/emit/lower_narrow.py).
    ``volatile_loop_vars``: a private variable assigned in a loop of work-item-dependent trip
    count and read after a barrier can get another work-item's value; clpy declares such
    variables ``volatile`` (clpy/emit/lower_uniform.py ``loop_barrier_vars``).
    ``opaque_vector_masks``: the device extends a vector of ``i1`` lanes inconsistently, so
    ``any``/``all``/``select`` of a vector comparison the optimizer folded can be wrong; clpy
    writes every vector comparison and vector ``!`` as ``as_T(-abs(mask))``
    (clpy/emit/lower_vector_mask.py).
    ``restrict_all_or_none``: with one pointer parameter ``restrict`` the compiler takes the
    others for distinct from each other too, so a launch whose arguments alias gets a variant
    with no ``restrict`` at all (clpy/runtime/clplan.py ``_noalias``).
    """

    match: str
    note: str
    cl_std: Version | None = None
    add_features: frozenset[str] = frozenset()
    drop_features: frozenset[str] = frozenset()
    std_for_feature: tuple[tuple[str, Version], ...] = ()
    lower_builtins: frozenset[str] = frozenset()
    no_vector_printf: bool = False
    max_global_id: int | None = None
    kernel_wg_query_low: bool = False
    lower_sat_conversions: frozenset[str] = frozenset()
    lower_negation: frozenset[str] = frozenset()
    negation_spelling: str = "volatile"
    narrow_casts: frozenset[str] = frozenset()
    volatile_loop_vars: bool = False
    opaque_vector_masks: bool = False
    restrict_all_or_none: bool = False


QUIRKS: tuple[Quirk, ...] = (
    Quirk(
        match="portable computing language",
        note="PoCL reports OpenCL C 1.2 (plus 3.0 in ALL_VERSIONS); C11 atomics build only "
        "under -cl-std=CL3.0, program-scope global variables only under -cl-std=CL2.0; "
        "no work-group collectives, no generic address space, no sub-groups on CPU",
        cl_std=(3, 0),
        add_features=frozenset({"__opencl_c_program_scope_global_variables"}),
        std_for_feature=(("__opencl_c_program_scope_global_variables", (2, 0)),),
        # convert_{int,long,ulong}_sat*(NaN) gives INT_MIN, LONG_MIN, 2**63 instead of 0 (every
        # rounding mode, scalars and vectors, from float and double; PoCL 3.0 pthread, found
        # by clpy.fuzz, tests/test_fuzz_nan.py).
        lower_sat_conversions=frozenset({"float"}),
        # ceil/floor/trunc/round of a NaN the compiler can fold give garbage (seed 800109):
        # spelled out with a NaN guard (clpy/emit/lower_nan.py).
        # abs makes MIN poison (llvm.abs): (long)(int)abs(INT_MIN) is +2**31 (seed 3078;
        # abs_diff(x, 0) folds into it), abs of a constant LONG_MIN folded to -20 (seed 127):
        # abs/abs_diff of every signed type computed in the unsigned type (lower_abs.py).
        lower_builtins=frozenset(
            {"ceil", "floor", "trunc", "round"}
            | {f"{f}:{t}" for f in ("abs", "abs_diff") for t in ("char", "short", "int", "long")}
            # convert_float_rtz/convert_double_rtz of a constant long near LONG_MIN folds to
            # -2**63 (seeds 333151, 340847): the magnitude cut to 24/53 bits first (lower_rtz.py).
            | {"convert_float_rtz:long", "convert_double_rtz:long"}
        ),
        # A private variable assigned in a loop whose trip count varies between work-items
        # reads another work-item's value after a barrier (seeds 10865, 1000183, 64): such
        # variables are declared volatile.
        volatile_loop_vars=True,
    ),
    Quirk(
        match="oclgrind",
        note="Oclgrind 21.10 is an OpenCL 1.2 device (CL_DEVICE_OPENCL_C_VERSION 1.2) whose "
        "CL_DEVICE_OPENCL_C_ALL_VERSIONS also lists 3.0, with no features; under "
        "-cl-std=CL3.0 every build fails (its extensions and the 3.0 feature macros "
        "disagree: 'options cl_khr_fp64 and __opencl_c_fp64 are set to different "
        "values'), so clpy builds OpenCL C 1.2 there, with 1.2's features",
        cl_std=(1, 2),
        # By the three-way fuzz run (sim vs PoCL vs Oclgrind) and scripts/gpu_fuzz_diag.py:
        # convert_{char,short,int,long}_sat*(NaN) give the type's MIN instead of 0 (every
        # rounding mode, from float and double; unsigned destinations are right; seeds
        # 500003, 500008); add_sat/sub_sat/mad_sat of long wrap instead of saturating
        # (add_sat(LONG_MIN, LONG_MIN) is 0). Each is spelled out (tests/test_fuzz_oclgrind.py).
        # Only the NaN is guarded ("float-nan"): its plain convert_T_rtp/_rtn of a negative
        # value round the wrong way (convert_int_rtp(-0.5f) is -1), its saturating ones right.
        lower_sat_conversions=frozenset({"float-nan"}),
        lower_builtins=frozenset({"add_sat:long", "sub_sat:long", "mad_sat:long"}),
        # A true lane of an LLVM <N x i1> is 0xFF when a vector compare makes it but 1 when it
        # is a folded constant or a scalar compare inserted or splatted, and sext extends the
        # byte as stored: any/all/select of such a vector comparison read +1 as false (seeds
        # 510801, 510992, 500842, 500893; WorkItem.cpp icmp/sext, common.cpp
        # getConstantData). Every vector mask goes through abs (lower_vector_mask.py).
        opaque_vector_masks=True,
    ),
    Quirk(
        match="nvidia",
        note="NVIDIA reports OpenCL C 1.2 features (3.0 driver), but its compiler accepts the "
        "work-group collective built-ins (work_group_reduce_add ...) under -cl-std=CL2.0. "
        "Its native min/max/all collectives deviate from spec §1.13.15 (measured on an "
        "H200, driver 580.159.04, scripts/nv_collectives_diag.py): reduce_min of "
        "uint/ulong is always 0; with one work-item per group reduce_min/max and all "
        "return 0 or FLT_MIN; exclusive min/max scans start from FLT_MAX/FLT_MIN instead "
        "of +INF/-INF; work_group_all of uint comparisons is wrong. Those are lowered; "
        "add, inclusive min/max scans, broadcast and any stay native (they matched in "
        "every shape and type tested).",
        cl_std=(2, 0),
        add_features=frozenset({"__opencl_c_work_group_collective_functions"}),
        lower_builtins=frozenset(
            {
                "work_group_reduce_min",
                "work_group_reduce_max",
                "work_group_all",
                "work_group_scan_exclusive_min",
                "work_group_scan_exclusive_max",
                # by the three-way fuzz runs (H100, driver 580; tests/test_fuzz_nvidia.py):
                # mad_sat of long/ulong wraps instead of saturating (seeds 200067, 200074 ...);
                # work_group_reduce_add of a work-group-uniform long/ulong is the value times
                # the group size rounded up to a power of two, in 32 bits (200528, 200801,
                # 201639). "name:type" lowers only for that argument type.
                "mad_sat:long",
                "mad_sat:ulong",
                "work_group_reduce_add:long",
                "work_group_reduce_add:ulong",
            }
            # (short)abs(SHRT_MIN) taken for positive: `0 >= (short)abs(s)` false and
            # `(short)abs(s) > 0` true at s == -32768 (seeds 330825, 334596, H100 driver 580;
            # PoCL's llvm.abs poison bug, NVVM being LLVM too): abs/abs_diff of every signed
            # type in the unsigned type (lower_abs.py, tests/test_fuzz_triage_s5.py).
            | {f"{f}:{t}" for f in ("abs", "abs_diff") for t in ("char", "short", "int", "long")}
            # min/max of shorts feeding a guarded division came back wrong for every value
            # (seeds 333693, 342146, H100 driver 580; scripts/gpu_narrow_diag.py), and
            # max((uchar)254, convert_uchar_sat(lin)) gave 255 (seed 340201): min/max of
            # every 8- and 16-bit type computed in 32 bits (lower_narrow.py; clamp with them,
            # the same operation, not measured on its own)
            | {
                f"{f}:{t}"
                for f in ("min", "max", "clamp")
                for t in ("char", "uchar", "short", "ushort")
            }
            # and min/max of 32- and 64-bit integers as conditional expressions, as the
            # originals' MIN/MAX macros: pathfinder's kernel 4% faster so (kernel_diag build
            # clpy_minmax, sessions 6 and 8; lower_minmax.py). A performance choice.
            | {f"{f}:{t}" for f in ("min", "max") for t in ("int", "uint", "long", "ulong")}
        ),
        # printf("%v4hlf", v) prints misplaced lanes and drops the text before it (H200).
        no_vector_printf=True,
        # get_global_id(0) is computed in 32 bits: with offset 2**31 + 5 and int64 indices
        # the H100 (driver 580) gave -2147483643 for 2147483653 (tests/test_index_types.py).
        max_global_id=2**31 - 1,
        # CL_KERNEL_WORK_GROUP_SIZE is 256 for every kernel (a 20-register histogram and a
        # 32-accumulator SGEMM alike, any -cl-std), yet both run with 512 and 1,024 work-items
        # (H100, driver 580.159.04, scripts/nv_wg_size_diag.py). Hand-written hosts never ask.
        kernel_wg_query_low=True,
        # The NaN bug of PoCL above (H100, driver 580: the full suite), and long/ulong results
        # of saturating conversions that came back unsaturated (LONG_MAX as -1 or -2) in the
        # three-way fuzz runs: every saturating conversion that can go out of range is
        # spelled out (tests/test_fuzz_nan.py, test_fuzz_nvidia.py show what the driver gets wrong).
        lower_sat_conversions=frozenset({"float", "int"}),
        # A guarded negation of a short, `if (a == -32768) return a; return -(int)a;`, gave
        # 32768 for -32768 (seed 310677, H100, driver 580): spelled as a helper. Not yet run
        # on NVIDIA (no GPU in session 4): "volatile" because C itself guarantees it (the
        # store and the reload of a short); scripts/gpu_fuzz_negation.sh checks every
        # spelling there, and a cheaper one that is right can replace it.
        lower_negation=frozenset({"char", "short"}),
        # `y[i] = 5; out[i] = x[i + k];` with x and y overlapping (two sub-buffers of one
        # buffer, or the same buffer twice) and only `out` restrict read x before the store
        # (0, not 5), while with no restrict, or every pointer volatile, it was right (H100,
        # driver 580, session 7; scripts/gpu_alias_diag.py). C99 6.7.3.1 lets a restrict
        # pointer promise only about itself: an aliasing launch gets no restrict at all.
        restrict_all_or_none=True,
        negation_spelling="volatile",
        # `(short)(0 - s) > 0` true at s == -32768 when the 0 is a constant (seed 333251,
        # H100 driver 580): every plain conversion to short is wrong there, a volatile one
        # too; convert_short and sign extension spelled out are right, char is right
        # (scripts/gpu_narrow_diag.py, 440 cases; lower_narrow.py).
        narrow_casts=frozenset({"short"}),
    ),
)


def quirk_for(info: DeviceInfo) -> Quirk | None:
    """The first quirk whose ``match`` occurs in the platform name, vendor or version."""
    hay = f"{info.platform} {info.platform_vendor} {info.platform_version}".lower()
    for q in QUIRKS:
        if q.match in hay:
            return q
    return None


def _baseline_features(info: DeviceInfo, top: Version) -> frozenset[str]:
    """Features the device has by its report, before quirks (OpenCL C 3.0 §6.2.1)."""
    if info.opencl_c_features is not None:
        feats = set(info.opencl_c_features)
    elif top >= (2, 0):
        feats = set(CL20_FEATURES)  # every 2.x device has all of these
        if "cl_khr_fp64" in info.extensions:
            feats.add("__opencl_c_fp64")
    else:
        feats = {"__opencl_c_int64"}
        if "cl_khr_fp64" in info.extensions:
            feats.add("__opencl_c_fp64")
    if info.sub_groups or "cl_khr_subgroups" in info.extensions:
        feats.add("__opencl_c_subgroups")
    return frozenset(feats)


def device_target(info: DeviceInfo) -> Target:
    """The emitter target for a device: OpenCL C version to build with, features, extensions.

    ``Target.info`` carries what the launcher needs (local memory size, work-group limits,
    sub-group and non-uniform work-group support, the build standard per feature).
    """
    top = max(info.opencl_c_versions)
    q = quirk_for(info)
    version = q.cl_std if q and q.cl_std else top
    # by the version built with: a quirk's older standard has only that version's features
    feats = _baseline_features(info, min(top, version))
    if q:
        feats = (feats | q.add_features) - q.drop_features
    non_uniform = info.non_uniform_work_groups and version >= (2, 0)
    extra: dict[str, object] = {
        "local_mem_size": info.local_mem_size,
        "max_constant_buffer_size": info.max_constant_buffer_size,
        "max_work_group_size": info.max_work_group_size,
        "max_work_item_sizes": info.max_work_item_sizes,
        "address_bits": info.address_bits,
        "sub_groups": "__opencl_c_subgroups" in feats,
        "non_uniform_work_groups": non_uniform,
        "device_type": info.device_type,
        "std_for_feature": dict(q.std_for_feature) if q else {},
        "quirk": q.note if q else None,
        "lower_builtins": q.lower_builtins if q else frozenset(),
        "no_vector_printf": bool(q and q.no_vector_printf),
        "max_global_id": q.max_global_id if q else None,
        "kernel_wg_query_low": bool(q and q.kernel_wg_query_low),
        "lower_sat_conversions": q.lower_sat_conversions if q else frozenset(),
        "lower_negation": q.lower_negation if q else frozenset(),
        "negation_spelling": q.negation_spelling if q else "volatile",
        "narrow_casts": q.narrow_casts if q else frozenset(),
        "volatile_loop_vars": bool(q and q.volatile_loop_vars),
        "opaque_vector_masks": bool(q and q.opaque_vector_masks),
        "restrict_all_or_none": bool(q and q.restrict_all_or_none),
        "correctly_rounded_divide_sqrt": info.correctly_rounded_divide_sqrt,
    }
    return Target(
        name=f"{info.name} (OpenCL C {version[0]}.{version[1]})",
        version=version,
        features=feats,
        extensions=info.extensions,
        device=info.name,
        info=extra,
    )


def fp_build_options(target: Target) -> tuple[str, ...]:
    """Build options that make the device's float arithmetic the simulator's (DESIGN.md
    "Semantics", floats): single-precision ``/`` and ``sqrt`` correctly rounded where the
    device reports CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT. Elsewhere they keep the spec's bounds
    (2.5 ulp for ``/``, 3 ulp for ``sqrt``: spec §2.4, table 36). Contraction needs no option:
    the emitted C says ``#pragma OPENCL FP_CONTRACT OFF``."""
    if target.info.get("correctly_rounded_divide_sqrt"):
        return ("-cl-fp32-correctly-rounded-divide-sqrt",)
    return ()


def build_std(target: Target, needed: set[str] | frozenset[str]) -> Version:
    """The ``-cl-std`` version for a program that uses the features in ``needed``."""
    alt: dict[str, Version] = target.info.get("std_for_feature", {})
    for feat, version in alt.items():
        if feat in needed:
            return version
    return target.version
