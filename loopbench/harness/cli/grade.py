"""``loopbench grade``: every grader's self-test, one answer graded by any registered grader
(the typed exact grader by default), or a file of code run against a coding task's suite in
the sandbox."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path

import click

from loopbench.graders import corpus_check
from loopbench.graders.code_tests import CodeGrader, feedback, heldout
from loopbench.graders.exact import Grade
from loopbench.graders.registry import GRADERS, parse_grader_spec
from loopbench.graders.selftest import CaseResult, as_task, grade_one, read_expected, run_self_test
from loopbench.harness.cli.bundles import bundled
from loopbench.harness.cli.errors import Command
from loopbench.harness.cli.regrade import Regrade, regrade_options, run_regrade
from loopbench.harness.errors import BadInput
from loopbench.harness.files import read_text
from loopbench.sandbox.limits import Limits
from loopbench.sandbox.printable import printable
from loopbench.sandbox.run import Sandbox
from loopbench.tasks.loading import load_taskset
from loopbench.tasks.taskset import CodeTask


@dataclass(frozen=True)
class OneAnswer:
    """``--answer``, ``--expected`` and ``--grader``: one answer graded."""

    answer: str | None
    expected: str | None
    grader_spec: str


@dataclass(frozen=True)
class SuiteRun:
    """``--task``, ``--code-file`` and ``--suite``: code run against a coding task's suite."""

    task_spec: str | None
    code_file: Path | None
    suite: str


@click.command("grade", cls=Command)
@click.option(
    "--self-test",
    is_flag=True,
    help="Run every grader's own cases, then print how the graders agree with the labelled "
    "corpus of replies (loopbench/graders/corpus/); exit 1 if a grader's own case fails.",
)
@click.option("--answer", help="An answer to grade.")
@click.option(
    "--expected",
    help="What the grader expects, as a task's expected in JSON, e.g. '{\"numbers\": [84]}'.",
)
@click.option(
    "--grader",
    "grader_spec",
    default="exact",
    show_default=True,
    help="The grader of --answer, with its options as NAME:KEY=VALUE, e.g. number:tolerance=0.01.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help='json prints {"correct": ..., "reason": ...} (and "score" when the grader gives one).',
)
@click.option(
    "--task",
    "task_spec",
    help="A coding task as SET/ID, e.g. coding/roman_numerals or humaneval/HumanEval_12 "
    "(SET may be a folder): run --code-file against its suite.",
)
@click.option(
    "--code-file",
    type=click.Path(path_type=Path),
    help="A file of code (or a whole model reply) to run against --task's suite.",
)
@click.option(
    "--suite",
    type=click.Choice(["feedback", "heldout"]),
    default="heldout",
    show_default=True,
    help="Which of the task's suites to run.",
)
@regrade_options
@bundled("code", SuiteRun)
@bundled("again", Regrade)
@bundled("one", OneAnswer)
def grade_command(
    self_test: bool, one: OneAnswer, fmt: str, code: SuiteRun, again: Regrade
) -> None:
    """Grade an answer with a registered grader (the typed exact grader by default), run
    every grader's self-test, or run code against a coding task's suite in the sandbox.

    Grading exits 0 whatever the verdict (it is printed); 2 on bad input. The self-test
    exits 1 when a case fails: the grader itself has regressed. It then grades the labelled
    corpus of replies and prints the agreement per grader, for information.

    ``--regrade RESULTS`` grades again the runs whose judge gave no verdict (docs/judge.md).
    """
    if again.regrade is not None:
        run_regrade(again)
        return
    if code.task_spec is not None or code.code_file is not None:
        if code.task_spec is None or code.code_file is None:
            raise BadInput("give both --task and --code-file")
        _grade_code(code.task_spec, code.code_file, code.suite, fmt)
        return
    if self_test:
        results = run_self_test()
        for result in results:
            _show_case(result)
        results += _corpus_results()
        failed = sum(not result.ok for result in results)
        click.echo(f"{len(results) - failed} passed, {failed} failed")
        raise SystemExit(1 if failed else 0)
    answer, expected = one.answer, one.expected
    if answer is None or expected is None:
        raise BadInput("give --self-test, --regrade RESULTS, or both --answer and --expected")
    name, options = parse_grader_spec(one.grader_spec)
    info = GRADERS.lookup(name)
    if info.runs_code:
        raise BadInput(f"--grader {name} runs code: give --task SET/ID and --code-file instead")
    task = as_task(info, read_expected(info, name, expected))
    verdict = grade_one(info, task, answer, options)
    _show(verdict, fmt)


