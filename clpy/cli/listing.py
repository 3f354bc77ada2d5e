"""``clpy devices`` and ``clpy builtins [PATTERN]``."""

from __future__ import annotations

import argparse
import fnmatch

from clpy.builtins.registry import REGISTRY, Builtin
from clpy.runtime.api import devices


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "devices",
        help="list the devices clpy can run kernels on, with their targets",
        description="The devices clpy sees (`clpy.devices()`): the simulator and every "
        "OpenCL device, each with its target: OpenCL C version, features, limits.",
    )
    p.set_defaults(run=run_devices)
    b = sub.add_parser(
        "builtins",
        help="list the built-in functions with their signatures and docs",
        description="The registry's built-ins (clpy.<name> inside kernels). PATTERN is a "
        "glob (atomic_*) or a substring (reduce); matched against names and families.",
    )
    b.add_argument("pattern", nargs="?", default=None, metavar="PATTERN")
    b.add_argument("--all-signatures", action="store_true", help="do not abbreviate overloads")
    b.set_defaults(run=run_builtins)


def run_devices(args: argparse.Namespace) -> int:
    for d in devices():
        print(f"{d.name}")
        print(f"    {d.description}")
        t = d.target
        if t is None:
            continue
        print(f"    target: OpenCL C {t.version[0]}.{t.version[1]} ({t.std_flag})")
        if d.info is not None:
            i = d.info
            print(
                f"    limits: work-group size {i.max_work_group_size}, work-item sizes "
                f"{'x'.join(map(str, i.max_work_item_sizes))}, local memory "
                f"{i.local_mem_size} bytes, constant buffer {i.max_constant_buffer_size} bytes, "
                f"{i.address_bits}-bit addresses, sub-groups {'yes' if i.sub_groups else 'no'}"
            )
        print(f"    features: {' '.join(sorted(t.features)) or '-'}")
        print(f"    extensions: {' '.join(sorted(t.extensions)) or '-'}")
    return 0


def matches(b: Builtin, pattern: str | None) -> bool:
    if not pattern:
        return True
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(b.name, pattern) or fnmatch.fnmatchcase(b.family, pattern)
    return pattern.lower() in b.name.lower() or pattern.lower() == b.family.lower()


def run_builtins(args: argparse.Namespace) -> int:
    found = [b for name, b in sorted(REGISTRY.items()) if matches(b, args.pattern)]
    if not found:
        print(f"no built-in matches {args.pattern!r}")
        return 1
    for b in found:
        doc = b.doc.strip().splitlines()[0] if b.doc.strip() else ""
        print(f"{b.name}  [{b.family}]  {doc}")
        limit = 10**6 if args.all_signatures else 6
        text = b.signatures_text(limit) if b.overloads else f"{b.name}{b.signature}"
        for line in text.splitlines():
            if line.strip() != b.name:
                print(f"    {line.strip()}")
    print(f"({len(found)} built-in(s))")
    return 0
