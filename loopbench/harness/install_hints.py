"""What to install when an optional extra is missing, said the same way by every command:
the wheel's command first, then a checkout's (an editable install of the repository)."""

from __future__ import annotations


def install_command(extra: str) -> str:
    """How to install loopbench's ``extra``, from a package index and in a checkout."""
    return f"pip install 'loopbench[{extra}]' (in a checkout: pip install -e '.[{extra}]')"


__all__ = ["install_command"]
