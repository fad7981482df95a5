"""The house: every import of dcpm_cli points down its layers, and no two modules import each other.

Read from the source (every import, at module level, in a function or under TYPE_CHECKING), so a
dependency that runs back up fails here before it can grow into a cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "dcpm_cli"

# Lowest first. A module may import its own layer's modules and any layer below; never one above.
LAYERS: list[tuple[str, ...]] = [
    ("dcpm_cli", "dcpm_cli.errors", "dcpm_cli.models", "dcpm_cli.dates", "dcpm_cli.private", "dcpm_cli.blas"),
    ("dcpm_cli.chunking",),
    ("dcpm_cli.config",),
    ("dcpm_cli.prompts", "dcpm_cli.llm", "dcpm_cli.onnx_encoder", "dcpm_cli.minilm", "dcpm_cli.mpnet"),
    ("dcpm_cli.embed",),
    ("dcpm_cli.store",),
    ("dcpm_cli.ingest",),
    ("dcpm_cli.write", "dcpm_cli.read"),
    ("dcpm_cli.dream",),
    ("dcpm_cli.ops",),
    ("dcpm_cli.views", "dcpm_cli.memory"),
    ("dcpm_cli.bench",),
    ("dcpm_cli.render",),
    ("dcpm_cli.cli", "dcpm_cli.mcp", "dcpm_cli.__main__"),
]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer_of(module: str) -> int:
    best, depth = -1, -1
    for i, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            # the package's own face (dcpm_cli/__init__.py) is itself only, not every module
            within = module.startswith(prefix + ".") and prefix != "dcpm_cli"
            if (module == prefix or within) and prefix.count(".") > depth:
                best, depth = i, prefix.count(".")
    assert best >= 0, f"{module} is in no layer: add it to LAYERS"
    return best


def imports_of(module: str) -> set[str]:
    """The dcpm_cli modules that `module` imports (a name imported from a package is its submodule
    when one exists, else the package itself)."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([base] if base else [])])
            for a in node.names:
                found.add(f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base)
    return {m for m in found if m in MODULES and m != module}


GRAPH = {m: imports_of(m) for m in MODULES}


def test_every_module_has_a_layer() -> None:
    for m in MODULES:
        layer_of(m)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module: str) -> None:
    upward = sorted(t for t in GRAPH[module] if layer_of(t) > layer_of(module))
    assert not upward, f"{module} (layer {layer_of(module)}) imports from a layer above: {upward}"


def test_no_import_cycle() -> None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []
    cycles: list[list[str]] = []

    def visit(m: str) -> None:
        state[m] = 1
        path.append(m)
        for t in sorted(GRAPH[m]):
            if state.get(t) == 1:
                cycles.append([*path[path.index(t) :], t])
            elif t not in state:
                visit(t)
        path.pop()
        state[m] = 2

    for m in sorted(GRAPH):
        if m not in state:
            visit(m)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)
