"""The label grader: a classification, right when the final answer names the expected label
and no other label of the set.

Labels are compared normalised ("Positive." is "positive"), as whole words, the longest
where two overlap ("very positive" is not "positive"). A label the answer negates is not
named (loopbench/graders/naming.py): "not positive" names none, "not positive, negative" names
negative, "positive rather than negative" and "positive, not negative or neutral" name
positive. The set's labels are the grader's ``labels`` option, else the task's ``labels``,
else every label the set's tasks expect.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from loopbench.graders.answer_keys import Filled
from loopbench.graders.base import Grader, GraderSetup, SelfCase
from loopbench.graders.exact import Grade, normalise
from loopbench.graders.naming import Candidates, chosen
from loopbench.graders.options import GraderOptions, read_options
from loopbench.graders.reading import Said
from loopbench.graders.register import GraderDetails, register_grader
from loopbench.graders.task_models import TaskBase


class LabelExpected(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    label: Filled
    """The right label."""
    labels: list[Filled] | None = Field(default=None, min_length=2)
    """Every label of the question, the right one among them; the set's when unset."""
    aliases: dict[str, list[Filled]] | None = None
    """Other words naming a label, by the label they name: ``{"yes": ["true"]}``."""

    @model_validator(mode="after")
    def _label_among_labels(self) -> LabelExpected:
        if not normalise(self.label):
            raise ValueError(f"label {self.label!r} holds no letter or digit")
        known = [*(self.labels or []), self.label]
        if self.labels is not None and normalise(self.label) not in map(normalise, self.labels):
            raise ValueError(f"label {self.label!r} is not one of labels {self.labels}")
        for key in self.aliases or {}:
            # guard: label-alias-no-label-refused
            if normalise(key) not in map(normalise, known):
                raise ValueError(f"aliases names {key!r}, which is not one of labels {known}")
        return self

    def words(self, label: str) -> list[str]:
        """``label`` and its aliases."""
        given = {normalise(k): v for k, v in (self.aliases or {}).items()}
        return [label, *given.get(normalise(label), [])]


class LabelTask(TaskBase):
    expected: LabelExpected


class LabelOptions(GraderOptions):
    labels: list[Filled] | None = Field(default=None, min_length=2)
    """The set's labels."""


class LabelGrader(Grader[LabelTask]):
    def __init__(self, option: Sequence[str] | None, expected: Sequence[str]) -> None:
        self._option = option
        self._expected = expected
        """Every label the set's tasks expect."""

    def labels(self, task: LabelTask) -> list[str]:
        """The labels an answer to ``task`` is read against, the expected one among them."""
        given = self._option or task.expected.labels or self._expected
        return _distinct([*given, task.expected.label])

    def named(self, task: LabelTask, reply: str) -> Said[str]:
        """The one label the reply's final answer commits to, or why none."""
        labels = self.labels(task)
        words = [task.expected.words(label) for label in labels]
        candidates = Candidates(words, (), "names", "label", lambda i: repr(labels[i]))
        said = chosen(reply, candidates)
        return Said(None, said.why) if said.value is None else Said(labels[said.value])

    async def grade(self, task: LabelTask, answer: str) -> Grade:
        want = task.expected.label
        said = self.named(task, answer)
        if said.value is None:
            return Grade(False, f"{said.why}; expected {want!r}")
        if normalise(said.value) != normalise(want):
            return Grade(False, f"names {said.value!r}; expected {want!r}")
        return Grade(True, f"names {want!r}")

    def canonical(self, task: LabelTask, answer: str) -> str:
        """The label named, normalised; "" when none or several are."""
        said = self.named(task, answer).value
        return "" if said is None else normalise(said)


def _distinct(labels: Sequence[str]) -> list[str]:
    seen: dict[str, str] = {}
    for label in labels:
        seen.setdefault(normalise(label), label)
    return list(seen.values())


def label_from_target(target: Any, extras: Mapping[str, Any]) -> Any:
    given = {key: extras[key] for key in ("labels", "aliases") if key in extras}
    return {**given, "label": str(target)}


_SENTIMENT = {"label": "positive", "labels": ["positive", "negative", "neutral"]}
_YES = {"label": "yes", "labels": ["yes", "no"], "aliases": {"yes": ["true"], "no": ["false"]}}
LABEL_CASES = (
    SelfCase(
        {"label": "positive"},
        "positive or negative",
        False,
        "offered among alternatives, though no other label of the set is known",
    ),
    SelfCase(_SENTIMENT, "positive", True, "the label"),
    SelfCase(_SENTIMENT, "Positive.", True, "case and punctuation"),
    SelfCase(_SENTIMENT, "Sentiment: positive", True, "a prefix"),
    SelfCase(_SENTIMENT, "The review is glowing.\nAnswer: positive", True, "the Answer line"),
    SelfCase(_SENTIMENT, "positive, not negative", True, "another label negated"),
    SelfCase(_SENTIMENT, "It's positive rather than negative", True, "'rather than' negates"),
    SelfCase(_SENTIMENT, "positive, not negative or neutral", True, "a negation covers a list"),
    SelfCase(_SENTIMENT, "negative", False, "another label"),
    SelfCase(_SENTIMENT, "not positive, negative", False, "the label negated, another named"),
    SelfCase(_SENTIMENT, "not positive", False, "the label negated"),
    SelfCase(_SENTIMENT, "positive or negative", False, "two labels: a hedge"),
    SelfCase(_SENTIMENT, "positive, negative or neutral", False, "every label"),
    SelfCase(_SENTIMENT, "positively", False, "labels are whole words"),
    SelfCase(
        {"label": "very positive", "labels": ["very positive", "positive", "negative"]},
        "Very positive!",
        True,
        "a label of two words, not the shorter one inside it",
    ),
    SelfCase(
        {"label": "positive", "labels": ["very positive", "positive", "negative"]},
        "very positive",
        False,
        "the longer label is another label",
    ),
    SelfCase(
        {"label": "not_entailment", "labels": ["entailment", "not_entailment"]},
        "not_entailment",
        True,
        "a label that holds 'not'",
    ),
    SelfCase({"label": "positive"}, "neutral", False, "a label outside the set names none"),
    SelfCase(_YES, "Answer: true", True, "an alias names its label"),
    SelfCase(_YES, "Answer: false", False, "another label's alias"),
)


@register_grader(
    "label",
    LabelTask,
    "the final answer names the expected label and no other label of the set",
    GraderDetails(
        example='{"id": "q1", "question": "...", "expected": {"label": "positive"}}',
        cases=LABEL_CASES,
        from_target=label_from_target,
    ),
)
def label_grader(setup: GraderSetup) -> LabelGrader:
    options = read_options("label", setup.options, LabelOptions)
    expected = [t.expected.label for t in setup.tasks if isinstance(t, LabelTask)]
    return LabelGrader(options.labels, _distinct(expected))
