"""Generators of the big hostile inputs, made in the test, never kept in git: each writes one
file, ``NAME(path, **options)``, named by a case's ``[generate]`` table. Each area keeps
its own in ``generate_AREA.py``; this module gathers them by name."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

Generator = Callable[..., None]

AREAS = ("readers", "records", "graders", "templates", "outputs")


def generators() -> dict[str, Generator]:
    """Every area's generators by name: the public functions of ``generate_AREA.py``."""
    found: dict[str, Generator] = {}
    for area in AREAS:
        try:
            module = importlib.import_module(f"tests.hostile_inputs.generate_{area}")
        except ModuleNotFoundError as exc:
            if exc.name != f"tests.hostile_inputs.generate_{area}":
                raise
            continue
        for name, value in vars(module).items():
            if callable(value) and not name.startswith("_") and value.__module__ == module.__name__:
                found[name] = value
    return found


def generate(path: Path, make: str, **options: Any) -> None:
    known = generators()
    if make not in known:
        raise KeyError(f"no generator {make!r}; known: {', '.join(sorted(known))}")
    known[make](path, **options)
