"""What every subcommand exits with, and the option types that keep bad values out.

0: success; 1: a regression found by ``compare`` (or by ``grade --self-test`` in the
grader itself); 2: bad input or unusable files, said in one line; 130: interrupted.
"""

from __future__ import annotations

import math
from typing import Any

import click


class BadInput(click.ClickException):
    """Bad input or an unusable file: printed as ``Error: ...``, exit code 2."""

    exit_code = 2


class Finite(click.FloatRange):
    """A float option in a range that also refuses nan and inf, which a bare range lets
    through (every comparison with nan is false) and which would disable a check."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number
