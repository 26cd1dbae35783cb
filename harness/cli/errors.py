"""What every subcommand exits with. 0: success; 1: a regression found by ``compare``
(nothing else); 2: bad input or unusable files, said in one line."""

from __future__ import annotations

import click


class BadInput(click.ClickException):
    """Bad input or an unusable file: printed as ``Error: ...``, exit code 2."""

    exit_code = 2
