"""``clpy emit FILE.py``: write ``<module>.cl`` (and ``<module>.h``) for a C/C++ project."""

from __future__ import annotations

import argparse
import os
import sys

from clpy.cli.load import UsageError, is_generic, load_module, parse_sigs, rel, select
from clpy.cli.load import specialization as make_spec
from clpy.emit.program import emit_program
from clpy.emit.targets import Target, target_of
from clpy.header import c_header
from clpy.kernel import Specialization
from clpy.runtime.api import get_device


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "emit",
        help="write the OpenCL C program (and a C header) of a module's kernels",
        description=(
            "Import FILE.py and write DIR/<module>.cl with its kernels (all, or those named "
            "with -k), the device functions and structs they use, for one target. With "
            "--header also DIR/<module>.h for a C/C++ host program. Kernels with unannotated "
            "or constexpr parameters need -k NAME --sig '...'; without one they are skipped."
        ),
    )
    p.add_argument("file", metavar="FILE.py", help="the Python file defining the kernels")
    p.add_argument(
        "-k", "--kernel", action="append", metavar="KERNEL", help="emit only this kernel"
    )
    p.add_argument("-o", "--output-dir", default=".", metavar="DIR", help="where to write")
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--target",
        default=None,
        metavar="T",
        help="opencl-c-1.2, opencl-c-2.0 (default) or opencl-c-3.0[+feature...]",
    )
    where.add_argument(
        "--device", metavar="SEL", help="write for this device's target (see `clpy devices`)"
    )
    p.add_argument("--header", action="store_true", help="also write DIR/<module>.h")
    p.add_argument(
        "--embed",
        action="store_true",
        help="put the program text in the header as <module>_cl_source (implies --header)",
    )
    p.add_argument("--no-line", action="store_true", help="leave out #line directives")
    p.add_argument(
        "--sig",
        action="append",
        default=[],
        metavar="[KERNEL:]ARGS",
        help="parameter types of a generic kernel: 'saxpy: x=Global[float32], n=int32' "
        "(constexpr values too: 'BLOCK=256')",
    )
    p.set_defaults(run=run)


def resolve_target(target: str | None, device: str | None) -> Target:
    """``--target`` or ``--device`` → the emitter's target."""
    if device is not None:
        try:
            dev = get_device(device)
        except (LookupError, ValueError) as e:
            raise UsageError(f"--device {device!r}: {e}") from None
        if dev.target is None:
            raise UsageError(f"--device {device!r}: {dev} runs Python, it has no OpenCL target")
        return dev.target
    try:
        return target_of(target or "opencl-c-2.0")
    except ValueError as e:
        raise UsageError(f"--target: {e}") from None


def run(args: argparse.Namespace) -> int:
    target = resolve_target(args.target, args.device)
    mod = load_module(args.file)
    kernels = select(mod, args.kernel)
    sigs = parse_sigs(args.sig, args.kernel or [])
    unknown = set(sigs) - {k.__name__ for k in kernels}
    if unknown:
        raise UsageError(f"--sig names {sorted(unknown)[0]!r}, which is not emitted")
    specs: list[Specialization] = []
    for k in kernels:
        sig = sigs.get(k.__name__)
        if sig is None and is_generic(k):
            if args.kernel:
                raise UsageError(
                    f"kernel {k.__name__} has unannotated or constexpr parameters "
                    f"({', '.join(k.param_names)}): give their types with "
                    f"--sig '{k.__name__}: name=type, ...'"
                )
            print(
                f"{rel(mod.path)}: note: skipping kernel {k.__name__}: it has unannotated or "
                f"constexpr parameters; emit it with -k {k.__name__} --sig '...'",
                file=sys.stderr,
            )
            continue
        specs.append(make_spec(mod, k, sig))
    if not specs:
        raise UsageError(f"{mod.path}: no kernel to emit")
    source = emit_program(
        [s.function for s in specs], target, line_directives=not args.no_line, line_file=rel
    )
    os.makedirs(args.output_dir, exist_ok=True)
    cl_path = os.path.join(args.output_dir, f"{mod.name}.cl")
    _write(cl_path, source)
    if args.header or args.embed:
        header = c_header(
            specs,
            target,
            mod.name,
            source,
            cl_file=f"{mod.name}.cl",
            origin=rel(mod.path),
            embed=args.embed,
        )
        _write(os.path.join(args.output_dir, f"{mod.name}.h"), header)
    return 0


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    print(f"wrote {path}", file=sys.stderr)
