"""One family tree of errors (loopbench/harness/errors.py): every exception class the product
defines derives from exactly one of ``BadInput``, ``ModelError`` and ``HarnessFault``, and the
command line's one catch (loopbench/harness/cli/errors.py) says them; no subcommand catches an error
to say it again."""

import ast
import importlib
import inspect
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from loopbench.harness import errors
from loopbench.harness.cli.errors import Command
from loopbench.harness.errors import BadInput, HarnessFault, ModelError
from loopbench.sandbox import isolation

ROOT = Path(__file__).parents[1]
PACKAGES = ("loopbench",)
FAMILIES = (BadInput, ModelError, HarnessFault)


def product_modules() -> list[str]:
    names = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")) if (ROOT / package).is_dir() else ():
            parts = path.relative_to(ROOT).with_suffix("").parts
            if "suites" in parts or "coding" in parts[:3] or parts[-1] == "__main__":
                continue  # data the sandbox runs; a module that runs the command line
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


MODULES = {name: importlib.import_module(name) for name in product_modules()}


def exception_classes() -> dict[str, type[BaseException]]:
    found = {}
    for name, module in MODULES.items():
        classes = [c for c in vars(module).values() if inspect.isclass(c)]
        while classes:
            cls = classes.pop()
            if cls.__module__ != name:
                continue  # imported here, defined elsewhere
            classes += [c for c in vars(cls).values() if inspect.isclass(c)]
            if issubclass(cls, BaseException):
                found[f"{name}.{cls.__qualname__}"] = cls
    return found


def test_every_exception_class_is_in_exactly_one_family():
    found = exception_classes()
    assert len(found) > 50  # the walk saw the product's classes
    outside = sorted(
        f"{name} (its families: {[f.__name__ for f in FAMILIES if issubclass(cls, f)] or 'none'})"
        for name, cls in found.items()
        if sum(issubclass(cls, family) for family in FAMILIES) != 1
    )
    assert not outside, "derive each from BadInput, ModelError or HarnessFault:\n" + "\n".join(
        outside
    )


def _imported(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    } | {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }


def test_the_sandbox_programs_import_only_each_other_and_the_families():
    """The sandbox's programs run with the standard library and a copy of themselves and of
    harness/errors.py (isolation.programs_folder): they import nothing else of loopbench, and
    harness/errors.py imports nothing, so that their exceptions can be in the tree."""
    programs = {f"loopbench.sandbox.{name}" for name in isolation.PROGRAM_MODULES}
    for program in programs:
        imported = _imported(Path(inspect.getfile(MODULES[program])))
        ours = {name for name in imported if name.partition(".")[0] == "loopbench"}
        assert ours <= programs | {"loopbench.harness.errors"}, program
    assert _imported(isolation.PROGRAM_ERRORS) <= {"__future__"}
    laid_out = {
        path.relative_to(isolation.programs_folder()).as_posix()
        for path in isolation.programs_folder().rglob("*.py")
    }
    assert "loopbench/harness/errors.py" in laid_out
    assert {f"loopbench/sandbox/{name}.py" for name in isolation.PROGRAM_MODULES} <= laid_out
    sandbox_classes = {
        cls.__qualname__
        for name, cls in exception_classes().items()
        if name.rpartition(".")[0] in programs
    }
    assert len(sandbox_classes) >= 6
    drawn = errors.__doc__.replace(",", " ").split()
    assert sandbox_classes <= set(drawn), "draw them in harness/errors.py's tree"


def test_the_families_are_drawn_and_defined_in_harness_errors():
    from loopbench.harness.models import types

    for family in (*FAMILIES, errors.UnknownName):
        assert family.__module__ == "loopbench.harness.errors"
        assert family.__name__ in errors.__doc__
    assert types.ModelError is ModelError  # importable where it used to be defined
    assert issubclass(types.ModelAPIError, ModelError)


def _except_raises(path: Path) -> list[tuple[int, str]]:
    """Each ``raise X`` inside an ``except`` clause of ``path``: a new error from a caught one."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ExceptHandler):
            for inner in node.body:
                for sub in ast.walk(inner):
                    if isinstance(sub, ast.Raise) and sub.exc is not None:
                        found.append((sub.lineno, ast.unparse(sub.exc)))
    return found


#: What an ``except`` in the command line may raise: the one catch's own lines
#: (errors.py), click's error redacted of secrets (main.py), Ctrl-C's exit code.
ALLOWED = {"errors.py": ("",), "main.py": ("_redacted(",), "*": ("SystemExit(",)}


def test_no_subcommand_catches_an_error_to_say_it_again():
    wrapped = [
        f"{path.relative_to(ROOT)}:{line}: raise {raised}"
        for path in sorted((ROOT / "loopbench" / "harness" / "cli").rglob("*.py"))
        for line, raised in _except_raises(path)
        if not raised.startswith((*ALLOWED.get(path.name, ()), *ALLOWED["*"]))
    ]
    assert not wrapped, (
        "raise a BadInput subclass whose line names the file, line and field where the "
        "error is found, and let loopbench/harness/cli/errors.py say it:\n" + "\n".join(wrapped)
    )


def _invoked(error: BaseException) -> tuple[int, str, BaseException | None]:
    @click.command(cls=Command)
    def command() -> None:
        raise error

    result = CliRunner().invoke(command, [])
    return result.exit_code, result.output, result.exception


@pytest.mark.parametrize(
    ("error", "line"),
    [
        pytest.param(
            BadInput("tasks.yaml:3: field 'id': given twice"),
            "Error: tasks.yaml:3: field 'id'",
            id="bad-input",
        ),
        pytest.param(
            ModelError("HTTP 401: no key"),
            "Error: the model endpoint failed: HTTP 401: no key",
            id="model-error",
        ),
    ],
)
def test_bad_input_and_an_endpoint_failure_are_one_line_and_exit_2(error, line):
    code, output, _ = _invoked(error)
    assert code == 2 and output.startswith(line) and output.count("\n") == 1, output


def test_a_harness_fault_is_not_said_as_bad_input_but_raised_as_a_bug():
    fault = HarnessFault("a signal that escaped")
    code, output, raised = _invoked(fault)
    assert raised is fault and code == 1 and "Error:" not in output
