"""The ``loopbench`` command: a click group whose subcommands, one module each, are
imported only when run, so ``loopbench --help`` starts without pandas, DuckDB or
matplotlib, and each command loads only what it uses (``bench/startup.py``)."""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from typing import Any

import click

from loopbench.harness.cli.errors import Refusal

#: Each subcommand's "module:attribute", and its summary in ``loopbench --help`` (the first
#: sentence of its help as ``plain_help`` shows it; a test holds the two equal).
COMMANDS: Mapping[str, tuple[str, str]] = {
    "cache": (
        "loopbench.harness.cli.cache:cache_command",
        "Inspect or empty the response cache that 'run --cache DIR' keeps.",
    ),
    "compare": (
        "loopbench.harness.cli.compare:compare_command",
        "Compare CANDIDATE against BASELINE; exit 1 if an arm regressed, 2 on bad input.",
    ),
    "cost": (
        "loopbench.harness.cli.cost:cost_command",
        "Token, latency and cost arithmetic for patterns, before running them.",
    ),
    "export": (
        "loopbench.harness.cli.export:export_command",
        "Write RESULTS' runs to one file: a row per run, a column per record field (options "
        "and metrics as JSON text); or each run as an OpenTelemetry trace (--format otlp, "
        "--otlp-endpoint).",
    ),
    "failures": (
        "loopbench.harness.cli.failures:failures_command",
        "Label every run that did not end correct (repetition, tool miss, unsupported "
        "number, ...) and print, per arm, the share of failed runs carrying each label.",
    ),
    "grade": (
        "loopbench.harness.cli.grade:grade_command",
        "Grade an answer with a registered grader (the typed exact grader by default), run "
        "every grader's self-test, or run code against a coding task's suite in the sandbox.",
    ),
    "judge": (
        "loopbench.harness.cli.judge:judge_group",
        "Measure a judge's error: sample answers for a person to label, then count the labels "
        "against the judge's verdicts.",
    ),
    "patterns": (
        "loopbench.harness.cli.patterns:patterns_command",
        "List registered patterns (or PATTERN) with their options, defaults and cost in "
        "model calls; with --prompts, PATTERN's prompt slots as a prompt file.",
    ),
    "plot": ("loopbench.harness.cli.plot:plot_command", "Plot a results folder to a PNG file."),
    "power": (
        "loopbench.harness.cli.power:power_command",
        "How many tasks a paired comparison of two arms needs, or the power of --tasks.",
    ),
    "reference": (
        "loopbench.harness.cli.reference:reference_command",
        "Copy the reference results shipped with loopbench to results/reference/ here; a "
        "folder already there is left as it is.",
    ),
    "report": (
        "loopbench.harness.cli.report:report_command",
        "Write one HTML page of a results folder: the summary table, plots, why runs "
        "failed, a task-by-arm matrix and every run with its trace (above a few thousand "
        "runs, a fixed sample of them; 'loopbench export' writes them all).",
    ),
    "run": (
        "loopbench.harness.cli.run:run_command",
        "Run every arm on every task, REPEATS times, and print the table.",
    ),
    "serve-fake": (
        "loopbench.harness.cli.serve_fake:serve_fake_command",
        "Serve a scripted OpenAI-compatible endpoint on loopback and print its base URL.",
    ),
    "serve-local": (
        "loopbench.harness.cli.serve_local:serve_local_command",
        "Serve the embedded model on an OpenAI-compatible API and print its base URL.",
    ),
    "table": (
        "loopbench.harness.cli.table:table_command",
        "Print accuracy, turns, tool calls, tokens, cost and cost per correct answer per arm.",
    ),
    "tasks": (
        "loopbench.harness.cli.tasks:tasks_group",
        "List task sets, make generated ones and check them.",
    ),
}


#: A literal in a docstring or a help text: reStructuredText's ``x``, or Markdown's `x`.
_LITERAL = re.compile(r"``([^`]+)``|`([^`]+)`")


def plain(text: str) -> str:
    """``text`` for a terminal: each literal quoted ('x'), without its backticks."""
    return _LITERAL.sub(lambda found: f"'{found[1] or found[2]}'", text)


