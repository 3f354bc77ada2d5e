"""Compare the PTX of clpy's kernels with the originals' (files the real-program suite's gpu mode
saves under $OUT/ptx/<program>/): per kernel, instruction counts by opcode where they differ.

    python scripts/ptx_compare.py OUT/ptx [program ...]
"""

from __future__ import annotations

import collections
import re
import sys
from pathlib import Path

_ENTRY = re.compile(r"\.entry\s+(\w+)\s*\(")
_INSN = re.compile(r"^\s*(?:@%?\w+\s+)?([a-z][\w.]*)\s", re.M)


def kernels(ptx: str) -> dict[str, collections.Counter[str]]:
    """Opcode counts per ``.entry`` (calls into helper functions counted where they are)."""
    out: dict[str, collections.Counter[str]] = {}
    parts = _ENTRY.split(ptx)
    for name, body in zip(parts[1::2], parts[2::2]):
        ops = collections.Counter(
            m.group(1) for m in _INSN.finditer(body) if not m.group(1).startswith(".")
        )
        out[name.lower()] = ops
    return out


def _norm(name: str) -> str:
    """Kernel names as the ports spell them: mysgemmNT ~ mysgemm_nt, *_ocl ~ *."""
    n = name.lower().replace("_", "")
    for suffix in ("ocl", "kernel"):
        n = n.removesuffix(suffix)
    return n


def main() -> None:
    root = Path(sys.argv[1])
    only = set(sys.argv[2:])
    for prog in sorted(p for p in root.iterdir() if p.is_dir()):
        if only and prog.name not in only:
            continue
        orig: dict[str, collections.Counter[str]] = {}
        for f in prog.glob("*_original.bin"):
            orig.update(kernels(f.read_text(errors="replace")))
        mine: dict[str, collections.Counter[str]] = {}
        for f in prog.glob("*_clpy.bin"):
            mine.update(kernels(f.read_text(errors="replace")))
        print(f"== {prog.name}: original {sorted(orig)}; clpy {sorted(mine)}")
        for name, ops in sorted(mine.items()):
            ref = next((v for k, v in orig.items() if _norm(k) == _norm(name)), None)
            if ref is None:
                print(f"  {name}: no original of that name")
                continue
            diff = {
                op: (ref.get(op, 0), ops.get(op, 0))
                for op in set(ref) | set(ops)
                if ref.get(op, 0) != ops.get(op, 0)
            }
            total = (sum(ref.values()), sum(ops.values()))
            print(f"  {name}: {total[0]} -> {total[1]} instructions")
            for op, (a, b) in sorted(diff.items(), key=lambda kv: -abs(kv[1][0] - kv[1][1]))[:14]:
                print(f"    {op:24s} {a:5d} -> {b:5d}")


if __name__ == "__main__":
    main()
