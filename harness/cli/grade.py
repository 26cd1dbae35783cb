"""``loopbench grade``: the typed exact grader's self-test, or one answer graded."""

from __future__ import annotations

import json

import click
from pydantic import ValidationError

from graders.exact import grade
from graders.selftest import run_self_test
from harness.cli.errors import BadInput
from harness.files import describe_errors
from tasks.taskset import Expected


@click.command("grade")
@click.option("--self-test", is_flag=True, help="Run the grader's own cases; exit 1 if any fails.")
@click.option("--answer", help="An answer to grade.")
@click.option("--expected", help="The expectation as JSON, e.g. '{\"numbers\": [84]}'.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help='json prints {"correct": ..., "reason": ...} for scripts.',
)
def grade_command(self_test: bool, answer: str | None, expected: str | None, fmt: str) -> None:
    """Grade an answer with the typed exact grader, or run its self-test.

    Grading exits 0 whatever the verdict (it is printed); 2 on a bad expectation. The
    self-test exits 1 when a case fails: the grader itself has regressed.
    """
    if self_test:
        results = run_self_test()
        for case, verdict, ok in results:
            mark = "ok  " if ok else "FAIL"
            want = "correct" if case.correct else "wrong"
            click.echo(f"{mark} {case.answer!r:45} want {want:7} got: {verdict.reason}")
        failed = sum(not ok for _, _, ok in results)
        click.echo(f"{len(results) - failed} passed, {failed} failed")
        raise SystemExit(1 if failed else 0)
    if answer is None or expected is None:
        raise click.UsageError("give --self-test, or both --answer and --expected")
    example = 'Write e.g. \'{"numbers": [79], "entities": ["Rotterdam"]}\''
    try:
        expectation = Expected.model_validate(json.loads(expected), strict=True)
    except json.JSONDecodeError as exc:
        raise BadInput(f"--expected is not valid JSON ({exc.msg}). {example}") from None
    except ValidationError as exc:
        raise BadInput(f"--expected: {describe_errors(exc, '(whole value)')}. {example}") from None
    except (ValueError, RecursionError):  # a number of over 4300 digits; nesting too deep
        raise BadInput(
            f"--expected holds a number too long or nesting too deep. {example}"
        ) from None
    verdict = grade(answer, expectation.numbers, expectation.entities, expectation.tolerance)
    if fmt == "json":
        click.echo(json.dumps({"correct": verdict.correct, "reason": verdict.reason}))
    else:
        click.echo(f"{'correct' if verdict.correct else 'wrong'}: {verdict.reason}")
