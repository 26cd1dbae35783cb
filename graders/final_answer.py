"""Which text of a reply is its final answer: one rule every answer grader reads.

The last line that starts with ``Answer:`` or ``Final answer:`` (any case, after list
marks, emphasis or a heading's hashes) gives the text after its colon, or, when later in
the reply, the rest of a line after "answer:" or "answer is" within it ("So, final answer:
B"; "I think the answer is 42"); a reply without either is its final answer whole. The
reasoning before the final answer is not the answer, so a number or a name it mentions on
the way does not count.
"""

from __future__ import annotations

import re

_ANSWER_LINE = re.compile(
    r"^[\s>#*_`-]*(?:final\s+)?answer[\s*_`]*[:\uff1a][\s*_`]*(?P<text>.*?)[\s*_`]*$",
    re.IGNORECASE | re.MULTILINE,
)
#: "Answer" within a line ("So, final answer: B"; "I think the answer is 42").
_FINAL_IN_LINE = re.compile(
    r"\banswer[\s*_`]*(?:[:\uff1a]|is\b)[\s*_`]*(?P<text>[^\n]*?)[\s*_`]*$",
    re.IGNORECASE | re.MULTILINE,
)


def final_answer(reply: str) -> str:
    """The final answer in ``reply`` (see the module's rule), stripped of white space."""
    found = [(m.start("text"), m.group("text")) for m in _ANSWER_LINE.finditer(reply)]
    found += [(m.start("text"), m.group("text")) for m in _FINAL_IN_LINE.finditer(reply)]
    if found:
        text = max(found)[1]
        if text.strip():
            return text.strip()
    return reply.strip()
