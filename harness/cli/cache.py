"""``loopbench cache``: what a response cache (``run --cache DIR``) holds, or empty it."""

from __future__ import annotations

from pathlib import Path

import click

from harness.cli.errors import BadInput
from harness.models.cache import CACHE_FILE, ResponseCache
from harness.models.cache_file import CacheError


@click.group("cache")
def cache_command() -> None:
    """Inspect or empty the response cache that ``run --cache DIR`` keeps."""


def _open(folder: Path) -> ResponseCache:
    """The cache in ``folder``, refused unless it is a whole loopbench cache; nothing is
    written on opening, so a file of another program is left as it was."""
    try:
        return ResponseCache(folder, create=False)
    except CacheError as exc:
        raise BadInput(str(exc)) from None


@cache_command.command("stats")
@click.argument("folder", type=click.Path(path_type=Path))
def stats_command(folder: Path) -> None:
    """Responses stored, times they were replayed, and the file's size."""
    cache = _open(folder)
    try:
        stats = cache.stats()
    except CacheError as exc:
        raise BadInput(str(exc)) from None
    finally:
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
    try:
        removed = cache.clear()
    except CacheError as exc:
        raise BadInput(str(exc)) from None
    finally:
        cache.close()
    click.echo(f"{folder / CACHE_FILE}: removed {removed} responses")
