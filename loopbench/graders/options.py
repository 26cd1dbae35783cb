"""A grader's options (taskset.toml's ``grader_options``, ``--grader NAME:K=V`` read by
``loopbench.graders.registry.parse_grader_spec``), read into
the grader's own model of them: an option it does not take, or a value it cannot use, is
refused in one line naming the grader and the option."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from loopbench.graders.base import GraderOptionError

OptionsT = TypeVar("OptionsT", bound="GraderOptions")


class GraderOptions(BaseModel):
    """What a grader takes as options; none unless a subclass adds fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def read_options(grader: str, given: Mapping[str, Any], model: type[OptionsT]) -> OptionsT:
    """``given`` read as ``model``; ``GraderOptionError`` naming what is wrong."""
    try:
        return model.model_validate(dict(given), strict=True)
    except ValidationError as exc:
        takes = ", ".join(model.model_fields) or "no options"
        problems = "; ".join(
            f"option {'.'.join(map(str, e['loc']))!r}: "
            + ("not an option of it" if e["type"] == "extra_forbidden" else e["msg"])
            for e in exc.errors()
        )
        raise GraderOptionError(f"grader {grader!r}: {problems} (it takes: {takes})") from None
