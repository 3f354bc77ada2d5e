"""The ``clpy`` command (also ``python -m clpy``): emit, check, devices, builtins."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import clpy
from clpy.cli import check, emit, listing
from clpy.cli.load import UsageError
from clpy.errors import CompileError


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="clpy",
        description="clpy: OpenCL kernels written in Python. Emit OpenCL C and C headers, "
        "check kernels, list devices and built-ins.",
    )
    p.add_argument("--version", action="version", version=f"clpy {clpy.__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    emit.add_parser(sub)
    check.add_parser(sub)
    listing.add_parsers(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 errors found, 2 usage)."""
    p = parser()
    args = p.parse_args(argv)
    try:
        status: int = args.run(args)
    except UsageError as e:
        print(f"clpy {args.command}: error: {e}", file=sys.stderr)
        return 2
    except CompileError as e:  # ``emit`` stops at the first kernel that does not compile
        print(check.render(e), file=sys.stderr)
        return 1
    return status
