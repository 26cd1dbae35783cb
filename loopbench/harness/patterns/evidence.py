"""The evidence check (seed 003, section 3.5): numbers must come from what was looked up.

Every number passed to ``calc`` and every number in the answer must appear in an
earlier observation (a looked-up entry, a calculator result, or the question). The
check costs no model call, and when it fails it says exactly what is wrong: the
offending number and the entry that holds the nearest one ("8848 is not in any
looked-up entry; Mount Everest's entry says 8849").

``entries_found`` is the chapter's other check (3.6, "the evidence entries exist") for
an answer given as text, which names no evidence: the entries its own look-ups found.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from loopbench.graders.exact import numbers_in
from loopbench.harness.events import ToolCallEvent
from loopbench.harness.trace import Trace

TOLERANCE = 1e-9


@dataclass
class Seen:
    numbers: list[tuple[float, str]] = field(default_factory=list)

    def add(self, text: str, source: str) -> None:
        self.numbers.extend((n, source) for n in numbers_in(text))

    def holds(self, number: float) -> bool:
        return any(abs(number - n) <= TOLERANCE for n, _ in self.numbers)

    def nearest(self, number: float) -> str:
        if not self.numbers:
            return "nothing has been looked up yet"
        value, source = min(self.numbers, key=lambda item: abs(item[0] - number))
        return f"{source} says {value:g}"


def _arguments(event: ToolCallEvent) -> dict[str, Any]:
    args = event.args
    return args if isinstance(args, dict) else {}


def check_evidence(question: str, trace: Trace, answer: str, since: int = 0) -> str | None:
    """None when every number is grounded; otherwise what failed, in a sentence.

    Calculations are checked from event ``since`` on (the current attempt's); every
    earlier observation still counts as evidence.
    """
    seen = Seen()
    seen.add(question, "the question")
    for index, event in enumerate(trace.events):
        if not isinstance(event, ToolCallEvent) or not event.ok:
            continue
        args = _arguments(event)
        if event.tool == "calc":
            expression = str(args.get("expression", "")) if index >= since else ""
            for number in numbers_in(expression):
                if not seen.holds(number):
                    return (
                        f"calc was given {number:g}, which is not in any looked-up entry; "
                        f"{seen.nearest(number)}"
                    )
            seen.add(event.result, "the calculator")
        else:
            title = args.get("title") or event.tool
            seen.add(event.result, f"the entry {title!r}")
    for number in numbers_in(answer):
        if not seen.holds(number):
            return (
                f"the answer states {number:g}, which no observation holds; {seen.nearest(number)}"
            )
    return None


def entries_found(trace: Trace) -> list[str]:
    """The entries the trace's look-ups found: every successful tool call but ``calc``'s."""
    found = []
    for event in trace.of(ToolCallEvent):
        if event.ok and event.tool != "calc":
            found.append(str(_arguments(event).get("title") or event.tool))
    return found
