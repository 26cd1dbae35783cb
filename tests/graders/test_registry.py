"""Graders register where they are defined (loopbench/graders/register.py), as patterns do, and
loopbench/graders/registry.py imports the shipped ones from the one list of their modules: importing
it registers each once, listed in that order whichever module was imported first."""

import ast
import subprocess
import sys
from pathlib import Path

import loopbench
from loopbench.graders.registry import GRADERS, SHIPPED

ROOT = Path(__file__).parents[2]
#: The shipped graders, in the order ``grade --self-test`` and a wrong name's error list them.
LISTED = [
    "exact",
    "code_tests",
    "choice",
    "choice_or",
    "label",
    "number",
    "regex",
    "json",
    "f1",
    "em",
]
LISTED += ["game24", "asserts", "judge"]


def registered_in_a_fresh_interpreter(first_imports):
    code = (
        f"import {first_imports}\n"
        "from loopbench.graders.registry import GRADERS\n"
        "print(' '.join(GRADERS.registered()))\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    return ran.stdout.split()


def test_importing_the_registry_registers_every_shipped_grader_once_in_the_listed_order():
    for first in (
        "loopbench.graders.registry",
        "loopbench.tasks.game24",
        "loopbench.graders.asserts",
        "loopbench.graders.squad",
    ):
        assert registered_in_a_fresh_interpreter(first) == LISTED, first


def test_every_module_that_registers_a_grader_is_listed():
    registering = {
        f"loopbench.graders.{path.stem}"
        for path in (ROOT / "loopbench" / "graders").glob("*.py")
        if path.stem != "register"
        and any(
            isinstance(node, ast.Name) and node.id == "register_grader"
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        )
    }
    assert registering == {module.__name__ for module in SHIPPED}
    factories = {info.factory.__module__ for info in GRADERS.registered().values()}
    assert registering <= factories


def test_a_plugins_grader_comes_after_the_shipped_ones_with_what_it_says_of_itself(registries):
    class WordTask(loopbench.TaskBase):
        expected: str

    details = loopbench.GraderDetails(example='{"id": "w"}', runs_code=True)
    loopbench.register_grader("last_word", WordTask, "ends with the word", details)(
        lambda setup: None
    )
    loopbench.register_grader("plain", WordTask, "says nothing more")(lambda setup: None)
    graders = GRADERS.registered()
    assert list(graders)[-2:] == ["last_word", "plain"]
    assert list(graders)[: len(LISTED)] == LISTED
    assert graders["last_word"].example == '{"id": "w"}' and graders["last_word"].runs_code
    plain = graders["plain"]
    assert (plain.runs_code, plain.cases, plain.from_target) == (False, (), None)
    assert plain.example == '{"id": "q1", "question": "...", "expected": ...}'
