"""kernel_diag's source side (benchmarks/programs/kernel_diag.py): the rewrites of the emitted
and the original OpenCL C that make its builds, the built binaries and their CUDA attributes,
and the profiled intervals."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from benchmarks.programs import common


def norestrict(src: str) -> str:
    return src.replace(" restrict", "")


def constless(src: str) -> str:
    return src.replace("__global const ", "__global ").replace("__constant const ", "__constant ")


def noconst(src: str) -> str:
    return constless(norestrict(src))


def same(src: str) -> str:
    return src


def cuda_attributes(ptx: bytes, names: list[str]) -> dict[str, Any]:
    """Per kernel of an NVIDIA OpenCL binary (PTX), what the CUDA driver's JIT makes of it
    (registers per thread, static shared and local memory, the block size limit), through
    CuPy where it is installed: the OpenCL API reports none of these. Errors as a string."""
    try:
        import tempfile

        import cupy  # type: ignore[import-not-found]

        with tempfile.NamedTemporaryFile("wb", suffix=".ptx", delete=False) as f:
            f.write(ptx.rstrip(b"\0"))
        mod = cupy.RawModule(path=f.name)
        out: dict[str, Any] = {}
        for n in names:
            fn = mod.get_function(n)
            out[n] = {
                "num_regs": int(fn.num_regs),
                "shared_size_bytes": int(fn.shared_size_bytes),
                "local_size_bytes": int(fn.local_size_bytes),
                "max_threads_per_block": int(fn.max_threads_per_block),
            }
        return out
    except Exception as e:  # noqa: BLE001 - a diagnostic: say why and go on
        return {"error": f"{type(e).__name__}: {e}"}


def binary(prg: Any) -> bytes | None:
    try:
        bins = prg.binaries
        return bytes(bins[0]) if bins else None
    except Exception:  # noqa: BLE001
        return None


def intervals(events: list[Any]) -> list[float]:
    return [(e.profile.end - e.profile.start) * 1e-3 for e in events]  # microseconds


# The originals with their __local parameters shadowed by arrays declared in the kernel (as
# clpy emits them): the host still passes the local memory, the kernel no longer uses it.
STATIC_LOCAL: dict[str, list[tuple[str, str]]] = {
    "pathfinder": [
        (
            r"__local int \*prev, __local int \*result\)\s*\{",
            "__local int *prev_dyn, __local int *result_dyn)\n{\n"
            "    __local int prev[256];\n    __local int result[256];",
        )
    ],
    "backprop": [
        (
            r"__local float \*input_node, __local float \*weight_matrix,(\s*int in, int hid\))"
            r"\s*\{",
            "__local float *input_node_dyn, __local float *weight_matrix_dyn,\\1\n{\n"
            "    __local float input_node[16];\n    __local float weight_matrix[256];",
        )
    ],
}


# The originals' kernels with clpy's parameter lists (the build ``orig_clpyhost``: the
# hand-written kernel launched by clpy's host, with clpy's buffers and options), so that a gap
# splits into the kernel's code and the host's part. Parameters clpy's port drops become
# constants or kernel-declared local arrays; kernels not listed keep clpy's source.
CLPY_SIGNATURE: dict[str, list[tuple[str, str]]] = {
    "pathfinder": [
        (
            r"__kernel void dynproc_kernel\([^)]*\)\s*\{",
            "__kernel void dynproc_kernel(int iteration, __global int *gpuWall, "
            "__global int *gpuSrc,\n    __global int *gpuResults, int cols, int startStep, "
            "int border)\n{\n    const int HALO = 1;\n    __local int prev[256];\n"
            "    __local int result[256];",
        )
    ],
    "backprop": [
        (
            r"__kernel void bpnn_adjust_weights_ocl\([^)]*\)",
            "__kernel void bpnn_adjust_weights(__global float *delta, int hid, "
            "__global float *ly,\n    __global float *w, __global float *oldw)",
        )
    ],
}


def clpy_signature(m: Any) -> Callable[[str], str] | None:
    """A transform for ``hosts.Swap.apply``: the original .cl adapted to clpy's parameters where it
    defines the emitted kernel's name, else the emitted source unchanged."""
    if m.NAME not in CLPY_SIGNATURE:
        return None
    src = (common.CL_DIR / m.CL_FILE).read_text()
    for pat, rep in CLPY_SIGNATURE[m.NAME]:
        src, k = re.subn(pat, rep, src)
        if k != 1:
            raise ValueError(f"{m.NAME}: the clpy-signature rewrite matched {k} times")

    def transform(emitted: str) -> str:
        m = re.search(r"__kernel void (\w+)\(", emitted)
        return src if m and f"__kernel void {m.group(1)}(" in src else emitted

    return transform


