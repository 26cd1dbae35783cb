"""Arms that graded nothing: every run of the arm ended in an infrastructure status
(``api_error``, ``tool_error``, ``pattern_error``), so its accuracy measures nothing.

``loopbench run`` says so in one line per such arm, with its commonest error, and exits
``NOTHING_GRADED`` (a CI job must not pass on a run that answered nothing); ``compare``
refuses a side with no graded run. ``pattern_error`` counts: a bug in loopbench or in a
grader grades nothing either.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from loopbench.harness.results.statuses import INFRASTRUCTURE_STATUSES

#: ``loopbench run``'s exit code when an arm graded nothing (0 success, 1 a regression
#: found by ``compare``, 2 bad input or unusable files).
NOTHING_GRADED = 3
#: The most characters of an error said in the line (its start and its end).
ERROR_SHOWN = 600


@dataclass(frozen=True)
class Ungraded:
    """The arms none of whose runs was graded, and why, as their runs recorded it."""

    arms: tuple[str, ...]
    """Each arm's identity (``arm on model`` with several models)."""
    runs: int
    status: str
    """The commonest status of their runs (``api_error``, ...)."""
    error: str
    """The commonest error of their runs, on one line, its start and end kept when it is
    longer than ``ERROR_SHOWN`` characters; "" when none was recorded."""

    def line(self) -> str:
        """The one line saying so."""
        named = ", ".join(map(repr, self.arms))
        arms = f"arm {named}" if len(self.arms) == 1 else f"arms {named}"
        whose = "its" if len(self.arms) == 1 else "their"
        runs = f"{whose} run" if self.runs == 1 else f"all {self.runs} of {whose} runs"
        said = f" (commonest error: {self.error})" if self.error else ""
        return f"{arms} graded nothing: {runs} ended in {self.status}{said}"


def ungraded(frame: pd.DataFrame) -> Ungraded | None:
    """The arms of ``frame`` (per model, with several) none of whose runs was graded, with
    their runs, commonest status and commonest error (``error``, when read); None when
    every arm graded a run."""
    if frame.empty or "status" not in frame:
        return None
    several = "model" in frame and frame["model"].nunique() > 1
    keys = ["model", "arm"] if several else ["arm"]
    arms, chosen = [], []
    failed = frame["status"].isin(INFRASTRUCTURE_STATUSES)
    # Each arm's share failed counted in one pass: iterating the groups copies every run.
    every = failed.groupby([frame[key] for key in keys], sort=True, observed=True).all()
    for key, all_failed in every.items():
        key = key if isinstance(key, tuple) else (key,)
        # guard: ungraded-arm-every-run-infrastructure
        if all_failed:
            arms.append(f"{key[1]} on {key[0]}" if several else str(key[0]))
            same = pd.Series(True, index=frame.index)
            for name, value in zip(keys, key, strict=True):
                same &= frame[name] == value
            chosen.append(frame[same])
    if not arms:
        return None
    runs = pd.concat(chosen)
    status = str(runs["status"].value_counts().index[0])
    errors = runs["error"].dropna().astype(str) if "error" in runs else pd.Series()
    errors = errors[errors.str.strip() != ""]
    error = " ".join(str(errors.value_counts().index[0]).split()) if len(errors) else ""
    if len(error) > ERROR_SHOWN:  # its end kept too: where a hint (add /v1) is said
        error = f"{error[: ERROR_SHOWN // 2]} ... {error[-ERROR_SHOWN // 2 :]}"
    return Ungraded(tuple(arms), len(runs), status, error)
