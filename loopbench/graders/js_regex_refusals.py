"""Why loopbench/graders/js_regex.py refuses a pattern, in words a writer of Python's regexes reads:
what JavaScript does with it instead, and what to write."""

from __future__ import annotations

#: What to write instead of an escape JavaScript reads as its letter.
HINTS = {
    "A": "write ^ for the start",
    "Z": "write $ for the end",
    "z": "write $ for the end",
    "p": "JavaScript reads \\p{...} only with the u flag, which promptfoo does not set",
    "P": "JavaScript reads \\P{...} only with the u flag, which promptfoo does not set",
}


def not_a_group(head: str) -> str:
    """Why a group opening ``(?`` as JavaScript does not is refused."""
    if head.startswith("(?P"):
        return f"{head!r}: (?P<name>...) is Python's; JavaScript names a group (?<name>...)"
    if head.startswith(("(?>", "(?#")):
        return f"{head!r}: atomic groups and comments are not JavaScript's"
    return (
        f"{head!r}: inline flags such as (?i) are Python's, which JavaScript refuses; match "
        "any case with an icontains assert, or write [Pp]"
    )


def unknown_escape(char: str, in_class: bool) -> str:
    """Why the escape of ``char`` (a letter, a digit, or nothing) is refused."""
    if char == "":
        return "\\ at end of pattern"
    if char.isdigit():
        return f"\\{char}{' in a set' if in_class else ''} is a legacy octal escape; write \\xHH"
    hint = HINTS.get(char, f"escape only what JavaScript knows, or write {char} alone")
    return f"\\{char} is not an escape in JavaScript's regexes (it means the letter {char}); {hint}"
