"""``clpy check FILE.py ...``: type-check every kernel and device function (and build them
on a device); diagnostics as ``file:line:col: error: message`` with the caret; exit 1 on any."""

from __future__ import annotations

import argparse
import linecache
import sys
import traceback
from typing import Any

from clpy.cli.emit import resolve_target
from clpy.cli.load import Module, UsageError, is_generic, load_module, parse_sigs, rel
from clpy.cli.load import specialization as make_spec
from clpy.emit.program import emit_program, ordered_functions, required_features
from clpy.emit.targets import Target
from clpy.errors import BuildError, CompileError
from clpy.frontend.context import CompileSession
from clpy.kernel import Func, Kernel
from clpy.runtime.api import get_device
from clpy.runtime.build import PROGRAMS
from clpy.runtime.devices import Device
from clpy.runtime.quirks import build_std, fp_build_options
from clpy.types.annotations import _Constexpr


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "check",
        help="type-check the kernels and device functions of modules (exit 1 on errors)",
        description=(
            "Import each FILE.py and compile every kernel and annotated device function for "
            "the target (default opencl-c-2.0); with --device also build them with that "
            "device's OpenCL compiler. Prints file:line:col: error: message with the source "
            "line and a caret; exits with status 1 if anything fails (for pre-commit and CI)."
        ),
    )
    p.add_argument("files", nargs="+", metavar="FILE.py")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--target", default=None, metavar="T", help="code-generation target")
    where.add_argument("--device", metavar="SEL", help="check and build on this device")
    p.add_argument(
        "--sig",
        action="append",
        default=[],
        metavar="KERNEL:ARGS",
        help="parameter types of a generic kernel: 'saxpy: x=Global[float32], n=int32'",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="print only diagnostics")
    p.set_defaults(run=run)


def render(e: CompileError) -> str:
    """``file:line:col: error: message``, the source line and a caret (file relative)."""
    first, *rest = e.message.split("\n")
    if e.loc is None or e.loc.line <= 0:
        return "\n".join([f"error: {first}", *rest])
    loc = e.loc
    out = [f"{rel(loc.file)}:{loc.line}:{loc.col + 1}: error: {first}"]
    text = linecache.getline(loc.file, loc.line).rstrip("\n")
    if text:
        width = max(1, (loc.end_col or loc.col + 1) - loc.col)
        out.append(f"    {text}")
        out.append(f"    {' ' * loc.col}{'^' * width}")
    return "\n".join([*out, *rest])


def run(args: argparse.Namespace) -> int:
    target = resolve_target(args.target, None if args.device is None else args.device)
    device = get_device(args.device) if args.device is not None else None
    errors = 0
    checked = 0
    for path in args.files:
        try:
            mod = load_module(path)
        except UsageError:
            raise
        except CompileError as e:
            print(render(e))
            errors += 1
            continue
        except Exception as e:  # noqa: BLE001 - the user's module failed to import
            frame = traceback.extract_tb(e.__traceback__)[-1]
            print(f"{rel(frame.filename)}:{frame.lineno}: error: {type(e).__name__}: {e}")
            errors += 1
            continue
        n, bad = _check_module(mod, target, device, args.sig)
        checked += n
        errors += bad
    if not args.quiet:
        what = f"{checked} kernel(s) and function(s) for {device or target.name}"
        print(
            f"{errors} error(s) in {what}" if errors else f"ok: {what}",
            file=sys.stderr,
        )
    return 1 if errors else 0


def _check_module(
    mod: Module, target: Target, device: Device | None, sig_args: list[str]
) -> tuple[int, int]:
    sigs = parse_sigs(sig_args, [])
    errors = checked = 0
    for k in mod.kernels:
        sig = sigs.get(k.__name__)
        if sig is None and is_generic(k):
            print(
                f"{rel(mod.path)}: note: kernel {k.__name__} has unannotated or constexpr "
                f"parameters: checked where it is called with --sig '{k.__name__}: ...'",
                file=sys.stderr,
            )
            continue
        checked += 1
        errors += _report(lambda k=k, sig=sig: _check_kernel(mod, k, sig, target, device))
    for f in mod.funcs:
        if not _annotated(f):
            continue
        checked += 1
        errors += _report(lambda f=f: _check_func(f))
    return checked, errors


def _report(step: Any) -> int:
    try:
        step()
    except CompileError as e:
        print(render(e))
        return 1
    except BuildError as e:
        print(str(e).split("\n--- compiler log ---")[0])
        return 1
    return 0


def _check_kernel(
    mod: Module, k: Kernel, sig: str | None, target: Target, device: Device | None
) -> None:
    spec = make_spec(mod, k, sig)
    source = emit_program(spec.function, target)
    if device is not None:
        need = frozenset(required_features(ordered_functions(spec.function)))
        std = build_std(target, need)
        options = " ".join(
            (f"-cl-std=CL{std[0]}.{std[1]}", *fp_build_options(target), *device.build_options)
        )
        PROGRAMS.get(device.context, device.cl_device, source, options, k.__name__, device.name)


def _annotated(f: Func) -> bool:
    anns = f.annotations()
    return all(
        anns.get(n) is not None and not isinstance(anns.get(n), _Constexpr) for n in f.param_names
    )


def _check_func(f: Func) -> None:
    anns = f.annotations()
    types = tuple((n, anns[n]) for n in f.param_names)
    f.build_for(types, CompileSession(), f.parsed.loc(f.parsed.tree))
