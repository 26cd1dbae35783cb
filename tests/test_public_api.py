"""The public surface is ``loopbench``: the names it exports are pinned, each imports, the
installed package carries ``py.typed`` so a type checker reads its types, the packages
under it say they are internal, and the wheel installs nothing but ``loopbench``: a folder
holding its own ``tasks.py``, ``harness/`` or ``graders.py`` does not shadow it."""

import importlib
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

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
PACKAGES = ("loopbench",)
#: The packages under it: what they hold may change between releases.
INTERNAL = ("loopbench.harness", "loopbench.graders", "loopbench.tasks", "loopbench.sandbox")


def test_the_public_names_are_pinned():
    assert loopbench.__all__ == PUBLIC
    assert dir(loopbench) == sorted(PUBLIC)
    held = {name for name in vars(loopbench) if not name.startswith("_")}
    subpackages = {name.rpartition(".")[2] for name in INTERNAL}
    # Names are imported when first asked for; nothing else leaks out of the package.
    assert held - subpackages <= set(PUBLIC), held - subpackages - set(PUBLIC)


def test_importing_the_package_imports_none_of_its_modules_until_a_name_is_asked_for():
    code = (
        "import sys, loopbench\n"
        "print(sorted(m for m in sys.modules if m.startswith('loopbench.')))\n"
        "loopbench.Experiment\n"
        "print('loopbench.harness.api' in sys.modules)\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert ran.stdout.split() == ["[]", "True"], ran.stderr


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
    for package in INTERNAL:
        doc = importlib.import_module(package).__doc__ or ""
        assert "Internal: may change between releases" in doc, package


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The wheel built from this checkout's sources, and the folder pip installed it into
    (no index, no build isolation)."""
    tmp = tmp_path_factory.mktemp("built")
    source = tmp / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for package in PACKAGES:
        shutil.copytree(
            ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copytree(ROOT / "results" / "reference", source / "results" / "reference")
    wheels = tmp / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-index", "--no-deps",
         "--no-build-isolation", "--wheel-dir", str(wheels), str(source)],
        check=True, capture_output=True,
    )  # fmt: skip
    (wheel,) = wheels.glob("loopbench-*.whl")
    site = tmp / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps",
         "--target", str(site), str(wheel)],
        check=True, capture_output=True,
    )  # fmt: skip
    return wheel, site


def test_the_wheel_installs_one_package_named_loopbench(built):
    wheel, _ = built
    with zipfile.ZipFile(wheel) as archive:
        top = {name.split("/")[0] for name in archive.namelist()}
    assert {name for name in top if not name.endswith(".dist-info")} == {"loopbench"}, top
    assert [name for name in top if name.endswith(".dist-info")] == ["loopbench-0.1.0.dist-info"]


def test_the_api_example_runs_in_a_folder_holding_tasks_harness_and_graders_of_its_own(
    built, tmp_path
):
    """The first example of docs/api.md, run where a user keeps invoke's ``tasks.py``, a
    ``harness/`` package and a ``graders.py`` of their own: loopbench imports none of them."""
    _, site = built
    example = re.search(r"```python\n(.*?)```", (ROOT / "docs" / "api.md").read_text(), re.S)
    assert example is not None
    (tmp_path / "harness").mkdir()
    shadows = {"tasks.py": "tasks", "harness/__init__.py": "harness", "graders.py": "graders"}
    for name, module in shadows.items():
        (tmp_path / name).write_text(f"raise ImportError('the user\\'s own {module}')\n")
    (tmp_path / "example.py").write_text(example.group(1))
    ran = subprocess.run(
        [sys.executable, "example.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(site)},
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert ran.stdout.startswith("48 runs;"), ran.stdout
    assert str(site) in subprocess.run(
        [sys.executable, "-c", "import loopbench.harness; print(loopbench.harness.__file__)"],
        cwd=tmp_path, capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONPATH": str(site)},
    ).stdout  # fmt: skip


def test_an_installed_loopbench_is_typed_for_its_users(built, tmp_path):
    """Installed with pip into a folder of its own, a type checker run on a user's script
    sees loopbench's types, not Any."""
    _, site = built
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
