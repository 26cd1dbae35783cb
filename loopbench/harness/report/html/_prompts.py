"""The prompt slots each arm overrode (``prompts=FILE``) and their text, as the runs'
records hold them (``options["prompts"]``, beside ``prompts_hash``): what the page shows
of the prompts, read from the folder alone."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from loopbench.harness.report.compare_options import PROMPTS
from loopbench.harness.report.model_axis import model_and_arm, model_keys


@dataclass(frozen=True)
class ArmPrompts:
    arm: str
    """The arm as the page names it (after its model when the runs are on several)."""
    hash: str
    """The records' ``prompts_hash``, as ``compare`` names the prompts."""
    slots: tuple[tuple[str, str], ...]
    """Each slot overridden, with its text."""


def overridden_prompts(runs: pd.DataFrame) -> list[ArmPrompts]:
    """Per arm, the slots its runs overrode, once per version (an arm whose prompt file
    changed between runs has two); none for an arm that overrode none."""
    if "prompts_hash" not in runs:
        return []
    several = bool(model_keys(runs))
    keys = ["model", "arm", "prompts_hash"] if several else ["arm", "prompts_hash"]
    versions = runs[keys].dropna(subset=["prompts_hash"]).drop_duplicates()
    found = []
    for at, options in runs.loc[versions.index, "options"].items():
        arm = runs.at[at, "arm"]
        shown = model_and_arm(runs.at[at, "model"], arm) if several else str(arm)
        slots = (options or {}).get(PROMPTS) or {}
        found.append(ArmPrompts(shown, str(runs.at[at, "prompts_hash"]), tuple(slots.items())))
    return sorted(found, key=lambda version: (version.arm, version.hash))
