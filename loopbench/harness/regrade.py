"""``loopbench grade --regrade RESULTS``: the runs whose judge gave no verdict (a record's
``grade_status``) graded again, with the folder's grader and a judge endpoint opened like
a run's.

Each run graded again is appended to runs.jsonl as a record superseding the old one
(readers leave the old one out, as for ``run --retry-errors``), its trace carried over
under the new run_id with a ``grading`` event saying so. What the run did is untouched:
its status, tokens and cost are the old record's; only its verdict changes, and the
judge's tokens and cost are the earlier attempts' and this one's together. A judge that
fails again leaves the run still marked, to be regraded later.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from loopbench.graders.base import JudgeEndpoint, JudgeFailed
from loopbench.harness.config import RunConfig
from loopbench.harness.endpoints import connection
from loopbench.harness.errors import BadInput
from loopbench.harness.events import GradingEvent
from loopbench.harness.grading import Grading
from loopbench.harness.judge_endpoint import JUDGE_ATTEMPT, open_judge, resolve_judge
from loopbench.harness.models.cache import ResponseCache
from loopbench.harness.models.endpoint import protecting
from loopbench.harness.models.types import Usage
from loopbench.harness.results.identity import describe_identity, resolved
from loopbench.harness.results.prices import PriceTable, load_prices
from loopbench.harness.results.reading import EXPERIMENT, read_records
from loopbench.harness.results.records import RunRecord
from loopbench.harness.results.store import RecordWriter, ResultsFolder, iter_traces
from loopbench.harness.runner import VERSION, judge_fields
from loopbench.harness.trace import MAX_TEXT, cut
from loopbench.tasks.loading import load_taskset
from loopbench.tasks.taskset import AnyTask, TaskSet


class RegradeError(BadInput):
    """A folder that cannot be regraded as asked: no results there, another task set, or a
    judge other than the one its runs were graded with."""


@dataclass(frozen=True)
class Regraded:
    """What a regrade did: runs graded again, those whose judge failed again, and those
    left as they were (their task gone or changed since, or no answer kept)."""

    regraded: int = 0
    still_failing: int = 0
    left: tuple[str, ...] = ()


def waiting(folder: Path) -> list[RunRecord]:
    """The folder's runs whose judge gave no verdict (superseded records left out)."""
    return [record for record in read_records(folder) if record.grade_status is not None]


def folder_meta(folder: Path) -> dict[str, Any]:
    """The folder's experiment.json, or ``RegradeError`` saying it holds no results."""
    path = folder / EXPERIMENT
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RegradeError(
            f"{path}: cannot be read ({exc}); give a folder `loopbench run` wrote"
        ) from None
    if not isinstance(meta, dict) or not isinstance(meta.get("grader"), dict):
        raise RegradeError(f"{path}: names no grader; give a folder `loopbench run` wrote")
    return meta


