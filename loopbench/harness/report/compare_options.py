"""What an arm ran differently on the two sides of a comparison: its resolved options,
and the prompt slots it overrode (by their hash)."""

from __future__ import annotations

import json

import pandas as pd


def option_changes(before: pd.Series, after: pd.Series) -> tuple[str, ...]:
    """Each option whose resolved value is not the same on both sides, with both values;
    the prompts overridden are said by their hash (``prompts_change``), not their text."""
    missing = "(absent)"
    sides = [_option_values(before), _option_values(after)]
    changes = []
    # guard: compare-names-prompts-hash-not
    for key in sorted((set(sides[0]) | set(sides[1])) - {PROMPTS}):
        was, now = (", ".join(sorted(side.get(key, {missing}))) for side in sides)
        if was != now:
            changes.append(f"{key}: {was} → {now}")
    return tuple(changes)


#: The option holding the text of each prompt slot an arm overrode (``loopbench.harness.arms``).
PROMPTS = "prompts"
#: What runs whose records hash no overridden prompt sent: every slot's built-in text.
BUILT_IN = "built-in"


def prompts_change(before: pd.DataFrame, after: pd.DataFrame) -> str:
    """The hashes of the prompt slots an arm overrode (``prompts_hash``), before → after,
    when they are not the same on both sides; ``BUILT_IN`` for runs that overrode none, as
    runs recorded before prompts were slots (no ``prompts_hash``) read."""
    was, now = (", ".join(sorted(_prompt_hashes(side))) for side in (before, after))
    # guard: compare-says-when-arm-prompts
    return "" if was == now else f"{was} → {now}"


def _prompt_hashes(runs: pd.DataFrame) -> set[str]:
    if "prompts_hash" not in runs:
        return {BUILT_IN}
    # guard: run-with-no-prompts-hash
    return {h if isinstance(h, str) else BUILT_IN for h in runs["prompts_hash"].unique()}


def _option_values(options: pd.Series) -> dict[str, set[str]]:
    values: dict[str, set[str]] = {}
    # Runs of one arm share a handful of option dicts (the column reader makes one per
    # distinct text): each is read once, not once per run.
    listed = options.tolist()  # at once: a million runs' column an item at a time is slow
    for resolved in dict(zip(map(id, listed), listed, strict=True)).values():
        for key, value in (resolved or {}).items():
            values.setdefault(key, set()).add(json.dumps(value))
    return values
