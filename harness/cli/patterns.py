"""``loopbench patterns``: every registered pattern, its options and what it costs."""

from __future__ import annotations

import click

from harness.experiment import show_value
from harness.patterns.registry import registered


@click.command("patterns")
def patterns_command() -> None:
    """List registered patterns with their options, defaults and cost in model calls."""
    for name, info in registered().items():
        click.echo(f"{name}: {info.summary}")
        for field, spec in info.options_model.model_fields.items():
            default = show_value(spec.default)
            doc = f"  {spec.description}" if spec.description else ""
            click.echo(f"    {field}={default}{doc}")
