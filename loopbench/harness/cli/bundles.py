"""Flags that belong together, given to a command as one frozen dataclass.

``@bundled("thresholds", Thresholds)``, under a command's click options, makes the
parameters click parses for ``Thresholds``' fields one ``Thresholds``, given to the command
as ``thresholds``: a command takes few parameters, each a thing it reads whole, and the
flags stay as they are written.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any, TypeVar

ResultT = TypeVar("ResultT")


def bundled(
    name: str, model: type[Any]
) -> Callable[[Callable[..., ResultT]], Callable[..., ResultT]]:
    """Give the command ``model(**{each field: its parameter})`` as ``name`` in place of
    the parameters named after ``model``'s fields (a frozen dataclass)."""
    fields = [field.name for field in dataclasses.fields(model)]

    def wrap(command: Callable[..., ResultT]) -> Callable[..., ResultT]:
        @functools.wraps(command)
        def run(*args: Any, **params: Any) -> ResultT:  # click passes parameters by name
            bundle = model(**{field: params.pop(field) for field in fields})
            return command(*args, **params, **{name: bundle})

        return run

    return wrap
