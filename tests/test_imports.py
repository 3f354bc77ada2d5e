"""The package's import graph has no cycles, and every module imports alone.

DESIGN.md: the pipeline's arrows run one way (frontend → IR → emit | sim, runtime on top);
``sim`` depends on ``clpy`` and never the reverse except the runtime's lazy import of the
simulator package; the emitter and the simulator are peers that never import each other;
``clpy.builtins`` never imports ``clpy.emit``. A function-local import only defers an optional
dependency (or, for ``sim``, the simulator itself), so the graph is built from every import
statement outside ``if TYPE_CHECKING:`` blocks, wherever it is written.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"clpy": "clpy", "sim": "clpy_sim"}  # directory → installed name
# Imports allowed to point "backwards" because they are the documented lazy entry points:
# the runtime starts the simulator only when the user picks the "sim" device.
LAZY_EDGES = {("clpy.runtime.simplan", "clpy_sim")}


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for folder, name in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder).with_suffix("")
            parts = [name, *rel.parts]
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(mod: str, path: Path, known: dict[str, Path]) -> list[tuple[str, int, bool]]:
    """(imported module, line, function-local?) for every import outside TYPE_CHECKING."""
    tree = ast.parse(path.read_text(), str(path))
    is_pkg = path.name == "__init__.py"
    out: list[tuple[str, int, bool]] = []

    def resolve(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    def visit(node: ast.AST, local: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for sub in child.orelse:
                    visit(sub, local)
                continue
            in_fn = local or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                ast.Lambda))
            if isinstance(child, ast.Import):
                for a in child.names:
                    r = resolve(a.name)
                    if r:
                        out.append((r, child.lineno, local))
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    pkg = mod if is_pkg else mod.rpartition(".")[0]
                    for _ in range(child.level - 1):
                        pkg = pkg.rpartition(".")[0]
                    base = f"{pkg}.{base}" if base else pkg
                for a in child.names:
                    r = resolve(f"{base}.{a.name}") or resolve(base)
                    if r:
                        out.append((r, child.lineno, local))
            visit(child, in_fn)

    visit(tree, False)
    return out


def _graph() -> dict[str, set[str]]:
    known = _modules()
    graph: dict[str, set[str]] = {m: set() for m in known}
    for mod, path in known.items():
        for dep, _line, _local in _imports(mod, path, known):
            if dep != mod and (mod, dep) not in LAZY_EDGES and not mod.startswith(dep + "."):
                graph[mod].add(dep)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def test_no_import_cycles() -> None:
    cycles = _cycles(_graph())
    assert not cycles, "import cycles:\n" + "\n".join(" ↔ ".join(c) for c in cycles)


def _in_sim(mod: str) -> bool:
    return mod == "clpy_sim" or mod.startswith("clpy_sim.")


def test_layering() -> None:
    """The peers and the one-way arrows of DESIGN.md."""
    graph = _graph()
    bad = []
    for mod, deps in graph.items():
        for dep in deps:
            if _in_sim(mod) and dep.startswith("clpy.emit"):
                bad.append(f"{mod} → {dep} (the simulator never reads the emitter)")
            if mod.startswith("clpy.emit") and _in_sim(dep):
                bad.append(f"{mod} → {dep} (the emitter never reads the simulator)")
            if mod.startswith("clpy.builtins") and dep.startswith("clpy.emit"):
                bad.append(f"{mod} → {dep} (emit → builtins, not the reverse)")
            if not _in_sim(mod) and _in_sim(dep):
                bad.append(f"{mod} → {dep} (clpy starts the simulator lazily only)")
            if mod.startswith(("clpy.ir", "clpy.types")) and dep.startswith(
                    ("clpy.frontend", "clpy.emit", "clpy.runtime", "clpy.kernel")):
                bad.append(f"{mod} → {dep} (the IR and types sit below the pipeline)")
    assert not bad, "\n".join(sorted(bad))


def test_function_local_imports_only_defer_optional_dependencies() -> None:
    """A function-local import of a clpy/sim module is a cycle being dodged."""
    known = _modules()
    local = []
    for mod, path in known.items():
        for dep, line, is_local in _imports(mod, path, known):
            if is_local and (mod, dep) not in LAZY_EDGES:
                local.append(f"{path.relative_to(ROOT)}:{line}: {dep}")
    assert not local, "function-local imports of project modules:\n" + "\n".join(local)


def _import_alone(mod: str, pycache: str) -> tuple[str, str]:
    # Bytecode goes to one scratch folder that the children share, so each module is compiled
    # once, not once per child (with PYTHONDONTWRITEBYTECODE set, as on some machines, every
    # child compiled all it imports: about 40% of this test's CPU time).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONWARNINGS="error::ImportWarning", PYTHONPYCACHEPREFIX=pycache)
    r = subprocess.run([sys.executable, "-c", f"import {mod}"], capture_output=True, text=True,
                       cwd=ROOT, env=env)
    return mod, r.stderr.strip().splitlines()[-1] if r.returncode else ""


def test_every_module_imports_alone(tmp_path: Path) -> None:
    """Each module imported first, in a fresh interpreter (catches order-dependent cycles)."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda m: _import_alone(m, str(tmp_path)), sorted(_modules())))
    failed = [f"{m}: {err}" for m, err in results if err]
    assert not failed, "\n".join(failed)


def test_simulator_loads_no_emitter_code() -> None:
    """Starting the simulator (and resolving every built-in implementation) loads no emitter
    module beyond what ``import clpy`` itself loads (``clpy.Target``)."""
    code = ("import sys, clpy; before = set(sys.modules); import clpy_sim, clpy_sim.builtins; "
            "clpy_sim.builtins.table(); "
            "print(sorted(m for m in set(sys.modules) - before if m.startswith('clpy.emit')))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
