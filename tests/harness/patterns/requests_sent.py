"""What every pattern sends, request by request, against the loopback fake: depot's
questions and the coding tasks, one arm at a time, one run in flight, so that the order
is the same every time. ``tests/fixtures/requests_sent.json`` holds what the patterns sent
before their prompts were slots; with no slot overridden they must send it byte for byte.

The depot questions are asked from the fixture's own task set (tests/fixtures/request_tasks:
depot's first three questions, its encyclopedia and its tools, lookup and calc), so that the
requests hold what a pattern sends and nothing a change to the shipped depot set changes: a
tool added to depot, for one, is offered and described in every request depot's runs send.

    .venv/bin/python -m tests.harness.patterns.requests_sent   # rewrites the fixture
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.fakes.code_responder import CodeResponder
from loopbench.harness.fakes.fake_server import FakeServer, Responder, default_responder
from loopbench.tasks.loading import load_taskset

FIXTURES = Path(__file__).parents[2] / "fixtures"
FIXTURE = FIXTURES / "requests_sent.json"
#: What a changed request tells the reader to run when the change is meant.
REGENERATE = "python -m tests.harness.patterns.requests_sent"
#: Every shipped pattern, and options that take another path through it.
SPECS = [
    "best_of_n",
    "best_of_n:verifier=model",
    "cot",
    "direct",
    "goal_decomposition",
    "plan",
    "plan_execute",
    "plan_execute:output=json",
    "react",
    "react:finish=tool",
    "react_text",
    "react_text:guard=on",
    "reflection",
    "reflection:cycles=2",
    "reflexion",
    "rewoo",
    "rewoo:output=json",
    "self_consistency",
    "tot",
    "tot:breadth=2,depth=2,propose=sample",
]
#: Options that take a path only coding tasks have.
CODING_ONLY = ["reflexion:check=tests", "reflexion:check=self_tests"]
#: The sets by the name the fixture keys them with: the set run, and how many of its tasks.
#: The coding set offers no tools.
SETS: dict[str, tuple[str, int]] = {
    "depot": (str(FIXTURES / "request_tasks"), 3),
    "coding": ("coding", 2),
}


def specs_of(tasks: str) -> list[str]:
    return SPECS + CODING_ONLY if tasks == "coding" else SPECS


def responder(tasks: str) -> Responder:
    """The fake that answers the set the fixture calls ``tasks``."""
    return CodeResponder(load_taskset(SETS[tasks][0])) if tasks == "coding" else default_responder


def sent(spec: str, tasks: str, base: Path) -> list[Any]:
    """The bodies of the requests ``spec`` sent on the set the fixture calls ``tasks``."""
    taskset, limit = SETS[tasks]
    out = base / f"{tasks}-{spec.replace(':', '_')}"
    with FakeServer(responder(tasks)) as server:
        args = ["run", "--tasks", taskset, "--limit", str(limit), "--arm", spec, "--quiet"]
        args += ["--model", "fake", "--base-url", server.base_url, "--out", str(out)]
        ran = CliRunner().invoke(main, [*args, "--concurrency", "1", "--runs-in-flight", "1"])
        assert ran.exit_code == 0, ran.output
        return list(server.served.bodies)


def every_request() -> dict[str, list[Any]]:
    """Every spec's requests on every set, keyed ``SET SPEC``."""
    found: dict[str, list[Any]] = {}
    with tempfile.TemporaryDirectory() as base:
        for tasks in SETS:
            for spec in specs_of(tasks):
                found[f"{tasks} {spec}"] = sent(spec, tasks, Path(base))
    return found


def first_difference(got: Any, recorded: Any, where: str = "") -> str | None:
    """Where ``got`` first differs from ``recorded`` (JSON values), and the two values there:
    None when they are equal."""
    if isinstance(got, dict) and isinstance(recorded, dict):
        for key in sorted(got.keys() | recorded.keys()):
            if key not in recorded or key not in got:
                said = "sent but not recorded" if key in got else "recorded but not sent"
                return f"{where}[{key!r}]: {said}"
            found = first_difference(got[key], recorded[key], f"{where}[{key!r}]")
            if found:
                return found
        return None
    if isinstance(got, list) and isinstance(recorded, list):
        for n, (now, then) in enumerate(zip(got, recorded, strict=False)):
            found = first_difference(now, then, f"{where}[{n}]")
            if found:
                return found
        if len(got) != len(recorded):
            return f"{where}: {len(got)} items sent, {len(recorded)} recorded"
        return None
    if isinstance(got, str) and isinstance(recorded, str) and got != recorded:
        pairs = enumerate(zip(got, recorded, strict=False))
        at = next((n for n, (a, b) in pairs if a != b), min(len(got), len(recorded)))
        sent, kept = _around(got, at), _around(recorded, at)
        return f"{where}, character {at}: sent {sent}, recorded {kept}"
    if got != recorded:
        return f"{where}: sent {_short(got)}, recorded {_short(recorded)}"
    return None


def _around(text: str, at: int, most: int = 80) -> str:
    """``text`` near ``at``, where a difference starts, cut to what shows it."""
    start = max(0, at - most // 2)
    shown = json.dumps(text[start : start + most])
    return ("..." if start else "") + shown + ("..." if start + most < len(text) else "")


def _short(value: Any, most: int = 80) -> str:
    text = json.dumps(value)
    return text if len(text) <= most else f"{text[:most]}..."


def changed(got: Any, recorded: Any, what: str) -> str | None:
    """None when ``got`` is what the fixture recorded; else where it changed, and how to
    record it if the change is meant."""
    found = first_difference(got, recorded)
    if found is None:
        return None
    return (
        f"{what}: not what tests/fixtures/requests_sent.json recorded, at {found}. If the "
        f"change is meant, rewrite the fixture with `{REGENERATE}` and review its diff."
    )


if __name__ == "__main__":
    FIXTURE.write_text(json.dumps(every_request(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {FIXTURE}")
