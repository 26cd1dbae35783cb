"""What a results folder's runs mean (its experiment.json), and what differs when a run
would add to it under another task set, model, endpoint, sampling, task content or grader:
a folder's runs must mean one thing."""

from __future__ import annotations

from typing import Any

from loopbench.harness.sampling import LEGACY, describe

#: What a folder's runs mean; each must match to add runs to it.
IDENTITY = ("task_set", "model", "base_url", "provider")


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
        # guard: folder-tied-sampling-settings
        if (LEGACY if sent is None else sent) != expect["sampling"]:
            differs.append(
                f"sampling {describe(sent)}, not {describe(expect['sampling'])} (give the "
                "same --temperature, --top-p, --seed, --reasoning-effort and --thinking-budget "
                "to add to them)"
            )
    if "fingerprint" in meta and "fingerprint" in expect:
        differs += describe_change(meta["fingerprint"], expect["fingerprint"])
    if "grader" in expect and isinstance(meta.get("grader"), dict):
        # A folder written before the grader was recorded is not refused: its runs resume.
        now, was = resolved(expect["grader"]), resolved(meta["grader"])
        if was != now:
            differs.append(
                f"grader {describe_grader(was)}, not {describe_grader(now)} (give the "
                "grader options its runs were graded by to add to them)"
            )
        # A folder written before graders had an identity has none: its graders had none.
        was_made, now_made = (
            meta["grader"].get("identity") or {},
            expect["grader"].get("identity") or {},
        )
        # guard: folder-tied-grader-identity
        if was_made != now_made:
            differs.append(
                f"grader {describe_grader(now)} {describe_identity(was_made, now_made)} (give "
                "the judge model, and the prompt files, its runs were graded with to add to them)"
            )
    return differs


def describe_identity(was: dict[str, Any], now: dict[str, Any]) -> str:
    """How two grader identities differ, in words: each key that differs, its values when
    short (a prompt's text is said changed, not quoted)."""
    said = []
    for key in sorted(set(was) | set(now)):
        before, after = was.get(key), now.get(key)
        if before == after:
            continue
        shown = f"{before!r} before, {after!r} now"
        said.append(f"{key} {shown}" if len(shown) <= 80 else f"{key} changed")
    return "made otherwise: " + "; ".join(said)


#: The exact grader's rules, by option value: what a table title says of each.
EXACT_RULES = {"strict": "strict: the final answer, hedges refused", "seed": "seed 003's rule"}


def legacy_grader(name: str) -> dict[str, Any]:
    """How a folder written before the grader was recorded (experiment.json's ``grader``)
    was graded: by its set's grader ``name`` as it then was. The exact grader then read the
    whole answer and checked nothing but the numbers and entities: seed 003's rule."""
    return {"name": name, "options": {"rule": "seed"} if name == "exact" else {}}


def resolved(grader: dict[str, Any]) -> dict[str, Any]:
    """A recorded grader with its defaults filled in: exact's rule is strict unless set."""
    options = dict(grader.get("options") or {})
    if grader.get("name") == "exact":
        options.setdefault("rule", "strict")
    return {"name": grader.get("name"), "options": options}


def graded_by(meta: dict[str, Any] | None, code: bool) -> str:
    """What graded a folder's runs, in words, from its experiment.json (``meta``); for a
    folder written before the grader was recorded, the grader of that time: ``code_tests``
    for code answers (``code``), else exact by seed 003's rule."""
    if meta is not None and isinstance(meta.get("grader"), dict):
        return describe_grader(meta["grader"])
    return describe_grader(legacy_grader("code_tests" if code else "exact"))


def describe_grader(grader: dict[str, Any]) -> str:
    """The grader in words: "exact (seed 003's rule)", "number (tolerance=0.01)"."""
    full = resolved(grader)
    options = dict(full["options"])
    if full["name"] == "exact" and options.get("rule") in EXACT_RULES:
        shown = [EXACT_RULES[options.pop("rule")]]
    else:
        shown = []
    shown += [f"{key}={value}" for key, value in sorted(options.items())]
    return f"{full['name']} ({', '.join(shown)})" if shown else str(full["name"])


def _same(value: Any) -> Any:
    """A value as compared: an endpoint with or without its trailing slash is one."""
    return value.rstrip("/") if isinstance(value, str) else value


def describe_change(was: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """What differs between two task-set fingerprints, in words."""
    differs = []
    old, new = was.get("tasks", {}), now.get("tasks", {})
    changed = sorted(t for t in set(old) & set(new) if old[t] != new[t])
    added, removed = sorted(set(new) - set(old)), sorted(set(old) - set(new))
    # The first tasks of a data file read with --limit ("first"): those past them unknown.
    # guard: folder-read-with-limit-takes
    if "first" in was:
        added = []
    # guard: folder-takes-run-read-with
    if "first" in now:
        removed = []
    for what, ids in (("changed", changed), ("added", added), ("removed", removed)):
        if ids:
            shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
            differs.append(f"tasks {what} since: {shown}")
    if was.get("tools") != now.get("tools"):
        differs.append("other tools (the tool list or the encyclopedia changed)")
    # guard: folder-tied-mcp-tools
    if was.get("mcp") != now.get("mcp"):
        differs.append(
            f"other MCP tools: {_servers(was.get('mcp'))} there, {_servers(now.get('mcp'))} now"
        )
    return differs


def _servers(recorded: Any) -> str:
    """A fingerprint's MCP servers in words: name, version and tools hash of each."""
    if not recorded:
        return "none"
    return "; ".join(
        f"{s.get('name')} ({s.get('server')} {s.get('version')}: {', '.join(s.get('tools', []))}; "
        f"tools hash {str(s.get('tools_hash'))[:12]})"
        for s in recorded
    )
