"""A self-contained C header for a C/C++ host program that runs clpy's emitted kernels.

``clpy emit FILE.py --header`` writes it beside the ``.cl`` file. It needs only
``<stddef.h>`` and ``<stdint.h>``, compiles as C11 and C++17, and holds:

- each ``@clpy.struct`` the kernels use as a ``typedef struct`` with the OpenCL layout
  (vectors as aligned arrays), guarded by static assertions on its size, alignment and the
  offset of every field, so a host compiler that lays it out differently stops the build;
- per kernel, a comment block describing each parameter (index, name, OpenCL type, address
  space, whether the kernel writes it, what ``clSetKernelArg`` takes) and ``#define``s for the
  argument indices (``ADVANCE_ARG_DT``), read from the parameter ABI (``Specialization.abi``);
- the ``-cl-std`` build option and the extensions/optional features the program needs;
- optionally (``embed=True``) the program text as ``static const char <module>_cl_source[]``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from clpy.abi import Param
from clpy.emit.program import ordered_functions, required_features
from clpy.emit.targets import Target
from clpy.ir.nodes import Function
from clpy.kernel import Specialization
from clpy.runtime.quirks import build_std, fp_build_options
from clpy.types.core import AddressSpace, ArrayType, Kind, PointerType, ScalarType, Type, VectorType
from clpy.types.structs import StructType

_PORTABILITY = """\
#ifndef CLPY_ALIGNAS
#ifdef __cplusplus
#define CLPY_ALIGNAS(n) alignas(n)
#define CLPY_ALIGNOF(t) alignof(t)
#define CLPY_STATIC_ASSERT(e, m) static_assert(e, m)
#else
#define CLPY_ALIGNAS(n) _Alignas(n)
#define CLPY_ALIGNOF(t) _Alignof(t)
#define CLPY_STATIC_ASSERT(e, m) _Static_assert(e, m)
#endif
#endif"""


def c_identifier(name: str) -> str:
    """``my-kernels`` → ``my_kernels``: a name usable in C identifiers and macros."""
    out = re.sub(r"\W", "_", name, flags=re.ASCII)
    return "_" + out if not out or out[0].isdigit() else out


def host_scalar(t: ScalarType) -> str:
    """The ``<stdint.h>`` type holding one OpenCL scalar on the host (half as its bits)."""
    if t.kind is Kind.FLOAT:
        return {16: "uint16_t", 32: "float", 64: "double"}[t.bits]
    if t.kind is Kind.BOOL:
        return "uint8_t"
    if t.kind in (Kind.SINT, Kind.UINT):
        return f"{'u' if t.kind is Kind.UINT else ''}int{t.bits}_t"
    raise TypeError(f"{t} has no host representation")


def _field(name: str, t: Type) -> tuple[str, str]:
    """(declaration, comment) of one struct field with OpenCL's alignment."""
    dims = ""
    while isinstance(t, ArrayType):
        dims += "".join(f"[{n}]" for n in t.shape)
        t = t.elem
    if isinstance(t, StructType):
        return f"{t.name} {name}{dims};", ""
    if isinstance(t, VectorType):
        lanes = 4 if t.n == 3 else t.n
        decl = f"CLPY_ALIGNAS({t.align}) {host_scalar(t.elem)} {name}{dims}[{lanes}];"
        return decl, f"{t.cl_name}" + (": 3 lanes stored in 4" if t.n == 3 else "")
    assert isinstance(t, ScalarType)
    c = host_scalar(t)
    align = f"CLPY_ALIGNAS({t.align}) " if t.align > 4 else ""  # int64_t is 4-aligned on i386
    note = "half: IEEE binary16 bits" if t.name == "half" else ""
    return f"{align}{c} {name}{dims};", note


def struct_c(st: StructType) -> list[str]:
    """``typedef struct {...} Name;`` plus static assertions on its OpenCL layout."""
    out = [
        f"/* struct {st.name}: {st.size} bytes, aligned to {st.align} "
        f"(OpenCL layout; Python: {st.name}.dtype) */",
        "typedef struct {",
    ]
    for fname, ft in st.fields:
        decl, note = _field(fname, ft)
        out.append(f"    {decl}" + (f"  /* {note} */" if note else ""))
    out.append(f"}} {st.name};")
    msg = f"{st.name} must have the OpenCL layout"
    out.append(f'CLPY_STATIC_ASSERT(sizeof({st.name}) == {st.size}, "{msg}");')
    out.append(f'CLPY_STATIC_ASSERT(CLPY_ALIGNOF({st.name}) == {st.align}, "{msg}");')
    for (fname, _), off in zip(st.fields, st.offsets):
        out.append(f'CLPY_STATIC_ASSERT(offsetof({st.name}, {fname}) == {off}, "{msg}");')
    return out


def _structs_of(fns: Sequence[Function]) -> list[StructType]:
    """Structs the program uses, each after the structs its fields contain."""
    out: list[StructType] = []

    def visit(t: Type) -> None:
        while isinstance(t, (ArrayType, PointerType)):
            t = t.elem
        if isinstance(t, StructType) and t not in out:
            for _, ft in t.fields:
                visit(ft)
            out.append(t)

    for fn in fns:
        for p in fn.params:
            visit(p.type)
        for st in fn.structs:
            visit(st)
    return out


def _space(p: Param) -> str:
    t = p.type
    if isinstance(t, PointerType):
        return t.space.value if t.space is not AddressSpace.GENERIC else "generic"
    return "value"


