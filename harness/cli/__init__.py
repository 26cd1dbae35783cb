"""The ``loopbench`` command: a click group, one module per subcommand."""

from __future__ import annotations

import click

from harness.cli.cache import cache_command
from harness.cli.compare import compare_command
from harness.cli.cost import cost_command
from harness.cli.export import export_command
from harness.cli.failures import failures_command
from harness.cli.grade import grade_command
from harness.cli.patterns import patterns_command
from harness.cli.plot import plot_command
from harness.cli.power import power_command
from harness.cli.report import report_command
from harness.cli.run import run_command
from harness.cli.serve_local import serve_local_command
from harness.cli.table import table_command
from harness.cli.tasks import tasks_group


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="loopbench")
def main() -> None:
    """Measure LLM agent reasoning patterns on labelled task sets."""


main.add_command(run_command)
main.add_command(table_command)
main.add_command(grade_command)
main.add_command(patterns_command)
main.add_command(serve_local_command)
main.add_command(cost_command)
main.add_command(compare_command)
main.add_command(plot_command)
main.add_command(cache_command)
main.add_command(tasks_group)
main.add_command(failures_command)
main.add_command(power_command)
main.add_command(report_command)
main.add_command(export_command)

__all__ = ["main"]
