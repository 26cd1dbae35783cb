"""Text a candidate wrote, made safe to show: its control characters visible, not active.

What a candidate's code raises, prints or returns reaches a grade's reason, a suite result and
the terminal of ``loopbench grade``. There an escape sequence would set the terminal's title,
clear its screen or move its cursor, a carriage return would write over what came before, a
bidirectional override would show text in another order than it is stored, and a lone
surrogate would fail to encode. Each becomes its escape as text (ESC is ``\\x1b``), as
``repr`` shows it; newlines and tabs stay. A text already made printable is left as it is.
The escapes are ``loopbench.harness.terminal``'s, which everything loopbench prints goes through.
"""

from __future__ import annotations

from loopbench.harness.terminal import printable

__all__ = ["printable"]
