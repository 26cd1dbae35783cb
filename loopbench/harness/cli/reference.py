"""``loopbench reference``: the reference results shipped inside the package, copied to
``results/reference/`` of the current folder, where the README's commands read them: an
installed wheel then shows the same tables a clone of the repository does."""

from __future__ import annotations

import shutil
from pathlib import Path

import click

from loopbench.harness.cli.errors import Command

#: The reference runs as the package carries them (``loopbench/reference/NAME/``).
SHIPPED = Path(__file__).resolve().parents[2] / "reference"
#: Where they are copied: the path the README's commands name.
TARGET = Path("results") / "reference"


@click.command("reference", cls=Command)
def reference_command() -> None:
    """Copy the reference results shipped with loopbench to results/reference/ here; a
    folder already there is left as it is."""
    for folder in sorted(p for p in SHIPPED.iterdir() if p.is_dir()):
        target = TARGET / folder.name
        if target.exists():
            click.echo(f"{target}: already here, left as it is")
            continue
        shutil.copytree(folder, target, ignore=shutil.ignore_patterns("__pycache__", ".lock"))
        click.echo(f"{target}: copied; read it with: loopbench table {target}")
