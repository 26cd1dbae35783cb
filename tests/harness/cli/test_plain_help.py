"""``--help`` is plain text: the literals of the docstrings and help texts it is made of
(reStructuredText's double backticks, Markdown's single ones) are quoted instead."""

from collections.abc import Iterator

import click
import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main, plain


def command_lines(group: click.Group, prefix: tuple[str, ...] = ()) -> Iterator[list[str]]:
    """The command line of every group and command under ``group``, itself first."""
    yield list(prefix)
    context = click.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        assert command is not None
        if isinstance(command, click.Group):
            yield from command_lines(command, (*prefix, name))
        else:
            yield [*prefix, name]


LINES = list(command_lines(main))


@pytest.mark.parametrize("line", LINES, ids=[" ".join(line) or "loopbench" for line in LINES])
def test_no_help_shows_a_backtick(line: list[str]) -> None:
    shown = CliRunner().invoke(main, [*line, "--help"])
    assert shown.exit_code == 0, shown.output
    assert "`" not in shown.output, shown.output


def test_the_cache_commands_literal_is_quoted() -> None:
    shown = CliRunner().invoke(main, ["cache", "--help"]).output
    assert "the response cache that 'run --cache DIR' keeps" in shown


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("that ``run --cache DIR`` keeps", "that 'run --cache DIR' keeps"),
        ("(`loopbench failures`; reads the traces)", "('loopbench failures'; reads the traces)"),
        ("``a``, ``b`` and `c`", "'a', 'b' and 'c'"),
        ("a ``literal\nover two lines``", "a 'literal\nover two lines'"),
        ("no literal at all", "no literal at all"),
    ],
)
def test_a_literal_is_quoted_without_its_backticks(text: str, shown: str) -> None:
    assert plain(text) == shown
