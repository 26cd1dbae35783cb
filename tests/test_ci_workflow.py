"""docs/ci.md's workflow, run as written: its ``run:`` steps and the baseline's recording
commands go through bash as GitHub Actions runs them, with only the endpoint changed (a
fake OpenAI-compatible server on loopback) and the key (no secret here)."""

import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import xmlschema
import yaml

from loopbench.harness.fakes.fake_server import FakeServer, Reply, question_index
from loopbench.harness.models.cache import CACHE_FILE
from tests.depot_answers import RIGHT

ROOT = Path(__file__).parents[1]
DOC = (ROOT / "docs" / "ci.md").read_text()
SCHEMA = xmlschema.XMLSchema(ROOT / "tests" / "fixtures" / "junit" / "junit.xsd")
BIN = Path(sys.executable).parent  # where this environment's `loopbench` is
# What `shell: bash` runs a step with on Actions.
BASH = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"]


def answering(right: bool):
    """Every depot question answered right (or not), in each arm's format."""

    def responder(body):
        messages = body["messages"]
        question = messages[question_index(messages)]["content"].removeprefix("Question: ")
        answer = RIGHT[question] if right else "no idea"
        if "Action:" in messages[0]["content"]:  # the text loop's format
            return Reply(f"Thought: I know this.\nAction: finish[{answer}]")
        return Reply(f"Answer: {answer}")

    return responder


def blocks(language: str, after: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.split(after, 1)[1], re.DOTALL)


WORKFLOW = yaml.safe_load(blocks("yaml", after="## The workflow")[0])
[JOB] = WORKFLOW["jobs"].values()
[RECORDING] = blocks("sh", after="## Record the baseline")


def uses(action: str) -> list[dict]:
    return [s for s in JOB["steps"] if s.get("uses", "").startswith(action + "@")]


@dataclass
class Step:
    name: str
    returncode: int
    stderr: str


def environment(step: dict, endpoint: str, summary: Path | None = None) -> dict[str, str]:
    """This machine's environment less anything naming an endpoint, key or Actions, then
    the workflow's env with the endpoint and the key changed, and nothing else."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("LOOPBENCH_", "OPENAI_", "GITHUB"))
    }
    for name, value in {
        **WORKFLOW.get("env", {}),
        **JOB.get("env", {}),
        **step.get("env", {}),
    }.items():
        if name == "LOOPBENCH_BASE_URL":
            value = endpoint
        elif "${{ secrets." in value:
            value = "no-secret-in-tests"
        assert "${{" not in value, f"{name}: an expression the test cannot evaluate"
        env[name] = value
    env["PATH"] = f"{BIN}{os.pathsep}{env['PATH']}"
    if summary is not None:
        env["GITHUB_STEP_SUMMARY"] = str(summary)
    return env


def bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*BASH, script], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def run_job(workspace: Path, endpoint: str) -> list[Step]:
    """Every ``run:`` step in order, as Actions would: after a failed step only those whose
    ``if`` runs after failures. The install step is left out: this environment is it."""
    summary = workspace / "step-summary.md"
    ran: list[Step] = []
    failed = False
    for step in JOB["steps"]:
        condition = str(step.get("if", ""))
        if failed and not re.search(r"always\(\)|!cancelled\(\)|failure\(\)", condition):
            continue
        if "run" not in step:
            continue
        assert "${{" not in step["run"], f"{step.get('name')}: run it as written"
        if step["run"].startswith("pip install"):
            continue
        done = bash(step["run"], workspace, environment(step, endpoint, summary))
        ran.append(Step(step.get("name", step["run"]), done.returncode, done.stderr))
        failed = failed or done.returncode != 0
    return ran


def record_baseline(base: Path, endpoint: str) -> None:
    base.mkdir(parents=True)
    done = bash(RECORDING, base, environment({}, endpoint))
    assert done.returncode == 0, done.stderr


def junit_cases(workspace: Path) -> dict[str, str]:
    """The uploaded JUnit file, validated: each case's name and outcome."""
    [upload] = uses("actions/upload-artifact")
    document = (workspace / upload["with"]["path"]).read_bytes()
    SCHEMA.validate(document.decode("utf-8"))
    return {
        case.get("name"): next((c.tag for c in case if c.tag != "system-out"), "passed")
        for case in ET.fromstring(document).iter("testcase")
    }


def compare_step(ran: list[Step]) -> Step:
    [gate] = [s for s in ran if s.name == "Compare with the baseline"]
    return gate


def test_the_workflow_is_a_pull_request_gate_with_a_report_uploaded_after_a_failure():
    on = WORKFLOW.get("on", WORKFLOW.get(True))  # YAML 1.1 reads a bare `on` as true
    assert "pull_request" in on
    [install] = [s for s in JOB["steps"] if s.get("run", "").startswith("pip install")]
    first = next(s for s in JOB["steps"] if s.get("run", "").startswith("loopbench "))
    assert JOB["steps"].index(install) < JOB["steps"].index(first)
    [upload] = uses("actions/upload-artifact")
    assert upload["if"] == "${{ !cancelled() }}"
    [base] = [s for s in uses("actions/checkout") if "with" in s]
    assert base["with"]["ref"] == "${{ github.base_ref }}"
    assert WORKFLOW["defaults"]["run"]["shell"] == "bash"


def test_an_unchanged_pattern_replays_everything_and_a_worse_one_fails_the_gate(tmp_path):
    [base_checkout] = [s for s in uses("actions/checkout") if "with" in s]
    good = tmp_path / "unchanged"
    with FakeServer(answering(right=True)) as recorder:
        record_baseline(good / base_checkout["with"]["path"], recorder.base_url)
    assert recorder.served.requests > 0  # the baseline was paid for once

    worse = tmp_path / "worse"
    shutil.copytree(good, worse)  # the same base branch, before any run of the pull request
    with FakeServer(answering(right=True)) as endpoint:
        ran = run_job(good, endpoint.base_url)
    assert [s.returncode for s in ran] == [0, 0], [s.stderr for s in ran]
    assert endpoint.served.requests == 0  # every response replayed from the cache
    cases = junit_cases(good)
    assert len(cases) == 4 and set(cases.values()) == {"passed"}
    summary = (good / "step-summary.md").read_text()
    assert summary.startswith("### loopbench compare\n\n| arm |") and "| cot |" in summary

    # A pattern that changed sends requests the cache has not seen (here: every one),
    # and this endpoint answers them wrong.
    for stored in worse.rglob(CACHE_FILE):
        stored.unlink()
    with FakeServer(answering(right=False)) as endpoint:
        ran = run_job(worse, endpoint.base_url)
    assert endpoint.served.requests > 0
    gate = compare_step(ran)
    assert gate.returncode == 1 and "REGRESSED: cot" in gate.stderr
    cases = junit_cases(worse)  # written, and uploaded: `if: !cancelled()`
    assert cases["accuracy of cot"] == cases["accuracy of react_text"] == "failure"
    assert cases["cost per correct of cot"] == "skipped"  # nothing correct: no cost per correct
    assert "**REGRESSED**" in (worse / "step-summary.md").read_text()