def contract(src: str) -> str:
    """The emitted source with OpenCL C's default FP_CONTRACT ON (spec 6.10: a*b+c may be
    fused), as the originals are built; clpy emits OFF unless a kernel asks for fp_contract."""
    return src.replace("#pragma OPENCL FP_CONTRACT OFF", "#pragma OPENCL FP_CONTRACT ON")


def noline(src: str) -> str:
    """The emitted source without its ``#line`` directives (the originals have none)."""
    return "\n".join(ln for ln in src.split("\n") if not ln.startswith("#line "))


# min/max as the originals write them (conditional expressions), instead of the built-ins
MINMAX_MACROS = (
    "#define min(a, b) ((a) <= (b) ? (a) : (b))\n#define max(a, b) ((a) >= (b) ? (a) : (b))\n"
)


def minmax(src: str) -> str:
    """The emitted source with ``min``/``max`` as conditional-expression macros."""
    return MINMAX_MACROS + src


# The reverse of CLPY_SIGNATURE (the build ``clpy_orighost``): clpy's emitted kernels under the
# original host, renamed to the originals' names, with the parameters the original host
# passes and clpy's port dropped inserted (unused) at their places. Per program: clpy's kernel
# name -> (the original's name, [(position, parameter)]).
ORIG_SIGNATURE: dict[str, dict[str, tuple[str, list[tuple[int, str]]]]] = {
    "pathfinder": {
        "dynproc_kernel": (
            "dynproc_kernel",
            [
                (5, "int rows_unused"),
                (8, "int halo_unused"),
                (9, "__local int *prev_unused"),
                (10, "__local int *result_unused"),
            ],
        )
    },
    "backprop": {"bpnn_adjust_weights": ("bpnn_adjust_weights_ocl", [(3, "int in_unused")])},
}


def orig_signature(m: Any, sources: dict[str, str]) -> str | None:
    """The original .cl with clpy's emitted kernels (ORIG_SIGNATURE; ``sources``: the emitted
    source clpy launched per kernel name, else the kernel's generic ``.source``) appended in
    place of its own (renamed ``*_handwritten``), or None where the program has no entry."""
    table = ORIG_SIGNATURE.get(m.NAME)
    if table is None:
        return None
    src = (common.CL_DIR / m.CL_FILE).read_text()
    for cname, (oname, extra) in table.items():
        src, k = re.subn(rf"__kernel void {oname}\(", f"__kernel void {oname}_handwritten(", src)
        if k != 1:
            raise ValueError(f"{m.NAME}: {oname} found {k} times in {m.CL_FILE}")
        emitted = sources.get(cname) or getattr(m, cname).source
        head = re.search(rf"__kernel void {cname}\((.*?)\)\s*\{{", emitted, re.S)
        if head is None:
            raise ValueError(f"{m.NAME}: no kernel {cname} in the emitted source")
        params = [q.strip() for q in head.group(1).split(",")]
        for pos, q in extra:
            params.insert(pos, q)
        sig = f"__kernel void {oname}(" + ", ".join(params) + ")\n{"
        src += "\n" + emitted[: head.start()] + sig + emitted[head.end() :]
    return src


def static_local(name: str, src: str) -> str:
    for pat, rep in STATIC_LOCAL[name]:
        src, k = re.subn(pat, rep, src)
        if k != 1:
            raise ValueError(f"{name}: the static-local rewrite matched {k} times")
    return src
