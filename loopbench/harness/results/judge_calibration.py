"""A results folder's judge calibration: how the judge's verdicts agreed with a person's
labels, per arm and over all, as ``loopbench judge calibrate`` counted them.

Written to ``judge_calibration.json`` in the folder; ``table``, ``table --vs`` and
``compare`` read it to correct the judge's accuracy (``loopbench.harness.stats.judge_correction``).
Only counts are kept: every rate and interval is computed from them where it is shown.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, Strict

from loopbench.harness.errors import BadInput

FILENAME = "judge_calibration.json"
VERSION = 1

#: A count as written: a whole number, not negative.
_Count = Annotated[int, Field(ge=0), Strict()]


class CalibrationUnreadable(BadInput):
    """judge_calibration.json is not a calibration this version reads: one line naming it."""


class LabelCounts(BaseModel):
    """Labelled answers by the person's label and the judge's verdict
    (``loopbench.harness.stats.judge_correction.JudgeRates``)."""

    model_config = ConfigDict(extra="forbid")

    true_pass: _Count = 0
    false_fail: _Count = 0
    true_fail: _Count = 0
    false_pass: _Count = 0


class Calibration(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: Annotated[int, Field(ge=1, le=VERSION), Strict()] = VERSION
    labels_file: str
    """The labels file as it was given."""
    labels_sha256: str
    """A digest of its bytes: which labels these counts came from."""
    grader: dict[str, Any] = {}
    """The folder's grader as experiment.json records it (name, options, identity) when
    the labels were counted: a calibration of another judge does not apply."""
    pooled: LabelCounts
    """Every labelled answer, whatever its arm."""
    arms: dict[str, LabelCounts] = {}
    """By arm identity, the arms the labels cover."""


def load_calibration(folder: Path) -> Calibration | None:
    """The folder's calibration, or None when it has none."""
    path = folder / FILENAME
    if not path.is_file():
        return None
    try:
        return Calibration.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, UnicodeDecodeError) as exc:
        first = str(exc).splitlines()[0]
        raise CalibrationUnreadable(
            f"{path}: not a judge calibration this version reads ({first}); run "
            "`loopbench judge calibrate` again"
        ) from None


def save_calibration(folder: Path, calibration: Calibration) -> Path:
    """Writes the calibration into the folder (replacing an earlier one) and returns its
    path."""
    path = folder / FILENAME
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(calibration.model_dump_json(indent=2) + "\n", encoding="utf-8")
    temporary.replace(path)
    return path
