"""``loopbench cache``: what a response cache (``run --cache DIR``) holds, or empty it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import click

from loopbench.harness.cli.errors import Group
from loopbench.harness.models.cache import CACHE_FILE, ResponseCache


@click.group("cache", cls=Group)
def cache_command() -> None:
    """Inspect or empty the response cache that ``run --cache DIR`` keeps."""


@contextlib.contextmanager
def _using(folder: Path) -> Iterator[ResponseCache]:
    """The cache in ``folder``, refused unless it is a whole loopbench cache (nothing is
    written on opening, so a file of another program is left as it was), closed after;
    a cache that fails in use is said in one line too."""
    cache = ResponseCache(folder, create=False)
    try:
        yield cache
    finally:
        cache.close()


@cache_command.command("stats")
@click.argument("folder", type=click.Path(path_type=Path))
def stats_command(folder: Path) -> None:
    """Responses stored, times they were replayed, and the file's size."""
    with _using(folder) as cache:
        stats = cache.stats()
    click.echo(
        f"{folder / CACHE_FILE}: {stats['entries']} responses, replayed {stats['hits']} times, "
        f"{stats['bytes']:,} bytes"
    )


@cache_command.command("clear")
@click.argument("folder", type=click.Path(path_type=Path))
def clear_command(folder: Path) -> None:
    """Remove every stored response."""
    with _using(folder) as cache:
        removed = cache.clear()
    click.echo(f"{folder / CACHE_FILE}: removed {removed} responses")
