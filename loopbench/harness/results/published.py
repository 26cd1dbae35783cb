"""What a paper reported for an arm, kept beside the runs so a table can set the two side
by side: an experiment file's ``[published."ARM"]`` tables, recorded in the results
folder's experiment.json under ``published`` (keyed by the arm's identity) by ``run``."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from loopbench.harness.files import describe_errors, read_bounded
from loopbench.harness.results.reading import EXPERIMENT, ResultsError


class PublishedResult(BaseModel):
    """One arm's figures as a source reported them."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    accuracy: float = Field(ge=0, le=1, allow_inf_nan=False)
    """The accuracy reported, as a fraction (0.74 for 74%)."""
    model: str = Field(min_length=1)
    """The model the source measured (named beside the runs' own)."""
    source: str = Field(min_length=1)
    """Who reported it, short enough for a table cell: "Yao et al. 2023"."""
    url: str | None = None
    """Where to read it: a URL or an arXiv id."""
    cost_per_run: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """USD per run (per task attempted), where the source gives it."""
    cost_per_correct: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """USD per correct answer, where the source gives it."""


class _Recorded(BaseModel):
    """The part of experiment.json these are read from (the rest is another reader's)."""

    published: dict[str, PublishedResult] = Field(default_factory=dict)


def read_published(results: Path) -> dict[str, PublishedResult]:
    """The published figures a results folder (or its runs.jsonl) records, by arm; none
    when its experiment.json has none, is missing or cannot be read (the runs are still
    readable without it). ``ResultsError`` naming the field when they do not validate."""
    folder = results if results.is_dir() else results.parent
    try:
        meta = json.loads(read_bounded(folder / EXPERIMENT).decode("utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(meta, dict):
        return {}
    try:
        return _Recorded.model_validate(meta).published
    except ValidationError as exc:
        raise ResultsError(f"{folder / EXPERIMENT}: {describe_errors(exc, first=True)}") from None
