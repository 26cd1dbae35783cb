"""The grader registry: grader names -> the task model they read and a factory, with every
shipped grader in it.

A task set names its grader in taskset.toml (``grader = "exact"``). The grader decides how
the set's tasks are read (``task_model``: each line of tasks.jsonl, its ``expected`` the
answer key) and how answers are graded (``factory``, building a ``Grader`` for the set).
An unknown name is refused when the set loads, with the registered names and how to add
one.

Each grader registers in the module that defines it (``@register_grader``,
loopbench/graders/register.py), as patterns do; this module imports the shipped ones, listed once
in ``SHIPPED`` in the order they are shown (``grade --self-test``, a refusal's names).
Plugins add graders with ``@loopbench.register_grader`` (loopbench/harness/plugins.py).
"""

from __future__ import annotations

import json
import re
from typing import Any

from loopbench.graders import (
    asserts,
    builtin,
    choice,
    choice_or,
    game24,
    json_answer,
    judge,
    label,
    number,
    regex,
    squad,
)
from loopbench.graders.register import GRADERS as GRADERS
from loopbench.graders.register import GraderInfo as GraderInfo
from loopbench.graders.register import UnknownGrader
from loopbench.harness.errors import BadInput

#: The shipped graders' modules, in the order their graders are listed whichever was
#: imported first: importing one registers its graders (builtin: ``exact`` and
#: ``code_tests``; json_answer: ``json``; squad: ``f1`` and ``em``; the others one each, of
#: the module's name). A new grader's module joins this list.
SHIPPED = (
    builtin,
    choice,
    choice_or,
    label,
    number,
    regex,
    json_answer,
    squad,
    game24,
    asserts,
    judge,
)
GRADERS.list_shipped(tuple(module.__name__ for module in SHIPPED))


class GraderSpecError(BadInput):
    """A ``--grader`` spec naming no registered grader, or written wrongly: one line."""


#: ``NAME`` or ``NAME:KEY=VALUE,...``; a comma starts a new option only before ``KEY=``, so a
#: value may be a JSON list (``labels=["yes","no"]``).
_OPTION_START = re.compile(r",(?=\s*[A-Za-z_][\w-]*\s*=)")
SPEC_EXAMPLE = "NAME or NAME:KEY=VALUE,... (e.g. number:tolerance=0.01)"


def parse_grader_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """The grader a spec names and its options, each value read as JSON when it parses,
    else as a string: ``"f1:threshold=0.8"`` -> ``("f1", {"threshold": 0.8})``. A grader
    that is not registered, or an option not written ``KEY=VALUE``, is refused
    (``GraderSpecError``); the options themselves are the factory's to check."""
    name, _, written = spec.partition(":")
    name = name.strip()
    try:
        GRADERS.lookup(name)
    except UnknownGrader as exc:
        raise GraderSpecError(f"--grader {spec!r}: {exc}") from None
    options: dict[str, Any] = {}
    for item in _OPTION_START.split(written) if written.strip() else []:
        key, equals, value = item.partition("=")
        if not equals or not key.strip():
            raise GraderSpecError(
                f"--grader {spec!r}: option {item.strip()!r} is not KEY=VALUE; write {SPEC_EXAMPLE}"
            )
        try:
            options[key.strip()] = json.loads(value)
        except ValueError:
            options[key.strip()] = value.strip()
    return name, options
