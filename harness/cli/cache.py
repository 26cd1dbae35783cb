"""``loopbench cache``: what a response cache (``run --cache DIR``) holds, or empty it."""

from __future__ import annotations

from pathlib import Path

import click

from harness.cli.errors import BadInput
from harness.models.cache import CACHE_FILE, CacheError, ResponseCache


@click.group("cache")
def cache_command() -> None:
    """Inspect or empty the response cache that ``run --cache DIR`` keeps."""


def _open(folder: Path) -> ResponseCache:
    if not (folder / CACHE_FILE).is_file():
        raise BadInput(f"{folder}: holds no {CACHE_FILE}; give the folder passed to run --cache")
    try:
        return ResponseCache(folder)
    except CacheError as exc:
        raise BadInput(str(exc)) from None


@cache_command.command("stats")
@click.argument("folder", type=click.Path(path_type=Path))
def stats_command(folder: Path) -> None:
    """Responses stored, times they were replayed, and the file's size."""
    cache = _open(folder)
    stats = cache.stats()
    cache.close()
    click.echo(
        f"{folder / CACHE_FILE}: {stats['entries']} responses, replayed {stats['hits']} times, "
        f"{stats['bytes']:,} bytes"
    )


@cache_command.command("clear")
@click.argument("folder", type=click.Path(path_type=Path))
def clear_command(folder: Path) -> None:
    """Remove every stored response."""
    cache = _open(folder)
    removed = cache.clear()
    cache.close()
    click.echo(f"{folder / CACHE_FILE}: removed {removed} responses")