def _access(p: Param) -> str:
    if not isinstance(p.type, PointerType):
        return "by value"
    if p.type.space is AddressSpace.LOCAL:
        return "scratch"
    return "written" if p.written else "read only"


def kernel_c(spec: Specialization) -> list[str]:
    """The comment block and argument-index ``#define``s of one kernel."""
    fn = spec.function
    prefix = c_identifier(fn.name).upper()
    params = spec.abi
    head = ("arg", "name", "declaration", "space", "access")
    rows = [(str(p.index), p.name, p.c_declaration(p.name), _space(p), _access(p)) for p in params]
    out = [f'/* kernel {fn.name}: clCreateKernel(program, "{fn.name}", &err)']
    if rows:
        w = [max(len(r[i]) for r in (head, *rows)) for i in range(5)]
        out.append(" *   " + "  ".join(f"{c:<{w[i]}}" for i, c in enumerate(head)).rstrip())
        for p, row in zip(params, rows):
            h = p.header_arg()
            out.append(" *   " + "  ".join(f"{c:<{w[i]}}" for i, c in enumerate(row)).rstrip())
            pad = " " * (w[0] + 2)
            out.append(
                f" *   {pad}clSetKernelArg(k, {p.index}, {h.size}, ...): {h.c_type}; {h.note}"
            )
    else:
        out.append(" *   (no arguments)")
    for name, value in spec.constexprs:
        out.append(f" *   constexpr {name} = {value!r} (baked into the program)")
    out.append(" */")
    for p in params:
        out.append(f"#define {prefix}_ARG_{c_identifier(p.name).upper()} {p.index}")
    out.append(f"#define {prefix}_NUM_ARGS {len(params)}")
    return out


def _extensions(source: str) -> list[str]:
    return re.findall(r"^#pragma OPENCL EXTENSION (\w+) : enable$", source, re.M)


def c_string(text: str, indent: str = "    ") -> list[str]:
    """``text`` as C string literal lines (ASCII only, no trigraphs)."""
    out = []
    for line in text.splitlines(True):
        esc = []
        for ch in line:
            if ch == "\\":
                esc.append("\\\\")
            elif ch == '"':
                esc.append('\\"')
            elif ch == "\n":
                esc.append("\\n")
            elif ch == "\t":
                esc.append("\\t")
            elif ch == "?":
                esc.append("\\?")  # no trigraphs (??=) in C11
            elif " " <= ch <= "~":
                esc.append(ch)
            else:
                esc.extend(f"\\{b:03o}" for b in ch.encode())
        out.append(f'{indent}"{"".join(esc)}"')
    return out or [f'{indent}""']


def c_header(
    specs: Sequence[Specialization],
    target: Target,
    module: str,
    source: str,
    cl_file: str,
    origin: str = "",
    embed: bool = False,
) -> str:
    """The header for the program ``source`` (emitted for ``target`` from ``specs``).

    ``module`` names the macros and the embedded string (``particles`` →
    ``PARTICLES_BUILD_OPTIONS``, ``particles_cl_source``); ``cl_file`` is the ``.cl`` file the
    header describes, ``origin`` the Python file it came from.
    """
    ident = c_identifier(module)
    macro = ident.upper()
    fns = ordered_functions(*(s.function for s in specs))
    need = required_features(fns)
    std = build_std(target, frozenset(need))
    options = " ".join((f"-cl-std=CL{std[0]}.{std[1]}", *fp_build_options(target)))
    exts = _extensions(source)
    feats = sorted(f for f in need if f.startswith("__opencl_c_"))
    out: list[Any] = [
        f"/* {ident}.h: generated by clpy"
        + (f" from {origin}" if origin else "")
        + f" for {target.name}. Do not edit.",
        " *",
        f" * Host-side description of the OpenCL C program in {cl_file}: build it with",
        f" * {macro}_BUILD_OPTIONS; each kernel lists its arguments for clSetKernelArg. */",
        f"#ifndef CLPY_{macro}_H",
        f"#define CLPY_{macro}_H",
        "",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "",
        "/* -cl-std for the features the program uses; for a device target also the options",
        " * that give the simulator's float results (-cl-fp32-correctly-rounded-divide-sqrt",
        " * where the device offers it). */",
        f'#define {macro}_BUILD_OPTIONS "{options}"',
        "/* Extensions the program enables: the device must report each one. */",
        f'#define {macro}_EXTENSIONS "{" ".join(exts)}"',
        "/* OpenCL C optional features it uses (every OpenCL C 2.0 device has them; on 3.0 see",
        " * CL_DEVICE_OPENCL_C_FEATURES). */",
        f'#define {macro}_FEATURES "{" ".join(feats)}"',
        "",
    ]
    structs = _structs_of(fns)
    if structs:
        out.append(_PORTABILITY)
        out.append("")
        for st in structs:
            out.extend(struct_c(st))
            out.append("")
    for spec in specs:
        out.extend(kernel_c(spec))
        out.append("")
    if embed:
        out.append(f"/* The program text of {cl_file}, for clCreateProgramWithSource. */")
        out.append(f"static const char {ident}_cl_source[] =")
        lines = c_string(source)
        lines[-1] += ";"
        out.extend(lines)
        out.append("")
    out.append(f"#endif /* CLPY_{macro}_H */")
    return "\n".join(out) + "\n"


__all__ = ["c_header", "c_identifier", "c_string", "host_scalar", "kernel_c", "struct_c"]
