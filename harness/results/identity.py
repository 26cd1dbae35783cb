"""What a results folder's runs mean (its experiment.json), and what differs when a run
would add to it under another task set, model, endpoint, sampling or task content: a
folder's runs must mean one thing."""

from __future__ import annotations

from typing import Any

from harness.sampling import LEGACY, describe

#: What a folder's runs mean; each must match to add runs to it.
IDENTITY = ("task_set", "model", "base_url")


def identity_changes(meta: dict[str, Any], expect: dict[str, Any]) -> list[str]:
    """What differs between a folder's experiment.json (``meta``) and a run's, in words;
    empty when the run may add to the folder."""
    differs = [
        f"{key} {meta.get(key)!r}, not {expect.get(key)!r}"
        for key in IDENTITY
        if key in expect and key in meta and _same(meta[key]) != _same(expect[key])
    ]
    if "sampling" in expect:
        # A folder written before sampling was a setting was sent temperature 0.
        sent = meta.get("sampling")
        if (LEGACY if sent is None else sent) != expect["sampling"]:
            differs.append(
                f"sampling {describe(sent)}, not {describe(expect['sampling'])} (give the "
                "same --temperature, --top-p and --seed to add to them)"
            )
    if "fingerprint" in meta and "fingerprint" in expect:
        differs += describe_change(meta["fingerprint"], expect["fingerprint"])
    return differs


def _same(value: Any) -> Any:
    """A value as compared: an endpoint with or without its trailing slash is one."""
    return value.rstrip("/") if isinstance(value, str) else value


def describe_change(was: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """What differs between two task-set fingerprints, in words."""
    differs = []
    old, new = was.get("tasks", {}), now.get("tasks", {})
    changed = sorted(t for t in set(old) & set(new) if old[t] != new[t])
    added, removed = sorted(set(new) - set(old)), sorted(set(old) - set(new))
    for what, ids in (("changed", changed), ("added", added), ("removed", removed)):
        if ids:
            shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
            differs.append(f"tasks {what} since: {shown}")
    if was.get("tools") != now.get("tools"):
        differs.append("other tools (the tool list or the encyclopedia changed)")
    return differs
