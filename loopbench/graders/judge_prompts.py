"""The judge grader's prompt, as two slots an arm's prompt file would hold: ``system`` and
``user``, each a template filling in the variables ``question``, ``answer``, ``rubric``,
``reference`` (the task's ``expected`` as text, "" when it has none) and ``scale``
(``pass_fail`` or ``score``).

A prompt file (the grader option ``prompts=FILE``: TOML, one key per slot) overrides
slots; it is checked when the grader is built, as an arm's is (loopbench/harness/slot_templates.py):
an unknown slot, a text that is not a template or holds more than text and those
variables, a variable written Python's way (``{answer}``), or texts that no longer show
the judge the answer, are refused in one line before any request.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from loopbench.harness.errors import BadInput
from loopbench.harness.files import read_toml
from loopbench.harness.slot_templates import (
    SlotTooLarge,
    python_style,
    render,
    template_problem,
    used_variables,
)

VARIABLES = ("question", "answer", "rubric", "reference", "scale")

SYSTEM = """\
You grade one answer to a task. Judge it by the rubric, and by the reference answer when \
one is given: an answer that reaches the reference's conclusion in its own words meets \
it, one that contradicts it does not. Judge what the answer says, not how long it is or \
how it is laid out.
{% if scale == "score" %}
Reply with one JSON object and nothing else: {"score": N, "reason": "..."}, where N is a \
whole number from 1 (fails the rubric) to 5 (meets it fully) and the reason is one \
sentence.
{%- else %}
Reply with one JSON object and nothing else: {"verdict": "pass", "reason": "..."} when \
the answer meets the rubric, {"verdict": "fail", "reason": "..."} when it does not; the \
reason is one sentence.
{%- endif %}"""

USER = """\
<task>
{{ question }}
</task>
{% if rubric %}
<rubric>
{{ rubric }}
</rubric>
{% endif %}{% if reference %}
<reference>
{{ reference }}
</reference>
{% endif %}
<answer>
{{ answer }}
</answer>"""

#: The built-in texts, by slot.
BUILT_IN = {"system": SYSTEM, "user": USER}

#: The largest prompt file read, as for an arm's: a prompt is a few pages.
MAX_PROMPT_FILE_BYTES = 2**20


class JudgePromptError(BadInput):
    """A judge prompt file that cannot be used: one line naming it and why."""


def read_prompt_file(path: Path, given: str) -> dict[str, str]:
    """The slots the prompt file ``path`` (written ``prompts=given``) overrides, checked;
    ``JudgePromptError`` in one line otherwise."""
    where = f"grader 'judge': prompts={given}"
    expected = "a TOML prompt file, one key per slot of the judge (system, user)"

    def refused(why: str) -> JudgePromptError:
        return JudgePromptError(f"{where}: {why}")

    # guard: judge-prompt-file-bounded
    data, _ = read_toml(path, refused, expected, MAX_PROMPT_FILE_BYTES)
    if problems := prompt_problems(data):
        raise JudgePromptError(f"{where}: {'; '.join(problems)}")
    return {name: str(text) for name, text in data.items()}


def prompt_problems(overrides: Mapping[str, Any]) -> list[str]:
    """What is wrong with ``overrides`` for the judge's slots, one phrase each."""
    found = []
    for name, text in overrides.items():
        if name not in BUILT_IN:
            # guard: judge-unknown-slot-refused
            found.append(f"slot {name!r} is not one of its slots ({', '.join(BUILT_IN)})")
        elif not isinstance(text, str):
            found.append(f"slot {name!r} must be a text (a TOML string)")
        elif problem := template_problem(text, VARIABLES):
            found.append(f"slot {name!r}: {problem}")
        # guard: judge-python-style-variable-refused
        elif written := python_style(text, VARIABLES):
            variable, line = written
            found.append(
                f"slot {name!r} writes {{{variable}}} on line {line} of its text, which would "
                f"be sent as written: a variable is written {{{{ {variable} }}}}"
            )
    if found:
        return found
    texts = {**BUILT_IN, **overrides}
    shown = used_variables(texts["system"]) | used_variables(texts["user"])
    # guard: judge-prompt-shows-answer
    if "answer" not in shown:
        found.append(
            "its slots leave out {{ answer }}: the judge would never see the answer it "
            "grades; keep {{ answer }} in system or user"
        )
    return found


def rendered(overrides: Mapping[str, str], variables: Mapping[str, Any]) -> dict[str, str]:
    """Each slot's text (the override, else the built-in one) with ``variables`` filled
    in; ``SlotTooLarge`` when one grows past its bound."""
    texts = {}
    for name, default in BUILT_IN.items():
        try:
            texts[name] = render(overrides.get(name, default), dict(variables))
        except SlotTooLarge as exc:
            raise SlotTooLarge(
                f"the judge's prompt slot {name!r} {exc}; nothing of it was sent"
            ) from None
    return texts


def prompts_hash(overrides: Mapping[str, str]) -> str:
    """A short hash of the slots a prompt file overrode."""
    canonical = json.dumps(dict(overrides), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]
