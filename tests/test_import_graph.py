"""The modules of each package import one another without cycles (counting imports inside functions too: a
cycle hidden in a function is still a cycle), and membench_agents' sub-packages point one way."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = {name: Path(__file__).resolve().parents[1] / name / "src" / name for name in ("membench_envs", "membench_agents")}

#: membench_agents' layers, lowest first: a module may import from its own layer and the ones before it.
LAYERS = [
    ("membench_agents.errors",),
    ("membench_agents.nets",),
    ("membench_agents.algos.registry", "membench_agents.config"),
    ("membench_agents.algos",),
    ("membench_agents.runs",),
    ("membench_agents.analysis",),
    ("membench_agents.ltm",),
    ("membench_agents.api", "membench_agents.cli", "membench_agents.__main__", "membench_agents"),
]


def modules(package: str) -> dict[str, Path]:
    root = SRC[package]
    out = {}
    for p in root.rglob("*.py"):
        rel = p.relative_to(root.parent).with_suffix("")
        name = ".".join(rel.parts)
        out[name[: -len(".__init__")] if name.endswith(".__init__") else name] = p
    return out


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(name: str, path: Path, known: dict[str, Path], type_only: bool = False) -> set[str]:
    """The package's own modules that ``name`` imports anywhere in the file; those under ``if TYPE_CHECKING``
    only with ``type_only`` (a type-only import of a module that imports this one is no cycle at run time, but
    a type-only import against the layers is still a dependency against them)."""
    tree = ast.parse(path.read_text())
    skip = set()
    if not type_only:
        skip = {
            id(n)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and _type_checking(node)
            for child in node.body
            for n in ast.walk(child)
        }
    base = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level:
                parts = base.split(".")[: len(base.split(".")) - (node.level - 1)]
                mod = ".".join(parts + ([mod] if mod else []))
            targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in known else mod for a in node.names]
        for t in targets:
            while t and t not in known:
                t = t.rpartition(".")[0]
            if t and t != name:
                out.add(t)
    return out


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph[n]):
            if state.get(m) == 1:
                return [*stack[stack.index(m) :], m]
            if m not in state and (found := visit(m)):
                return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state and (found := visit(n)):
            return found
    return None


@pytest.mark.parametrize("package", sorted(SRC))
def test_no_import_cycle(package):
    known = modules(package)
    graph = {n: imports(n, p, known) for n, p in known.items()}
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


#: the one type-only cycle kept: ppo.py hands its work to the CPU fast path it names (an import inside a function),
#: and the fast path annotates its argument with PPO (an import under TYPE_CHECKING)
TYPE_ONLY_CYCLE_EDGES = {("membench_agents.algos.ppo", "membench_agents.algos.ppo_fast_cpu")}


@pytest.mark.parametrize("package", sorted(SRC))
def test_no_import_cycle_counting_type_only_imports(package):
    """Type-only imports (under ``if TYPE_CHECKING``) do not run, but a cycle through them is still two modules
    that need each other: none but the documented one."""
    known = modules(package)
    graph = {
        n: imports(n, p, known, type_only=True) - {m for a, m in TYPE_ONLY_CYCLE_EDGES if a == n}
        for n, p in known.items()
    }
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def _layer(module: str) -> int:
    best = None
    for i, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[1]):
                best = (i, len(prefix))
    assert best is not None, f"{module} is in no layer"
    return best[0]


def test_membench_agents_imports_point_down_the_layers():
    known = modules("membench_agents")
    upward = [
        f"{n} -> {m}" for n, p in known.items() for m in imports(n, p, known, type_only=True) if _layer(m) > _layer(n)
    ]
    assert not upward, (
        "imports against the layers (" + " < ".join("/".join(p) for p in LAYERS) + "):\n" + "\n".join(sorted(upward))
    )


def test_the_checker_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