def plain_help(command: click.Command) -> click.Command:
    """``command``, and a group's subcommands, with their help texts as ``--help`` shows
    them: plain text. Their docstrings are written for the API reference, in
    reStructuredText, whose ``literals`` would reach the terminal with their backticks."""
    for attribute in ("help", "short_help", "epilog"):
        if text := getattr(command, attribute):
            setattr(command, attribute, plain(text))
    for param in command.params:
        if isinstance(param, click.Option) and param.help:
            param.help = plain(param.help)
    if isinstance(command, click.Group):
        for subcommand in command.commands.values():
            plain_help(subcommand)
    return command


def _redacted(exc: click.ClickException) -> click.ClickException:
    """``exc`` with every secret held redacted from its line: it is printed once the
    command's context has closed and let go of the secrets it held. The line is also made
    one short line (``loopbench.harness.terminal.error_line``): an error quoting a whole file, or
    escape sequences, in its text would otherwise reach the terminal. The help a group
    given no subcommand shows is left as it is: click (8.2 on) raises it as a usage error."""
    from loopbench.harness.redaction import redact
    from loopbench.harness.terminal import error_line

    if _is_help(exc):
        return exc
    # Redacted before it is cut (a secret cut in two would escape it), and only the ends
    # the line keeps: a message of hundreds of megabytes is read no further.
    # guard: secrets-error-line-redacted-while
    line = error_line(exc.message, clean=redact)
    # guard: error-line-every-click-error
    vars(exc)["message"] = line  # typed Final; set once, here
    return exc


def _alone(exc: click.ClickException) -> click.ClickException:
    """A usage error of click's own (an option no command has, a value a choice refuses)
    as the one line of every refusal, naming where the right ones are listed, without
    click's usage lines printed before it."""
    # guard: usage-error-said-alone
    if isinstance(exc, click.UsageError) and not _is_help(exc):
        where = exc.ctx.command_path if exc.ctx is not None else "loopbench"
        return Refusal(f"{exc.format_message().rstrip('.')} (see '{where} --help')")
    return exc


def _is_help(exc: click.ClickException) -> bool:
    return type(exc).__name__ == "NoArgsIsHelpError"


class LazyGroup(click.Group):
    """A group that imports a subcommand's module when the subcommand is run (or asked
    for its own help), and lists every subcommand from ``COMMANDS`` alone. Each
    subcommand's help is plain text (``plain_help``)."""

    def __init__(self, *args: Any, lazy: Mapping[str, tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(self.lazy)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.lazy:
            return None
        module, attribute = self.lazy[cmd_name][0].split(":")
        command = getattr(importlib.import_module(module), attribute)
        assert isinstance(command, click.Command), self.lazy[cmd_name][0]
        return plain_help(command)

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        """The group's context; a wrong option before the subcommand said in one short line."""
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.ClickException as exc:
            # guard: error-line-wrong-option-before
            raise _redacted(_alone(exc)) from None

    def invoke(self, ctx: click.Context) -> Any:
        """Run the subcommand; its error line redacted of every secret held, one short line."""
        try:
            return super().invoke(ctx)
        except click.ClickException as exc:
            # guard: paths-click-not-readable-one
            if isinstance(exc, click.BadParameter) and isinstance(
                getattr(exc.param, "type", None), click.Path
            ):
                exc = Refusal(exc.format_message())  # "is not readable": one line, exit 2
            raise _redacted(_alone(exc)) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their summaries, as click lays them out, without importing any."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [
            (name, click.Command(name, help=self.lazy[name][1]).get_short_help_str(limit))
            for name in names
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="loopbench")
@click.pass_context
def main(ctx: click.Context) -> None:
    """Measure LLM agent reasoning patterns on labelled task sets."""
    from loopbench.harness.models.endpoint import environment_secrets
    from loopbench.harness.redaction import protected
    from loopbench.harness.streams import printing_printably, redacted_output

    # Whatever the command writes or prints, the keys and URL credentials in the
    # environment are redacted from it (``run`` adds its endpoints').
    # guard: secrets-every-command-holds
    ctx.with_resource(protected(*environment_secrets()))
    ctx.with_resource(redacted_output())
    # And whatever it prints, control characters from data are shown, not acted on.
    # guard: terminal-every-command-prints
    ctx.with_resource(printing_printably())


__all__ = ["main"]
