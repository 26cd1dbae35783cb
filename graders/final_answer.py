"""Which text of a reply is its final answer: one rule every answer grader reads.

The last line that starts with ``Answer:`` or ``Final answer:`` (any case, after list
marks, emphasis or a heading's hashes) gives the text after its colon; a reply without
such a line is its final answer whole. The reasoning before the final line is not the
answer, so a number or a name it mentions on the way does not count.
"""

from __future__ import annotations

import re

_ANSWER_LINE = re.compile(
    r"^[\s>#*_`-]*(?:final\s+)?answer[\s*_`]*[:\uff1a][\s*_`]*(?P<text>.*?)[\s*_`]*$",
    re.IGNORECASE | re.MULTILINE,
)


def final_answer(reply: str) -> str:
    """The final answer in ``reply`` (see the module's rule), stripped of white space."""
    found = [m.group("text") for m in _ANSWER_LINE.finditer(reply)]
    if found and found[-1].strip():
        return found[-1].strip()
    return reply.strip()
