"""What every pattern sends, request by request, against the loopback fake: the depot
questions and the coding tasks, one arm at a time, one run in flight, so that the order
is the same every time. ``tests/fixtures/requests_sent.json`` holds what the patterns sent
before their prompts were slots; with no slot overridden they must send it byte for byte.

    .venv/bin/python -m tests.harness.patterns.requests_sent   # rewrites the fixture
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from harness.cli.main import main
from harness.fakes.code_responder import CodeResponder
from harness.fakes.fake_server import FakeServer, Responder, default_responder
from tasks.loading import load_taskset

FIXTURE = Path(__file__).parents[2] / "fixtures" / "requests_sent.json"
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
#: The task sets, how many of their tasks, and the fake that answers them.
SETS: dict[str, tuple[int, Responder | None]] = {"depot": (3, None), "coding": (2, None)}


def specs_of(tasks: str) -> list[str]:
    return SPECS + CODING_ONLY if tasks == "coding" else SPECS


def sent(spec: str, tasks: str, limit: int, responder: Responder, base: Path) -> list[Any]:
    """The bodies of the requests ``spec`` sent on the first ``limit`` tasks of ``tasks``."""
    out = base / f"{tasks}-{spec.replace(':', '_')}"
    with FakeServer(responder) as server:
        args = ["run", "--tasks", tasks, "--limit", str(limit), "--arm", spec, "--quiet"]
        args += ["--model", "fake", "--base-url", server.base_url, "--out", str(out)]
        ran = CliRunner().invoke(main, [*args, "--concurrency", "1", "--runs-in-flight", "1"])
        assert ran.exit_code == 0, ran.output
        return list(server.served.bodies)


def every_request() -> dict[str, list[Any]]:
    """Every spec's requests on every set, keyed ``SET SPEC``."""
    found: dict[str, list[Any]] = {}
    with tempfile.TemporaryDirectory() as base:
        for tasks, (limit, _) in SETS.items():
            responder = CodeResponder(load_taskset(tasks)) if tasks == "coding" else None
            for spec in specs_of(tasks):
                found[f"{tasks} {spec}"] = sent(
                    spec, tasks, limit, responder or default_responder, Path(base)
                )
    return found


if __name__ == "__main__":
    FIXTURE.write_text(json.dumps(every_request(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {FIXTURE}")
