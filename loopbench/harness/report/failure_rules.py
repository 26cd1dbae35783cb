"""Why a run failed, by rules over its record and trace: no model judges.

Every run that did not end correct gets one or more labels; a correct run gets none.
Each rule is a small function below whose docstring is the rule; ``docs/failures.md``
gives them with an example each. A run whose trace is missing (an older folder) gets
only the labels its record supports, and a wrong answer no record rule explains is
then ``wrong with no trace``, never ``wrong but grounded``.

A rule reads a run as ``RunFacts``: a ``RunRecord``, or a row of the runs' columns when a
whole folder is labelled (``loopbench.harness.report.failures``). The rules read traces as
``loopbench.harness.report.failure_traces`` reads them, through the event models the harness writes
them with (``loopbench.harness.events``); a traces file that does not hold them is refused there,
naming the line.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Protocol

from loopbench.graders.exact import numbers_in
from loopbench.harness.events import FINAL_ANSWER, ToolCallEvent, parse_events
from loopbench.harness.report.failure_traces import CUT, RunTrace
from loopbench.harness.results.legacy import offered_tools
from loopbench.harness.results.statuses import LIMIT_STATUSES
from loopbench.tasks.tools import fold

Label = Literal[
    "repetition",
    "tool miss not recovered",
    "unsupported number",
    "arithmetic slip",
    "no evidence",
    "format failure",
    "truncated",
    "budget",
    "none accepted",
    "refused",
    "api error",
    "harness error",
    "tool error",
    "wrong but grounded",
    "wrong with no trace",
]
LABELS: tuple[Label, ...] = Label.__args__  # type: ignore[attr-defined]

#: The calculator of the task sets (``loopbench/tasks/tools.py``); every other tool but final_answer
#: is a look-up.
CALC = "calc"
#: Numbers closer than this are the same number (as the evidence check compares them).
SAME = 1e-9
#: A number within this share of a calc result (and not equal to it) is a slip of it.
NEAR = 0.01
#: Two look-up titles at least this similar (difflib's ratio, folded) name the same entity.
SIMILAR_TITLES = 0.8
#: The one thing of a run's metrics a rule reads: whether they hold this one (``_coding``).
CODE_EDITS = "code_edits"


class RunFacts(Protocol):
    """What the rules read of a run's record (a ``RunRecord`` has all of it)."""

    @property
    def status(self) -> str: ...
    @property
    def correct(self) -> bool | None: ...
    @property
    def answer(self) -> str | None: ...
    @property
    def pattern(self) -> str: ...
    @property
    def options(self) -> Mapping[str, Any]: ...
    @property
    def metrics(self) -> Mapping[str, float]: ...
    @property
    def tools_offered(self) -> bool | None: ...
    @property
    def answer_kind(self) -> str | None: ...
    @property
    def repeated_actions(self) -> int: ...
    @property
    def tool_calls(self) -> int: ...
    @property
    def parse_failures(self) -> int: ...


Rule = Callable[[RunFacts, RunTrace | None], bool]


def repetition(record: RunFacts, trace: RunTrace | None) -> bool:
    """The same action (tool and arguments, compared as parsed JSON) ran twice in the run,
    as the record counts (``repeated_actions``) or the trace shows; or the run ended
    ``step_budget`` having given the same reply (text and tool calls) twice: a loop."""
    if record.repeated_actions > 0:
        return True
    if trace is None:
        return False
    keys = [a.key for a in trace.actions]
    looped = record.status == "step_budget" and len(set(trace.replies)) < len(trace.replies)
    return len(set(keys)) < len(keys) or looped


def tool_miss_not_recovered(record: RunFacts, trace: RunTrace | None) -> bool:
    """A look-up (a call of any tool but calc and final_answer) failed, and no later look-up
    of the same entity succeeded. The trace does not say which entity a look-up meant: two
    look-ups name the same one when their arguments, folded, are equal, one holds the other
    as whole words, or they are at least 80% similar (a misspelling)."""
    if trace is None:
        return False
    lookups = [a for a in trace.actions if a.tool not in (CALC, FINAL_ANSWER)]
    return any(
        not miss.ok
        and not any(
            later.ok and _same_entity(_entity(miss), _entity(later)) for later in lookups[i + 1 :]
        )
        for i, miss in enumerate(lookups)
    )


def _entity(lookup: ToolCallEvent) -> str:
    """What a look-up asked for: its argument values as text, folded."""
    args = lookup.args
    return fold(" ".join(str(v) for v in args.values()) if isinstance(args, dict) else args)


def _same_entity(a: str, b: str) -> bool:
    if f" {a} " in f" {b} " or f" {b} " in f" {a} ":
        return bool(a and b)
    return difflib.SequenceMatcher(None, a, b).ratio() >= SIMILAR_TITLES


def unsupported_number(record: RunFacts, trace: RunTrace | None) -> bool:
    """The answer states a number (as the exact grader reads numbers) that no successful
    tool result (calc's included) and not the question holds, compared as magnitudes, and
    that is not an arithmetic slip. Not applied when the trace cut a tool result or the
    question on disk, since the number may sit in the part cut."""
    if trace is None or not _numbers_apply(record, trace):
        return False
    explained = _evidence(trace) + _slipped(record, trace)
    return any(not _within(n, explained) for n in numbers_in(_answer(record)))


def arithmetic_slip(record: RunFacts, trace: RunTrace | None) -> bool:
    """A calc result is in the trace and the answer states a different number for it: a
    number no observation or question holds that is within 1% of a calc result or one whole
    number away from a whole one; or a number a reply states as a calc expression's result
    (``1973 - 1889 = 94``) when calc gave another."""
    if trace is None or not _numbers_apply(record, trace):
        return False
    return bool(_slipped(record, trace))


