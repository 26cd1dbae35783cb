"""The house's layers: which area may import which, and no import cycle.

Every import counts, wherever it is written: at module level, inside a function, under
``TYPE_CHECKING``. Importing ``a.b.c`` also runs the packages ``a`` and ``a.b``, so for
cycles a module depends on its parent packages too (a package ``__init__`` that imports
its own modules would close a cycle with each of them).
"""

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PACKAGES = ("loopbench",)

#: Areas, the first whose prefix a module has: its own name, or a package above it.
AREAS = (
    ("api", ("loopbench.harness.api",)),  # and the package itself (area())
    ("cli", ("loopbench.harness.cli",)),
    (
        "fakes",
        ("loopbench.harness.fakes",),
    ),  # the test endpoints, served by `loopbench fake-server`
    ("report", ("loopbench.harness.report",)),
    (
        "runner",
        (
            "loopbench.harness.config",
            "loopbench.harness.endpoints",
            "loopbench.harness.executors",
            "loopbench.harness.arms",
            "loopbench.harness.grading",
            "loopbench.harness.grid",
            "loopbench.harness.observer",
            "loopbench.harness.rounds",
            "loopbench.harness.runner",
            "loopbench.harness.run_settings",
            "loopbench.harness.plan",
            "loopbench.harness.judge_endpoint",
            "loopbench.harness.regrade",
        ),
    ),
    ("patterns", ("loopbench.harness.patterns",)),
    ("base", ("loopbench.harness.models.types",)),  # the messages every layer speaks
    ("models", ("loopbench.harness.models",)),
    ("stats", ("loopbench.harness.stats",)),
    ("results", ("loopbench.harness.results",)),
    ("tasks", ("loopbench.tasks",)),
    ("graders", ("loopbench.graders",)),
    ("sandbox", ("loopbench.sandbox",)),  # model-written code run apart: reads no answers
    ("base", ("loopbench.harness",)),  # events, trace, tools, sampling, files, plugins
)
#: What each area may import besides itself: each points down, none back up.
ALLOWED = {
    "cli": {"api", "runner", "report", "patterns", "fakes", "models", "stats", "results"}
    | {"tasks", "graders", "sandbox", "base"},
    "api": {"runner", "report", "patterns", "models", "stats", "results", "tasks"}
    | {"graders", "sandbox", "base"},
    "fakes": {"patterns", "tasks", "graders", "models", "base"},
    "report": {"stats", "results", "tasks", "graders", "base"},
    "runner": {"patterns", "models", "stats", "results", "tasks", "graders", "sandbox", "base"},
    "patterns": {"models", "results", "tasks", "graders", "sandbox", "base"},
    "models": {"base"},
    "stats": {"results", "base"},
    "results": {"base"},
    "tasks": {"graders", "sandbox", "base"},
    "graders": {"sandbox", "base"},  # loopbench.harness.errors: the one base of bad input
    "sandbox": {"base"},  # loopbench.harness.errors and loopbench.harness.terminal
    "base": set(),
}


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if "suites" in parts or "coding" in parts[:3]:  # data the sandbox runs
                continue
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """Every module of ours ``name`` imports, anywhere in its file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                above = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*above, *([node.module] if node.module else [])])
            targets |= {base, *(f"{base}.{alias.name}" for alias in node.names)}
    found = set()
    for target in targets:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name:
            found.add(target)
    return found


def area(name: str) -> str:
    if name == "loopbench":
        return "api"  # the public API re-exports; every other module is under a package
    for label, prefixes in AREAS:
        if any(name == p or name.startswith(p + ".") for p in prefixes):
            return label
    raise AssertionError(f"{name} is in no area")


KNOWN = modules()
GRAPH = {name: imports(name, path, KNOWN) for name, path in KNOWN.items()}


def test_every_area_is_allowed_somewhere_and_every_module_has_one():
    assert {area(name) for name in KNOWN} == set(ALLOWED)


@pytest.mark.parametrize("source", sorted(ALLOWED))
def test_an_area_imports_only_the_areas_below_it(source):
    wrong = sorted(
        f"{name} imports {target}"
        for name, targets in GRAPH.items()
        if area(name) == source
        for target in targets
        if area(target) != source and area(target) not in ALLOWED[source]
    )
    assert not wrong, "\n".join(wrong)


def test_the_allowed_imports_point_one_way():
    for source, targets in ALLOWED.items():
        for target in targets:
            assert source not in ALLOWED[target], f"{source} and {target} import each other"


def test_no_import_cycle_counting_parent_packages():
    edges = defaultdict(set)
    for name, targets in GRAPH.items():
        if name == "loopbench":
            # The root imports each public name when first asked for, once it is itself
            # initialised (tests/test_public_api.py checks it imports nothing at first).
            continue
        for target in targets:
            parts = target.split(".")
            edges[name] |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)} & set(KNOWN)
        edges[name].discard(name)
    cycle = _a_cycle(edges)
    assert cycle is None, " -> ".join(cycle or [])


def _a_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph, or None (depth-first, colouring nodes)."""
    state: dict[str, int] = {}  # 1 on the path, 2 done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_scan_finds_a_cycle_and_a_wrong_way_import():
    # The scan itself: a planted cycle and an import the layers forbid are both seen.
    assert _a_cycle({"a": {"b"}, "b": {"a"}}) is not None
    assert area("loopbench.harness.report.table") == "report" and "report" not in ALLOWED["runner"]
    assert "loopbench.harness.results.records" in GRAPH["loopbench.harness.runner"]
