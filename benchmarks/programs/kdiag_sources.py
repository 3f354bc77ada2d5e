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
    "nw": [
        (
            rf"(?s)(__kernel void {k}\(.*?)__local int \*score_l, __local int \*ref_l,"
            r"(.*?\)\s*)\{",
            "\\1__local int *score_dyn, __local int *ref_dyn,\\2{\n"
            "    __local int score_l[(BLOCK_SIZE + 1) * (BLOCK_SIZE + 1)];\n"
            "    __local int ref_l[BLOCK_SIZE * BLOCK_SIZE];",
        )
        for k in ("nw_kernel1", "nw_kernel2")
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
# passes and clpy's port dropped inserted (unused) at their places: extra scalars, buffers the
# port does not take, and ``__local`` pointers where clpy declares the local arrays in the
# kernel. Per program: clpy's kernel name -> (the original's name, [(position, parameter)]),
# positions in the final list, inserted in that order. Every kernel of every program has one:
# each clpy parameter list is its original's with parameters left out, in the same order.
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
    "backprop": {
        "bpnn_layerforward": (
            "bpnn_layerforward_ocl",
            [
                (1, "__global float *output_hidden_unused"),
                (4, "__local float *input_node_unused"),
                (5, "__local float *weight_matrix_unused"),
                (6, "int in_unused"),
            ],
        ),
        "bpnn_adjust_weights": ("bpnn_adjust_weights_ocl", [(3, "int in_unused")]),
    },
    "hotspot": {"hotspot": ("hotspot", [])},
    "nw": {
        # output_d, the tiles, block_width (kernel1), worksize and the offsets (0 here) unused
        "nw_kernel1": (
            "nw_kernel1",
            [
                (2, "__global int *output_unused"),
                (3, "__local int *score_unused"),
                (4, "__local int *ref_unused"),
                (8, "int block_width_unused"),
                (9, "int worksize_unused"),
                (10, "int offset_r_unused"),
                (11, "int offset_c_unused"),
            ],
        ),
        "nw_kernel2": (
            "nw_kernel2",
            [
                (2, "__global int *output_unused"),
                (3, "__local int *score_unused"),
                (4, "__local int *ref_unused"),
                (9, "int worksize_unused"),
                (10, "int offset_r_unused"),
                (11, "int offset_c_unused"),
            ],
        ),
    },
    "lud": {
        "lud_diagonal": ("lud_diagonal", [(1, "__local float *shadow_unused")]),
        "lud_perimeter": (
            "lud_perimeter",
            [
                (1, "__local float *dia_unused"),
                (2, "__local float *peri_row_unused"),
                (3, "__local float *peri_col_unused"),
            ],
        ),
        "lud_internal": (
            "lud_internal",
            [(1, "__local float *peri_row_unused"), (2, "__local float *peri_col_unused")],
        ),
    },
    "stencil3d": {
        "block2d_hybrid_coarsen_x": (
            "block2D_hybrid_coarsen_x",
            [(7, "__local float *sh_a0_unused")],
        )
    },
    "sgemm": {"mysgemm_nt": ("mysgemmNT", [])},
    "spmv": {"spmv_jds": ("spmv_jds", [])},
    "histo": {"histo_r_per_block": ("histo_R_per_block_kernel", [])},
    "nbody": {"nbody_sim": ("nbody_sim", [(5, "__local float4 *local_pos_unused")])},
    "bitonic": {"bitonic_sort": ("bitonicSort", [])},
    "convsep": {
        "convolution_rows": ("convolutionRows", []),
        "convolution_columns": ("convolutionColumns", []),
    },
    "gramschmidt": {f"gramschmidt_kernel{i}": (f"gramschmidt_kernel{i}", []) for i in (1, 2, 3)},
    "srad": {
        k: (k, [])
        for k in (
            "extract_kernel",
            "prepare_kernel",
            "reduce_kernel",
            "srad_kernel",
            "srad2_kernel",
            "compress_kernel",
        )
    },
}


def top_level(src: str) -> list[str]:
    """OpenCL C ``src`` cut at its blank lines outside braces: its top-level items (comments,
    pragmas, functions with their ``#line`` directives)."""
    items: list[str] = []
    cur: list[str] = []
    depth = 0
    for ln in src.split("\n"):
        if not ln.strip() and depth == 0:
            if cur:
                items.append("\n".join(cur))
                cur = []
            continue
        cur.append(ln)
        if not ln.lstrip().startswith("#"):
            code = ln.split("//", 1)[0]
            depth += code.count("{") - code.count("}")
    if cur:
        items.append("\n".join(cur))
    return items


def orig_signature(m: Any, sources: dict[str, str]) -> str | None:
    """The original .cl with clpy's emitted kernels (ORIG_SIGNATURE; ``sources``: the emitted
    source clpy launched per kernel name, else the kernel's generic ``.source``) appended in
    place of its own (renamed ``*_handwritten``), or None where the program has no entry. What
    the emitted sources define before their kernels (helper functions) is appended once: the
    kernels of one module emit the same helpers."""
    table = ORIG_SIGNATURE.get(m.NAME)
    if table is None:
        return None
    src = (common.CL_DIR / m.CL_FILE).read_text()
    seen: set[str] = set()  # the emitted top-level items already appended
    for cname, (oname, extra) in table.items():
        src, k = re.subn(
            rf"(__kernel\s+(?:__attribute__\(\(.*?\)\)\s*)?void\s+){oname}\(",
            rf"\g<1>{oname}_handwritten(",
            src,
        )
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
        # the kernel keeps the #line directive just before its head
        prefix = emitted[: head.start()]
        fresh = [it for it in top_level(prefix) if it not in seen]
        seen.update(fresh)
        body = "\n\n".join(fresh) + ("\n" if prefix.endswith("\n") else "")
        src += "\n" + body + sig + emitted[head.end() :]
    return src


def static_local(name: str, src: str) -> str:
    for pat, rep in STATIC_LOCAL[name]:
        src, k = re.subn(pat, rep, src)
        if k != 1:
            raise ValueError(f"{name}: the static-local rewrite matched {k} times")
    return src
