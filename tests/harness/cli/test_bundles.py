"""Flags that belong together reach a command as one frozen dataclass
(loopbench/harness/cli/bundles.py), the others as they are."""

from dataclasses import dataclass

import click
from click.testing import CliRunner

from loopbench.harness.cli.bundles import bundled


@dataclass(frozen=True)
class Window:
    low: int
    high: int


def test_a_bundles_flags_reach_the_command_as_one_dataclass_and_the_others_as_they_are():
    seen = []

    @click.command()
    @click.argument("name")
    @click.option("--low", type=int, default=1)
    @click.option("--high", type=int, default=9)
    @click.option("--loud", is_flag=True)
    @bundled("window", Window)
    def command(name, window, loud):
        seen.append((name, window, loud))

    result = CliRunner().invoke(command, ["x", "--high", "5", "--loud"])
    assert result.exit_code == 0, result.output
    assert seen == [("x", Window(1, 5), True)]
    assert "--low" in CliRunner().invoke(command, ["--help"]).output
