"""Each command imports what it uses: ``loopbench --help`` starts without the heavy
libraries, and ``patterns``, ``grade`` and ``table`` without matplotlib (the times are
``bench/startup.py``'s)."""

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import COMMANDS, main

ROOT = Path(__file__).parents[3]
#: A results folder of one run per task and arm: its table needs no t quantile.
FOLDER = ROOT / "results" / "reference" / "local-smollm2"
#: One with two repeats a task: its intervals take a t quantile.
REPEATED = ROOT / "tests" / "fixtures" / "results-0.1.0"


def imported(*args: str) -> set[str]:
    """The top-level packages ``python -m loopbench.harness.cli ARGS`` imports, in a fresh
    interpreter."""
    return {module.split(".")[0] for module in imported_modules(*args)}


#: Runs the command as ``python -m loopbench.harness.cli`` does, then lists every module it
#: imported.
RUN_AND_LIST = """
import atexit, runpy, sys
atexit.register(lambda: print("MODULES", *sorted(sys.modules), file=sys.stderr))
runpy.run_module("loopbench.harness.cli", run_name="__main__", alter_sys=True)
"""


def imported_modules(*args: str) -> set[str]:
    """Every module ``python -m loopbench.harness.cli ARGS`` imports, in a fresh interpreter."""
    ran = subprocess.run(
        [sys.executable, "-c", RUN_AND_LIST, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    (listed,) = [line for line in ran.stderr.splitlines() if line.startswith("MODULES ")]
    return set(listed.split()[1:])


def test_help_imports_no_heavy_library():
    loaded = imported("--help")
    assert "click" in loaded  # the scan sees third-party imports
    heavy = {"matplotlib", "pandas", "duckdb", "scipy", "numpy", "pydantic", "httpx", "rich"}
    assert not loaded & (heavy | {"opentelemetry", "google"})


@pytest.mark.parametrize(
    "args",
    [["patterns"], ["grade", "--self-test"], ["table", str(FOLDER)]],
    ids=["patterns", "grade", "table"],
)
def test_commands_that_do_not_plot_do_not_import_matplotlib(args):
    loaded = imported(*args)
    assert "matplotlib" not in loaded
    # Nor scipy: no t quantile (no repeats) and no paired test here.
    assert "scipy" not in loaded
    if args[0] != "table":
        assert not loaded & {"pandas", "duckdb"}
    else:
        assert {"pandas", "duckdb"} <= loaded  # what a table does use, seen by the scan


def test_a_table_with_repeats_takes_its_t_quantile_without_scipy():
    loaded = imported_modules("table", str(REPEATED))
    # scipy.special takes 0.2 s to import, scipy.stats a second more
    assert not {"scipy", "matplotlib"} & {module.split(".")[0] for module in loaded}


def test_only_the_otlp_format_imports_opentelemetry(tmp_path):
    csv = imported("export", str(FOLDER), "--format", "csv", "-o", str(tmp_path / "runs.csv"))
    otlp = imported("export", str(FOLDER), "--format", "otlp", "-o", str(tmp_path / "s.json"))
    assert not csv & {"opentelemetry", "google"}
    assert {"opentelemetry", "google"} <= otlp  # the scan sees them where they are used


def test_the_summaries_in_help_are_each_commands_own():
    context = click.Context(main)
    for name, (_, summary) in COMMANDS.items():
        command = main.get_command(context, name)
        assert command is not None and command.name == name
        assert command.get_short_help_str(limit=10**6) == summary, name


def test_help_lists_the_commands_as_a_group_holding_them_all_would():
    eager = click.Group(
        "main",
        help=main.help,
        params=main.params,
        context_settings=main.context_settings,
        commands=[main.get_command(click.Context(main), name) for name in COMMANDS],
    )
    assert len(eager.commands) == len(COMMANDS) == 17
    runner = CliRunner()
    assert runner.invoke(main, ["--help"]).output == runner.invoke(eager, ["--help"]).output


def test_an_unknown_command_is_refused_with_exit_2():
    result = CliRunner().invoke(main, ["nosuch"])
    assert result.exit_code == 2 and "No such command 'nosuch'" in result.output


def test_the_console_script_is_the_group():
    (script,) = importlib.metadata.entry_points(group="console_scripts", name="loopbench")
    assert script.value == "loopbench.harness.cli.main:main"
    assert script.load() is main
