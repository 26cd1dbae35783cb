"""The errors loopbench raises, in two families.

    BadInput (ValueError)         what was given is wrong: a flag, a name, a file, a folder.
    │                             ``loopbench`` prints its one line and exits 2; the API
    │                             raises it as it is. Each module says what it refuses with
    │                             a subclass of its own (ArmError, TaskSetError, ...).
    └── UnknownName               a pattern, tool, grader or task set no one registered; its
                                  line lists the registered names and how to add one.
                                  ``usage``: said under the command's usage lines.

    ModelAPIError (harness/models/types.py)
                                  what the endpoint did (an HTTP error, a reply too large or
                                  not a chat completion, a timeout): recorded as the run's
                                  ``api_error`` with its usage, never a crash, never graded.

Anything else that escapes is a bug in loopbench, recorded as ``pattern_error`` when it
happens inside a run.
"""

from __future__ import annotations

from typing import ClassVar


class BadInput(ValueError):
    """What was given is wrong; the message says what, where, and what is expected."""

    usage: ClassVar[bool] = False
    """Said under the command's usage lines (a wrong name or spelling on the command line),
    not as a bare ``Error:`` line."""


class UnknownName(BadInput):
    """A name that is not registered: a pattern, a tool, a grader, a task set."""

    usage = True