def _show_case(result: CaseResult) -> None:
    mark = "ok  " if result.ok else "FAIL"
    case = result.case
    want = "correct" if case.correct else "wrong"
    said = f"{result.grader:6} {case.answer!r:45} want {want:7}"
    click.echo(printable(f"{mark} {said} got: {result.grade.reason}"))


def _corpus_results() -> list[CaseResult]:
    """The labelled corpus graded (loopbench/graders/corpus_check.py), its agreement printed; its
    cases count in the self-test's verdict only under ``CORPUS_MUST_AGREE``."""
    checked = corpus_check.check(corpus_check.load_replies())
    restyled = corpus_check.check_restyled(corpus_check.load_restyled())
    every = checked + [one for answer in restyled for one in answer.checked]
    for line in corpus_check.agreement_lines(checked, restyled):
        click.echo(printable(line))
    # guard: self-test-fails-corpus-only
    if not corpus_check.CORPUS_MUST_AGREE:
        return []
    for one in every:
        if not one.agrees:
            _show_case(one.result)
    return [one.result for one in every]


def _show(verdict: Grade, fmt: str) -> None:
    scored = {} if verdict.score is None else {"score": verdict.score}
    if fmt == "json":
        click.echo(json.dumps({"correct": verdict.correct, "reason": verdict.reason, **scored}))
        return
    score = "" if verdict.score is None else f" (score {verdict.score:.2f})"
    said = f"{'correct' if verdict.correct else 'wrong'}: {verdict.reason}{score}"
    click.echo(printable(said))  # the reason may quote the answer: its escapes as text


def _grade_code(task_spec: str, code_file: Path, which: str, fmt: str) -> None:
    """Run the code in ``code_file`` against one suite of a coding task and print the result."""
    task, timeout_s = _coding_task(task_spec)
    reply = read_text(code_file, BadInput, "a file of Python code")
    sandbox = Sandbox(Limits(timeout_s=timeout_s))
    if sandbox.warning:
        click.echo(f"warning: {sandbox.warning}", err=True)
    chosen = feedback(task.suites) if which == "feedback" else heldout(task.suites)
    result = asyncio.run(CodeGrader(sandbox).run(reply, chosen))
    if fmt == "json":
        click.echo(json.dumps(result.to_json()))
        return
    click.echo(f"{result.status}: {result.passed} passed, {result.failed} failed")
    if result.first_failure is not None:  # what the candidate wrote: its escapes as text
        failure = result.first_failure
        click.echo(printable(f"first failure {failure.test}: {failure.input}"))
        click.echo(printable(f"  expected {failure.expected}\n  actual   {failure.actual}"))
    elif result.detail:
        click.echo(printable(result.detail))
    if result.output_cut:
        click.echo(f"output cut after {result.output_bytes} bytes (the output limit)")


def _coding_task(task_spec: str) -> tuple[CodeTask, float]:
    """The task ``SET/ID`` names, and its set's suite timeout."""
    set_name, _, task_id = task_spec.rpartition("/")
    if not set_name or not task_id:
        raise BadInput(
            f"--task {task_spec!r}: write SET/ID, e.g. coding/roman_numerals or "
            "humaneval/HumanEval_12"
        )
    taskset = load_taskset(set_name)
    if not taskset.is_code:
        raise BadInput(f"--task {task_spec!r}: {set_name} is not a coding task set")
    found = next((t for t in taskset.tasks if t.id == task_id), None)
    if not isinstance(found, CodeTask):
        known = ", ".join(t.id for t in taskset.tasks[:5])
        raise BadInput(f"--task {task_spec!r}: no task {task_id!r} in {set_name} (e.g. {known})")
    return found, taskset.timeout_s
