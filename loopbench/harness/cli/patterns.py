"""``loopbench patterns``: every registered pattern, its options and what it costs."""

from __future__ import annotations

import click

from loopbench.harness.arms import show_value
from loopbench.harness.cli.errors import Command
from loopbench.harness.errors import BadInput
from loopbench.harness.patterns.base import PatternOptions
from loopbench.harness.patterns.catalog import lookup, registered
from loopbench.harness.patterns.prompts import prompt_file
from loopbench.harness.plugins import load_plugin

LIMITS = tuple(PatternOptions.model_fields)


@click.command("patterns", cls=Command)
@click.argument("pattern", required=False)
@click.option("--limits/--no-limits", default=False, help="Also list the run limits per pattern.")
@click.option(
    "--prompts",
    "show_prompts",
    is_flag=True,
    help="Print PATTERN's prompt slots, each with the variables it receives and its "
    "built-in text, as a prompt file to save and edit (an arm takes it as prompts=FILE).",
)
@click.option(
    "--plugin",
    "plugins",
    multiple=True,
    help="Import this module first and list the patterns it registers too.",
)
def patterns_command(
    pattern: str | None, limits: bool, show_prompts: bool, plugins: tuple[str, ...]
) -> None:
    """List registered patterns (or PATTERN) with their options, defaults and cost in model
    calls; with --prompts, PATTERN's prompt slots as a prompt file.

    Every pattern also takes the run limits, listed once at the end; an arm names only
    the options it sets, so its defaults can change without renaming it.
    """
    for module in plugins:
        load_plugin(module)
    if show_prompts:
        if pattern is None:
            raise BadInput("--prompts prints one pattern's slots: give PATTERN")
        click.echo(prompt_file(pattern, lookup(pattern).prompts), nl=False)
        return
    patterns = {pattern: lookup(pattern)} if pattern else registered()
    for name, info in patterns.items():
        click.echo(f"{name}: {info.summary}")
        for field, spec in info.options_model.model_fields.items():
            shared = field in LIMITS and spec.default == PatternOptions.model_fields[field].default
            if shared and not limits:
                continue
            click.echo(f"    {field}={_default(spec.default)}  {_one_line(spec.description)}")
    click.echo("\nrun limits, on every pattern (a pattern above may set its own default):")
    for field, spec in PatternOptions.model_fields.items():
        click.echo(f"    {field}={_default(spec.default)}  {_one_line(spec.description)}")


def _default(value: object) -> str:
    return "unset" if value is None else show_value(value)


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())