def judge_settings(meta: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """The judge's settings for a regrade: those ``given`` (``--judge-model``,
    ``--judge-base-url``), the model by default the one the folder's grader recorded."""
    identity = meta["grader"].get("identity") or {}
    model = given.get("model") or identity.get("judge_model") or identity.get("model")
    return {**given, **({"model": model} if model else {})}


def judge_seed(meta: dict[str, Any]) -> int | None:
    """The seed the folder's judge was sent (its recorded sampling), else the runs'."""
    identity = meta["grader"].get("identity") or {}
    for sampling in (
        identity.get("judge_sampling"),
        identity.get("sampling"),
        meta.get("sampling"),
    ):
        if isinstance(sampling, dict) and isinstance(sampling.get("seed"), int):
            seed: int = sampling["seed"]
            return seed
    return None


def folder_taskset(meta: dict[str, Any], spec: str | None) -> TaskSet:
    """The task set the folder's runs were made on (``spec``: where it is, when its name
    alone does not find it), graded by the folder's grader."""
    name = meta.get("task_set")
    taskset = load_taskset(spec or str(name))
    # guard: regrade-same-task-set
    if taskset.name != name:
        raise RegradeError(
            f"--tasks {spec or name!r} is the task set {taskset.name!r}; the folder's runs "
            f"were made on {name!r}: give its folder or data file with --tasks"
        )
    grader = resolved(meta["grader"])
    return replace(taskset, grader=grader["name"], grader_options=grader["options"])


def check_identity(grading: Grading, meta: dict[str, Any]) -> None:
    """Refuse a judge that grades otherwise than the one the folder's runs were graded with."""
    was, now = meta["grader"].get("identity") or {}, grading.identity()
    # guard: regrade-same-grader-identity
    if was != now:
        raise RegradeError(
            f"the folder's runs were graded by another judge: {describe_identity(was, now)}; "
            "give the --judge-model (and the prompt files) they were graded with"
        )


async def regrade(
    folder: Path, config: RunConfig, tasks: str | None, say: Callable[[str], None]
) -> Regraded:
    """Grade again the runs of ``folder`` whose judge failed, with the judge ``config``
    names (``[judge]``: its model by default the folder's), as the module says."""
    meta = folder_meta(folder)
    taskset = folder_taskset(meta, tasks)
    endpoint = resolve_judge(config)
    prices = load_prices(Path(config.prices) if config.prices else None)
    cache = ResponseCache(Path(config.cache), say) if config.cache is not None else None
    with ResultsFolder.open(folder, {}) as opened, contextlib.ExitStack() as held:
        if cache is not None:
            held.callback(cache.close)
        async with contextlib.AsyncExitStack() as stack:
            judge = None
            if endpoint is not None:
                held.enter_context(protecting([endpoint]))
                how = connection(config, config.concurrency)
                judge = await open_judge(stack, endpoint, how, judge_seed(meta), cache)
            grading = Grading(taskset, judge=judge)
            check_identity(grading, meta)
            return await _regrade_runs(opened.path, taskset, grading, Judged(judge, prices))


@dataclass(frozen=True)
class Judged:
    """The judge a regrade asks, and the prices its calls are priced at."""

    endpoint: JudgeEndpoint | None
    prices: PriceTable


async def _regrade_runs(
    folder: Path, taskset: TaskSet, grading: Grading, judged: Judged
) -> Regraded:
    tasks: dict[str, AnyTask] = {task.id: task for task in taskset.tasks}
    runs = waiting(folder)
    traces = {line["run_id"]: line["events"] for line in iter_traces(folder)}
    regraded, failing, left = 0, 0, []
    with RecordWriter(folder) as writer:
        for record in runs:
            task = tasks.get(record.task_id)
            # guard: regrade-leaves-changed-task
            if task is None or task.fingerprint != record.task_fingerprint or not record.answer:
                left.append(record.task_id)
                continue
            earlier = traces.get(record.run_id, [])
            # The judge asked afresh, not its unreadable reply replayed from the cache.
            token = JUDGE_ATTEMPT.set(sum(e.get("kind") == "grading" for e in earlier))
            try:
                new, event = await _graded_again(record, task, grading, judged)
            finally:
                JUDGE_ATTEMPT.reset(token)
            events = [*earlier, event]
            writer.append(new, events)
            regraded += new.grade_status is None
            failing += new.grade_status is not None
    return Regraded(regraded, failing, tuple(left))


async def _graded_again(
    record: RunRecord, task: AnyTask, grading: Grading, judged: Judged
) -> tuple[RunRecord, dict[str, Any]]:
    """``record`` graded again, superseding it, and the trace event saying so."""
    assert record.answer is not None
    update: dict[str, Any]
    try:
        verdict = await grading.grade(task, record.answer)
    except JudgeFailed as exc:
        used, status = exc.usage, exc.kind
        kind = "judge_api_error" if exc.kind == "judge_api_error" else "judge_unreadable"
        update = {"grade_status": kind, "grade_reason": f"not graded: {kind}: {exc}"}
        error: str | None = str(exc)
    else:
        used, status, error = verdict.usage or Usage(), "regraded", None
        canonical = cut(grading.canonical(task)(record.answer), MAX_TEXT)
        update = {
            "grade_status": None,
            "correct": verdict.correct,
            "grade_reason": verdict.reason,
            "score": verdict.score,
            "canonical": canonical,
        }
    fields = judge_fields(used, judged.endpoint, judged.prices)
    update |= {
        "run_id": uuid.uuid4().hex,
        "supersedes": record.run_id,
        "loopbench_version": VERSION,
        "judge_tokens_in": (record.judge_tokens_in or 0) + used.input_tokens,
        "judge_tokens_out": (record.judge_tokens_out or 0) + used.output_tokens,
        "judge_cost_usd": _added(record, fields["judge_cost_usd"]),
    }
    event = GradingEvent(
        status=status,
        error=error,
        judge_tokens_in=used.input_tokens,
        judge_tokens_out=used.output_tokens,
    )
    return record.model_copy(update=update), event.on_disk(MAX_TEXT)


def _added(record: RunRecord, now: float | None) -> float | None:
    """The judge's cost on the run so far and ``now``'s: null when either is unpriced."""
    earlier_unpriced = record.judge_cost_usd is None and (record.judge_tokens_in or 0) > 0
    if now is None or earlier_unpriced:
        return None
    return (record.judge_cost_usd or 0.0) + now
