"""What the page says of the folder above its tables, read from the runs' columns (a
frame as ``read_frame`` reads it) so a million runs need no record objects."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from loopbench.harness.results.frames import Pricing
from loopbench.harness.results.reading import EXPERIMENT


def facts(results: Path, runs: pd.DataFrame, pricing: Pricing) -> list[tuple[str, str]]:
    """The folder's task sets, models, endpoint, size, prices, experiment and versions."""
    try:
        experiment = json.loads((results / EXPERIMENT).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        experiment = {}
    experiment = experiment if isinstance(experiment, dict) else {}
    written = runs["loopbench_version"].dropna().unique() if "loopbench_version" in runs else ()
    versions = sorted(str(version) for version in written if version)
    facts = [
        ("task set", ", ".join(sorted(runs["task_set"].unique()))),
        ("model", ", ".join(sorted(runs["model"].unique()))),
        ("endpoint", str(experiment.get("base_url") or "")),
        (
            "runs",
            f"{len(runs)} ({runs['arm'].nunique()} arms, {runs['task_id'].nunique()} tasks, "
            f"{int(runs['repeat'].max()) + 1} repeats)",
        ),
        ("prices", pricing.label.removeprefix("cost ")),
        (
            "experiment",
            f"{experiment['experiment_id']} created {experiment.get('created_at', '?')}"
            if experiment.get("experiment_id")
            else "",
        ),
        ("written by", "loopbench " + ", ".join(versions) if versions else ""),
        ("report made", datetime.now(UTC).isoformat(timespec="seconds")),
    ]
    return [(key, value) for key, value in facts if value.strip()]
