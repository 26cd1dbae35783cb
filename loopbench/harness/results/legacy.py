"""Reading records written by earlier versions of loopbench.

Schema 1 wrote an arm as its pattern and every option, defaults included
(``react_text:guard=off,max_steps=8,max_tokens=20000,step_timeout_s=0,tool=plain``).
Today an arm is its pattern and the options set explicitly, so a schema-1 arm is
mapped by dropping every option equal to its schema-1 default, as that release
defined them. The defaults are frozen here, not read from today's options, so a
default changed since then still maps older results to the right identity.

Options whose meaning has changed since are written in today's terms, so that
``compare`` states what really differs: in schema 1, best_of_n's ``max_steps`` was
per candidate (today ``candidate_steps``) and reflexion's per attempt (today
``attempt_steps``), and tot kept one node per level (today ``beam=1``) and sampled each
proposal with a call of its own (today ``propose=sample``). An option added later whose
default is what every earlier run did is filled in, in any schema: a tool-using pattern's
``history`` (``full``: every step re-sent).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_LOOP = {
    "guard": "off",
    "tool": "plain",
    "max_steps": "8",
    "max_tokens": "20000",
    "step_timeout_s": "0",
}
_STRUCTURED = {"output": "tool"}

#: Every pattern's options and defaults as schema 1 wrote them (loopbench 0.1.0).
SCHEMA_1_DEFAULTS: dict[str, dict[str, str]] = {
    "direct": {},
    "cot": {},
    "react": {**_LOOP, "finish": "text"},
    "react_text": _LOOP,
    "plan": _LOOP,
    "rewoo": {**_LOOP, **_STRUCTURED, "plan_steps": "8"},
    "reflection": {**_LOOP, **_STRUCTURED, "cycles": "1"},
    "reflexion": {**_LOOP, "check": "evidence", "attempts": "2"},
    "best_of_n": {**_LOOP, **_STRUCTURED, "n": "3", "verifier": "evidence", "temperature": "0.7"},
    "self_consistency": {"samples": "5", "temperature": "0.7"},
    "tot": {**_STRUCTURED, "breadth": "3", "depth": "2", "temperature": "0.8"},
    "plan_execute": {
        **_LOOP,
        **_STRUCTURED,
        "max_steps": "16",
        "replan": "off",
        "step_budget": "3",
    },
    "goal_decomposition": {**_LOOP, **_STRUCTURED, "max_steps": "16", "step_budget": "3"},
}


#: Options renamed since schema 1 because their meaning moved: per pattern, old -> new.
RENAMED = {
    "best_of_n": {"max_steps": "candidate_steps"},
    "reflexion": {"max_steps": "attempt_steps"},
}


def schema_1_identity(arm: str) -> str:
    """A schema-1 arm string as today's identity: its non-default options only."""
    pattern, colon, rest = arm.partition(":")
    defaults = SCHEMA_1_DEFAULTS.get(pattern)
    if defaults is None or not colon:
        return arm
    renamed = RENAMED.get(pattern, {})
    kept = []
    for part in rest.split(","):
        key, _, value = part.partition("=")
        if defaults.get(key) != value:
            kept.append(f"{renamed.get(key, key)}={value}")
    return f"{pattern}:{','.join(sorted(kept))}" if kept else pattern


def schema_1_options(pattern: str, options: dict[str, Any]) -> dict[str, Any]:
    """A schema-1 record's resolved options in today's terms."""
    upgraded = dict(options)
    for old, new in RENAMED.get(pattern, {}).items():
        if old in upgraded:
            upgraded[new] = upgraded.pop(old)
    if pattern == "best_of_n" and "candidate_steps" in upgraded:
        verdict = int(upgraded.get("verifier") == "model")
        upgraded["max_steps"] = upgraded.get("n", 3) * (upgraded["candidate_steps"] + verdict)
    if pattern == "reflexion" and "attempt_steps" in upgraded:
        upgraded["max_steps"] = upgraded.get("attempts", 2) * upgraded["attempt_steps"]
    if pattern == "tot":
        upgraded.setdefault("beam", 1)  # schema 1 expanded the best proposal only
        upgraded.setdefault("propose", "sample")  # one call per proposal
    upgraded.setdefault("max_output_tokens", None)  # unset is each call's own, as it was
    return upgraded


def pattern_of(arm: str) -> str:
    """The pattern an arm names: what a record without its own ``pattern`` ran."""
    return arm.partition(":")[0].strip()


def upgrade_record(data: dict[str, Any]) -> dict[str, Any]:
    """A record as read from disk, in today's meaning; fields absent get their defaults."""
    arm = data.get("arm")
    if not isinstance(arm, str):
        return data  # validation names the missing or mistyped field
    upgraded = dict(data)
    if not upgraded.get("pattern"):
        upgraded["pattern"] = pattern_of(arm)
    if data.get("schema_version") == 1:
        # guard: schema-1-arms-map-identities
        upgraded["arm"] = schema_1_identity(arm)
        if isinstance(data.get("options"), dict):
            upgraded["options"] = schema_1_options(upgraded["pattern"], data["options"])
    options = upgraded.get("options")
    # guard: tool-loop-records-replayed-full
    if isinstance(options, dict) and "tool" in options and "history" not in options:
        # Every tool loop replayed its whole history before ``history`` was an option.
        upgraded["options"] = options | {"history": "full"}
    return upgraded


def offered_tools(pattern: str, options: Mapping[str, Any]) -> bool:
    """Whether a run recorded before ``tools_offered`` was given tools to call: its options
    choose the lookup's variant (every tool-using pattern has ``tool``), or, with no
    options recorded, its pattern took the tools in schema 1."""
    return "tool" in options or "tool" in SCHEMA_1_DEFAULTS.get(pattern, {})
