"""clpy/__init__.pyi and docs/builtins.md are generated from the registry by
scripts/gen_stubs.py: they are up to date, and the stub declares every built-in, type,
constant and public name with a one-line doc."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import clpy
from clpy.builtins.registry import REGISTRY

ROOT = Path(__file__).resolve().parent.parent


def _gen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_stubs", ROOT / "scripts" / "gen_stubs.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gen_stubs"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_stub_is_up_to_date() -> None:
    gen = _gen()
    assert (ROOT / "clpy" / "__init__.pyi").read_text() == gen.generate_stub(), (
        "clpy/__init__.pyi is stale: run python scripts/gen_stubs.py"
    )


def test_builtins_doc_is_up_to_date() -> None:
    gen = _gen()
    assert (ROOT / "docs" / "builtins.md").read_text() == gen.generate_doc(), (
        "docs/builtins.md is stale: run python scripts/gen_stubs.py"
    )


def test_check_mode_reports_stale_files(tmp_path: Path) -> None:
    gen = _gen()
    gen.STUB = tmp_path / "stub.pyi"
    gen.DOC = tmp_path / "builtins.md"
    gen.ROOT = tmp_path
    assert gen.main(["--check"]) == 1
    assert gen.main([]) == 0 and gen.main(["--check"]) == 0
    gen.DOC.write_text(gen.DOC.read_text().replace("Sine", "Cosine"))
    assert gen.main(["--check"]) == 1


def test_stub_declares_everything_with_docs() -> None:
    tree = ast.parse((ROOT / "clpy" / "__init__.pyi").read_text())
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert set(REGISTRY) <= set(defs)
    for name, node in defs.items():
        doc = ast.get_docstring(node)
        assert doc and doc.splitlines()[0].strip(), name
    assert "Sine" in (ast.get_docstring(defs["sin"]) or "")
    declared = set(defs)
    documented: set[str] = set()
    body = tree.body
    for i, node in enumerate(body):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            declared.add(node.target.id)
            nxt = body[i + 1] if i + 1 < len(body) else None
            if isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant):
                documented.add(node.target.id)
        elif isinstance(node, ast.ImportFrom):
            declared.update(a.asname or a.name for a in node.names)
    for name in ("float32", "float4", "int", "CLK_LOCAL_MEM_FENCE", "atomic_int"):
        assert name in documented, name
    public = set(clpy.__all__) | {"DeviceArray", "to_device", "LocalMemory", "reduction"}
    public |= {"devices", "use_device", "get_device", "work_group_reduce", "Global", "sim"}
    assert public <= declared, sorted(public - declared)