def _numbers_apply(record: RunFacts, trace: RunTrace) -> bool:
    # guard: number-cut-from-trace-not
    return record.answer is not None and not trace.cut and not _coding(record)


def _evidence(trace: RunTrace) -> list[float]:
    # guard: only-successful-tool-result-supports
    texts = [trace.question, *(a.result for a in trace.actions if a.ok)]
    return [n for text in texts for n in numbers_in(text)]


def _calcs(trace: RunTrace) -> list[tuple[str, float]]:
    """Each successful calc: its expression and its result."""
    found = []
    for action in trace.actions:
        args, result = action.args, numbers_in(action.result)
        if action.tool == CALC and action.ok and len(result) == 1:
            expression = str(args.get("expression", "")) if isinstance(args, dict) else args
            found.append((expression, result[0]))
    return found


def _slipped(record: RunFacts, trace: RunTrace) -> list[float]:
    """The answer's numbers that are slips of a calc result (see ``arithmetic_slip``)."""
    answer = numbers_in(_answer(record))
    calcs = _calcs(trace)
    evidence = _evidence(trace)
    near = [
        n
        for n in answer
        if not _within(n, evidence) and any(_near(n, result) for _, result in calcs)
    ]
    stated = [
        n
        for expression, result in calcs
        for text in (*(r.text for r in trace.replies), _answer(record))
        for n in _stated_results(expression, text)
        if not _within(n, [result]) and _within(n, answer)
    ]
    return near + stated


def _near(n: float, result: float) -> bool:
    n, result = abs(n), abs(result)
    if abs(n - result) <= SAME:
        return False
    whole = n.is_integer() and result.is_integer()
    # guard: answer-one-off-calc-result
    return abs(n - result) <= NEAR * result or (whole and abs(n - result) == 1)


def _stated_results(expression: str, text: str) -> list[float]:
    """The numbers ``text`` states as ``expression = N`` (spaces ignored)."""
    compact = re.sub(r"\s+", "", expression)
    if not compact:
        return []
    pattern = rf"(?<![\d.+\-*/(]){re.escape(compact)}=(-?\d[\d,]*(?:\.\d+)?)"
    return [numbers_in(m)[0] for m in re.findall(pattern, re.sub(r"\s+", "", text))]


def _within(n: float, numbers: Sequence[float]) -> bool:
    return any(abs(abs(n) - abs(m)) <= SAME for m in numbers)


def _answer(record: RunFacts) -> str:
    """The answer as recorded, without the marker of a cut (its count is not a number stated)."""
    return CUT.sub("", record.answer or "")


def no_evidence(record: RunFacts, trace: RunTrace | None) -> bool:
    """The run answered without calling a tool (final_answer aside) though it was offered
    tools (the record's ``tools_offered``; in older records, its options choose the tools)
    and the task is not a coding one. Without a trace, from the record's ``tool_calls``,
    which counts final_answer too."""
    if record.status != "answered" or not _offers_tools(record):
        return False
    if trace is None:
        return record.tool_calls == 0
    return all(a.tool == FINAL_ANSWER for a in trace.actions)


def _offers_tools(record: RunFacts) -> bool:
    offered = record.tools_offered
    if offered is None:  # recorded before it was
        offered = offered_tools(record.pattern, record.options)
    return offered and not _coding(record)


def _coding(record: RunFacts) -> bool:
    """A coding run: its answer is code, graded by tests. Before records said so
    (``answer_kind``), every such record had code_edits."""
    if record.answer_kind is not None:
        return record.answer_kind == "code"
    return CODE_EDITS in record.metrics


def format_failure(record: RunFacts, trace: RunTrace | None) -> bool:
    """The run ended ``unparsed``, or a reply's action or answer could not be read
    (``parse_failures``)."""
    return record.status == "unparsed" or record.parse_failures > 0


def _status(*statuses: str) -> Rule:
    def rule(record: RunFacts, trace: RunTrace | None) -> bool:
        return record.status in statuses

    rule.__doc__ = f"The run ended {' or '.join(statuses)}."
    return rule


RULES: dict[Label, Rule] = {
    "repetition": repetition,
    "tool miss not recovered": tool_miss_not_recovered,
    "unsupported number": unsupported_number,
    "arithmetic slip": arithmetic_slip,
    "no evidence": no_evidence,
    "format failure": format_failure,
    "truncated": _status("truncated"),
    "budget": _status(*sorted(LIMIT_STATUSES)),
    "none accepted": _status("none_accepted"),
    "refused": _status("refused"),
    "api error": _status("api_error"),
    "harness error": _status("pattern_error"),
    "tool error": _status("tool_error"),
}


def failed(record: RunFacts) -> bool:
    """Whether the run is classified: it did not end correct. An answer not graded (a
    hand-written record) is neither correct nor failed."""
    return record.correct is False or record.status != "answered"


def labels(record: RunFacts, trace: RunTrace | None) -> list[Label]:
    """Every label the rules give a run, in ``LABELS`` order; none for a run not failed.

    A wrong answer no other rule explains is ``wrong but grounded``, or ``wrong with no trace``
    when the trace the other rules read is missing.
    """
    if not failed(record):
        return []
    found = [label for label, rule in RULES.items() if rule(record, trace)]
    if not found and record.status == "answered":
        found.append("wrong but grounded" if trace is not None else "wrong with no trace")
    return found


def label_run(record: RunFacts, events: Sequence[Mapping[str, Any]] | None) -> list[Label]:
    """``labels`` of a run from its trace events as ``traces.jsonl`` holds them."""
    return labels(record, None if events is None else RunTrace.of(parse_events(events)))
