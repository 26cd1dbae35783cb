"""What every subcommand exits with, and the option types that keep bad values out.

0: success; 1: a regression found by ``compare`` (or by ``grade --self-test`` in the
grader itself); 2: bad input or unusable files (or an endpoint that failed outside a run),
said in one line; 3: ``run`` made or found an arm that graded nothing, every run of it an
``api_error``, ``tool_error`` or ``pattern_error`` (``loopbench.harness.report.ungraded``); 130:
interrupted.
Every subcommand is a ``Command`` (or a ``Group``), run in a ``SayingContext``: the one
place a refusal (``loopbench.harness.errors.BadInput``) becomes its line and exit code 2.
"""

from __future__ import annotations

import errno
import math
from pathlib import Path
from typing import Any

import click

from loopbench.harness.errors import BadInput, HarnessFault, ModelError
from loopbench.harness.terminal import error_line


class Refusal(click.ClickException, BadInput):
    """Bad input or an unusable file (``loopbench.harness.errors.BadInput``, a path that cannot be
    read or written), as ``loopbench`` prints it: ``Error: ...``, exit code 2. One line of
    at most ``loopbench.harness.terminal.ERROR_CHARS`` characters, its control characters shown: the
    message may quote what a file held. A click exception first (click prints it), and in
    the ``BadInput`` family, as what it says is."""

    exit_code = 2

    def format_message(self) -> str:
        # guard: error-line-refusal-one-short
        return error_line(self.message)


class Finite(click.FloatRange):
    """A float option in a range that also refuses nan and inf, which a bare range lets
    through (every comparison with nan is false) and which would disable a check."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        # guard: nan-refused-where-would-disable
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


#: What an OSError on a path says, in the words of the one line: by its errno.
PATH_PROBLEMS = {
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENOENT: "no such file or folder",
    errno.ENOTDIR: "not a directory (a part of the path is a file)",
    errno.EISDIR: "is a folder, not a file",
    errno.EROFS: "read-only file system",
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.ENAMETOOLONG: "file name too long",
    errno.ELOOP: "too many levels of symbolic links",
    errno.EEXIST: "already exists",
    errno.EIO: "input/output error",
    errno.ENXIO: "no such device",
    errno.ETXTBSY: "file busy",
}


def is_path_error(exc: OSError) -> bool:
    """Whether ``exc`` is about a file or folder (not a connection, a pipe or a timeout)."""
    # guard: paths-only-errors-about-files
    return exc.errno in PATH_PROBLEMS or (exc.filename is not None and exc.errno != errno.EPIPE)


def path_problem(exc: OSError, path: Path | str | None = None) -> str:
    """``PATH: what is wrong`` for an OSError on a path, in one line; ``path`` when the
    error does not carry the file it was about."""
    where = exc.filename if exc.filename is not None else path
    what = PATH_PROBLEMS.get(exc.errno or 0) or (exc.strerror or str(exc) or type(exc).__name__)
    what = what.splitlines()[0] if what else type(exc).__name__
    if where is None:
        return f"{what} (a file or folder this command reads or writes)"
    return f"{_shown(where)}: {what}"


def _shown(where: object) -> str:
    return where.decode(errors="backslashreplace") if isinstance(where, bytes) else str(where)


class SayingContext(click.Context):
    """A subcommand's context: what it refuses (``BadInput``, from anywhere below), and a
    file or folder it cannot read or write (permissions, a read-only file system, a file
    where a folder should be), become one line and exit code 2, never a traceback, with
    nothing printed before it (a wrong name too: its line lists the right ones); an
    endpoint's failure outside a run (``ModelError``; inside one it is recorded) is one line
    too; a ``HarnessFault`` is a bug, shown with its traceback. The one catch of the command
    line: no subcommand catches an error to say it again."""

    def invoke(self, callback: Any, /, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().invoke(callback, *args, **kwargs)
        except Refusal:  # a subcommand's, said already
            raise
        # guard: refusal-badinput-one-line-exit
        except BadInput as exc:
            raise Refusal(str(exc)) from None
        # guard: errors-endpoint-failure-outside-run
        except ModelError as exc:  # an endpoint asked outside a run (inside one: api_error)
            raise Refusal(f"the model endpoint failed: {exc}") from None
        except HarnessFault:  # a bug in loopbench: its traceback, to report
            raise
        # guard: paths-oserror-file-or-folder
        except OSError as exc:
            if not is_path_error(exc):
                raise
            raise Refusal(path_problem(exc)) from None


class Command(click.Command):
    """A subcommand, run in a ``SayingContext``."""

    context_class = SayingContext


class Group(click.Group):
    """A subcommand with subcommands of its own, each run in a ``SayingContext``."""

    context_class = SayingContext
    command_class = Command
