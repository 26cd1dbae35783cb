"""The public surface is ``loopbench``: the names it exports are pinned, each imports, the
installed packages carry ``py.typed`` so a type checker reads their types, and the other
packages say they are internal."""

import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import loopbench

ROOT = Path(__file__).parents[1]
#: Adding a name is a release note; removing or renaming one breaks users' code.
PUBLIC = [
    "CallFloor",
    "Experiment",
    "FunctionModel",
    "Grade",
    "Grader",
    "GraderDetails",
    "GraderSetup",
    "Message",
    "ModelClient",
    "ModelEntry",
    "ModelLike",
    "ModelRequest",
    "ModelResponse",
    "Observer",
    "Outcome",
    "PatternOptions",
    "Prompts",
    "Results",
    "RunConfig",
    "RunContext",
    "RunSettings",
    "Sampling",
    "ScriptedModel",
    "SeparationRule",
    "Slot",
    "TaskBase",
    "TaskSet",
    "Tool",
    "ToolOptions",
    "ToolSource",
    "arm",
    "as_client",
    "load",
    "load_taskset",
    "register_grader",
    "register_pattern",
    "register_taskset",
    "register_tool",
    "text_reply",
    "tool_reply",
]
PACKAGES = ("loopbench", "harness", "graders", "sandbox", "tasks")


def test_the_public_names_are_pinned():
    assert loopbench.__all__ == PUBLIC
    exported = {name for name in vars(loopbench) if not name.startswith("_")}
    assert exported == set(PUBLIC)  # nothing else leaks out of the package


def test_every_public_name_imports_in_a_fresh_interpreter():
    code = (
        "import loopbench\n"
        "from loopbench import *\n"
        "missing = [n for n in loopbench.__all__ if globals().get(n) is None]\n"
        "print(len(loopbench.__all__), missing)\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == f"{len(PUBLIC)} []"


def test_the_other_packages_say_they_are_internal():
    for package in PACKAGES[1:]:
        doc = importlib.import_module(package).__doc__ or ""
        assert "Internal: may change between releases" in doc, package


def test_an_installed_loopbench_is_typed_for_its_users(tmp_path):
    """Installed with pip into a folder of its own (no index, no build isolation), a type
    checker run on a user's script sees loopbench's types, not Any."""
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for package in PACKAGES:
        shutil.copytree(
            ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps",
         "--no-build-isolation", "--target", str(site), str(source)],
        check=True, capture_output=True,
    )  # fmt: skip
    for package in PACKAGES:
        assert (site / package / "py.typed").is_file(), package
    user = tmp_path / "user"
    user.mkdir()
    (user / "script.py").write_text(
        "import loopbench\n\nresults: int = loopbench.load('results/x')\n"
    )
    ran = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"), "script.py"],
        cwd=user,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(site)},
    )
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert 'expression has type "Results", variable has type "int"' in ran.stdout, ran.stdout
