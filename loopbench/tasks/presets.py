"""Datasets read as they are published: GSM8K, MMLU, ARC, BoolQ, SQuAD and HellaSwag.

A file is known by its columns (``recognised``: a plain data file none of whose columns is
mapped), or named with ``--preset NAME`` (``preset = "NAME"`` in taskset.toml). A preset
turns each row into the columns ``loopbench.tasks.rows`` reads: the question as the model is shown
it, the answer as a grader reads it, and what else the grader needs (options, labels); and
it names the grader its rows are graded with unless another is named. What a row lacks is
refused in one line naming the row, the column and the shape the preset reads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import takewhile
from string import ascii_uppercase
from typing import Any

from loopbench.graders.task_models import TaskSetError
from loopbench.harness.errors import BadInput
from loopbench.tasks.rows import Columns, Row

Values = Mapping[str, Any]


@dataclass(frozen=True)
class Preset:
    name: str
    grader: str
    """The grader its rows are graded with unless another is named."""
    shape: str
    """The columns it reads, as a refusal names them."""
    fits: Callable[[Values], bool]
    """Whether a row has its shape (the first row decides a file's preset)."""
    read: Callable[[Row], dict[str, Any]]
    """A row's values as the columns below: ``question``, ``answer`` and the extras."""
    extras: tuple[str, ...] = ()
    """What else the grader is handed from a row (``choices``, ``labels``, ``aliases``)."""
    id: str = "id"
    """The column holding a task's id; the row's number when a row has none."""
    slice: str | None = None
    reference: str | None = None

    def columns(self, given: Columns) -> Columns:
        """The columns its rows are read by; the id the one named (``--id``), if any."""
        return Columns(
            id=given.id if given.id_named else self.id,
            id_named=given.id_named,
            extras={key: key for key in self.extras},
            slice=self.slice,
            reference=self.reference,
        )


class _Refused(BadInput):
    """A row not of the preset's shape: the column, and why."""

    def __init__(self, column: str, why: str) -> None:
        super().__init__(why)
        self.column = column


def _text(values: Values, column: str) -> str:
    value = values.get(column)
    if not isinstance(value, str) or not value.strip():
        raise _Refused(column, f"expected a filled text, got {value!r}")
    return value.strip()


def _texts(value: Any, column: str, fewest: int = 1) -> list[str]:
    if not isinstance(value, list) or len(value) < fewest:
        raise _Refused(column, f"expected a list of at least {fewest} texts, got {value!r}")
    if not all(isinstance(v, str) and v.strip() for v in value):
        raise _Refused(column, f"expected filled texts, got {value!r}")
    return [v.strip() for v in value]


def _letter(index: Any, count: int, column: str) -> str:
    """The letter of option ``index`` (from 0) of ``count``."""
    if isinstance(index, str) and index.strip().isdigit():  # HellaSwag's label is text
        index = int(index)
    # guard: option-index-out-range-refused
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
        raise _Refused(column, f"expected an option's index from 0 to {count - 1}, got {index!r}")
    return ascii_uppercase[index]


def _with_passage(passage: str, question: str) -> str:
    return f"Passage: {passage}\n\nQuestion: {question}"


# GSM8K: {"question": "...", "answer": "worked solution ... #### 18"}


def _gsm8k_fits(values: Values) -> bool:
    answer = values.get("answer")
    return "question" in values and isinstance(answer, str) and "####" in answer


def _gsm8k(row: Row) -> dict[str, Any]:
    solution = _text(row.values, "answer")
    _, marker, final = solution.rpartition("####")
    # guard: gsm8k-row-without-refused
    if not marker or not final.strip():
        raise _Refused("answer", "holds no '#### N' line ending the worked solution")
    return {
        "question": _text(row.values, "question"),
        "answer": final.strip(),
        "reference": solution,
    }


# MMLU: a CSV of question,A,B,C,D,answer (its original files have no header), or Hugging
# Face's rows {"question", "subject", "choices": [...], "answer": 0-based index}.

_MMLU_CSV = ("question", "A", "B", "C", "D", "answer")


def _mmlu_fits(values: Values) -> bool:
    if all(column in values for column in _MMLU_CSV):
        return True
    answer = values.get("answer")
    indexed = isinstance(answer, int) and not isinstance(answer, bool)
    return "question" in values and isinstance(values.get("choices"), list) and indexed


def _mmlu(row: Row) -> dict[str, Any]:
    values = row.values
    if "A" in values:  # the option columns A, B, ... up to the first missing letter
        choices = [_text(values, c) for c in takewhile(values.__contains__, ascii_uppercase)]
    else:
        choices = _texts(values.get("choices"), "choices", 2)
    answer = values.get("answer")
    if isinstance(answer, str) and _is_letter(answer.strip().upper(), len(choices)):
        letter = answer.strip().upper()
    elif isinstance(answer, int) and not isinstance(answer, bool):
        letter = _letter(answer, len(choices), "answer")
    else:
        # guard: mmlu-answer-neither-letter-nor
        raise _Refused(
            "answer",
            f"expected the right option's letter (A to {ascii_uppercase[len(choices) - 1]}) or "
            f"its index from 0, got {answer!r}",
        )
    subject = values.get("subject")
    read = {"question": _text(values, "question"), "answer": letter, "choices": choices}
    return read | ({"slice": subject} if isinstance(subject, str) and subject else {})


def _is_letter(text: str, count: int) -> bool:
    """Whether ``text`` is the letter of one of ``count`` options."""
    return len(text) == 1 and text in ascii_uppercase[:count]


def headerless_mmlu(cells: Sequence[str]) -> list[str] | None:
    """The column names of a CSV whose first row ``cells`` is MMLU's data, not a header (a
    question, its options, the right letter): ``question``, ``A``... ``answer``; else None."""
    if len(cells) < 4 or any(c.strip().lower() in ("question", "answer") for c in cells):
        return None
    options = len(cells) - 2
    if not _is_letter(cells[-1].strip(), options):
        return None
    if [c.strip() for c in cells[1:-1]] == list(ascii_uppercase[:options]):
        return None  # a header naming its option columns A, B, ...
    return ["question", *ascii_uppercase[:options], "answer"]


# ARC: {"id", "question", "choices": {"text": [...], "label": [...]}, "answerKey"}, labels
# A-E or 1-5; or the original files' {"question": {"stem", "choices": [{"text", "label"}]}}.


def _arc_fits(values: Values) -> bool:
    choices = values.get("choices")
    question = values.get("question")
    listed = isinstance(choices, dict) and {"text", "label"} <= set(choices)
    original = isinstance(question, dict) and {"stem", "choices"} <= set(question)
    return "answerKey" in values and (listed or original)


def _arc(row: Row) -> dict[str, Any]:
    values = row.values
    question = values.get("question")
    if isinstance(question, dict):  # the original files: the options inside the question
        options = question.get("choices")
        if not isinstance(options, list) or not all(isinstance(o, dict) for o in options):
            raise _Refused("question", f"expected choices [{{text, label}}, ...], got {options!r}")
        texts = _texts([o.get("text") for o in options], "question", 2)
        labels = [str(o.get("label")) for o in options]
        stem = _text(question, "stem")
    else:
        choices = values.get("choices")
        assert isinstance(choices, dict)
        texts = _texts(choices.get("text"), "choices", 2)
        labels = [str(label) for label in _texts(choices.get("label"), "choices", 2)]
        if len(labels) != len(texts):
            raise _Refused("choices", f"holds {len(texts)} texts but {len(labels)} labels")
        stem = _text(values, "question")
    key = str(values.get("answerKey")).strip()
    # guard: arc-answerkey-no-label-refused
    if key not in labels:
        raise _Refused("answerKey", f"{key!r} is not one of the labels {labels}")
    return {"question": stem, "answer": ascii_uppercase[labels.index(key)], "choices": texts}


# BoolQ: {"question", "answer": true/false, "passage"}.

BOOLQ_LABELS = ["yes", "no"]
BOOLQ_ALIASES = {"yes": ["true", "yep", "yeah", "correct"], "no": ["false", "nope", "incorrect"]}


def _truth(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


def _boolq_fits(values: Values) -> bool:
    return {"question", "passage"} <= set(values) and _truth(values.get("answer")) is not None


def _boolq(row: Row) -> dict[str, Any]:
    truth = _truth(row.values.get("answer"))
    # guard: boolq-answer-neither-true-nor
    if truth is None:
        raise _Refused("answer", f"expected true or false, got {row.values.get('answer')!r}")
    question = _text(row.values, "question")
    asked = question if question.endswith("?") else f"{question}?"
    return {
        "question": _with_passage(_text(row.values, "passage"), f"{asked}\nAnswer yes or no."),
        "answer": "yes" if truth else "no",
        "labels": BOOLQ_LABELS,
        "aliases": BOOLQ_ALIASES,
    }


# SQuAD: {"id", "title", "context", "question", "answers": {"text": [...], ...}} (Hugging
# Face's rows; v1.1's JSON document is read into them by ``squad_document_rows``).


def _squad_fits(values: Values) -> bool:
    answers = values.get("answers")
    return (
        {"question", "context"} <= set(values) and isinstance(answers, dict) and "text" in answers
    )


def _squad(row: Row) -> dict[str, Any]:
    answers = row.values.get("answers")
    given = answers.get("text") if isinstance(answers, dict) else None
    # guard: squad-question-with-no-gold
    if isinstance(given, list) and not given:
        raise _Refused("answers", "holds no gold answer (SQuAD 2.0's unanswerable question?)")
    golds = _texts(given, "answers")
    question = _with_passage(_text(row.values, "context"), _text(row.values, "question"))
    return {"question": question, "answer": list(dict.fromkeys(golds))}


def squad_document_rows(where: str, data: Any) -> Iterator[Row] | None:
    """SQuAD v1.1's JSON document (``{"data": [{"title", "paragraphs": [{"context", "qas":
    [{"id", "question", "answers": [{"text", "answer_start"}]}]}]}]}``) as Hugging Face's
    rows, one a question; None when ``data`` is not such a document."""
    articles = data.get("data") if isinstance(data, dict) else None
    if not isinstance(articles, list) or not articles:
        return None
    if not all(isinstance(a, dict) and "paragraphs" in a for a in articles):
        return None
    return _squad_document(where, articles)


def _squad_document(where: str, articles: list[dict[str, Any]]) -> Iterator[Row]:
    number = 0
    for i, article in enumerate(articles):
        for j, paragraph in enumerate(_objects(f"{where}: data[{i}].paragraphs", article)):
            place = f"{where}: data[{i}].paragraphs[{j}]"
            for k, qa in enumerate(_objects(f"{place}.qas", paragraph, "qas")):
                answers = _objects(f"{place}.qas[{k}].answers", qa, "answers")
                number += 1
                yield Row(
                    f"{place}.qas[{k}]",
                    number,
                    {
                        "id": qa.get("id"),
                        "title": article.get("title"),
                        "context": paragraph.get("context"),
                        "question": qa.get("question"),
                        "answers": {"text": [a.get("text") for a in answers]},
                    },
                )


def _objects(where: str, parent: dict[str, Any], key: str = "paragraphs") -> list[dict[str, Any]]:
    found = parent.get(key)
    # guard: squad-document-not-shape-refused
    if not isinstance(found, list) or not all(isinstance(item, dict) for item in found):
        raise TaskSetError(f"{where}: expected a list of objects, got {found!r:.80}")
    return found


# HellaSwag: {"ind", "activity_label", "ctx" (or "ctx_a", "ctx_b"), "endings": [4], "label"}.


def _hellaswag_fits(values: Values) -> bool:
    context = "ctx" in values or "ctx_a" in values
    return context and isinstance(values.get("endings"), list) and "label" in values


def _hellaswag(row: Row) -> dict[str, Any]:
    values = row.values
    if isinstance(values.get("ctx"), str) and values["ctx"].strip():
        context = _text(values, "ctx")
    else:
        context = f"{_text(values, 'ctx_a')} {values.get('ctx_b') or ''}".strip()
    activity = values.get("activity_label")
    shown = f"{activity.strip()}: {context}" if isinstance(activity, str) and activity else context
    endings = _texts(values.get("endings"), "endings", 2)
    return {
        "question": f"{shown}\n\nWhich ending is the most likely to come next?",
        "answer": _letter(values.get("label"), len(endings), "label"),
        "choices": endings,
    }


PRESETS: dict[str, Preset] = {
    preset.name: preset
    for preset in (
        Preset(
            "arc",
            "choice",
            "id, question, choices {text: [...], label: [...]}, answerKey",
            _arc_fits,
            _arc,
            ("choices",),
        ),
        Preset(
            "boolq",
            "label",
            "question, passage, answer (true or false)",
            _boolq_fits,
            _boolq,
            ("labels", "aliases"),
        ),
        Preset(
            "gsm8k",
            "number",
            "question, answer (a worked solution ending '#### N')",
            _gsm8k_fits,
            _gsm8k,
            reference="reference",
        ),
        Preset(
            "hellaswag",
            "choice",
            "ctx (or ctx_a, ctx_b), endings [...], label (the right ending's index from 0)",
            _hellaswag_fits,
            _hellaswag,
            ("choices",),
            id="ind",
        ),
        Preset(
            "mmlu",
            "choice",
            "question, A, B, C, D, answer (a letter); or question, choices [...], answer "
            "(an index from 0)",
            _mmlu_fits,
            _mmlu,
            ("choices",),
            slice="slice",
        ),
        Preset(
            "squad",
            "f1",
            "id, context, question, answers {text: [...]}",
            _squad_fits,
            _squad,
        ),
    )
}


def preset_named(name: str) -> Preset:
    """The preset ``name``; ``TaskSetError`` listing the known ones otherwise."""
    found = PRESETS.get(name.strip().lower())
    # guard: unknown-preset-refused-listing-known
    if found is None:
        raise TaskSetError(f"--preset {name!r}: no such preset; known: {', '.join(PRESETS)}")
    return found


def recognised(row: Row) -> Preset | None:
    """The preset whose shape ``row`` has, if one; refused when several have it."""
    fits = [preset for preset in PRESETS.values() if preset.fits(row.values)]
    # guard: row-fitting-two-presets-refused
    if len(fits) > 1:
        names = " and ".join(p.name for p in fits)
        raise TaskSetError(
            f"{row.where}: its columns fit the presets {names}; name the dataset with --preset NAME"
        )
    return fits[0] if fits else None


def preset_rows(preset: Preset, rows: Sequence[Row], columns: Columns) -> tuple[list[Row], Columns]:
    """``rows`` read by ``preset``, and the columns they are then read by; a row not of its
    shape refused in one line."""
    read = []
    for row in rows:
        try:
            read.append(replace(row, values={**row.values, **preset.read(row)}))
        except _Refused as exc:
            raise TaskSetError(
                f"{row.where}: column {exc.column!r}: {exc}; the {preset.name} preset reads "
                f"{preset.shape}"
            ) from None
    return read, preset.columns(columns)
