"""The code-test grader: runs are graded on the held-out suite only, results are kept by
(code, suite), and edits are counted on the code, not its layout."""

import asyncio
from pathlib import Path

from loopbench.graders.builtin import edit_measures
from loopbench.graders.code_tests import CodeGrader, SuiteCheck, describe, no_code
from loopbench.sandbox.suite_result import Failure, SuiteResult
from loopbench.tasks.loading import load_taskset

WRONG = Path(__file__).parents[1] / "fixtures" / "coding_wrong"
CODING = load_taskset("coding")
CRON = next(t for t in CODING.tasks if t.id == "cron_field_matcher")


class CountingSandbox:
    """Passes code holding 'right'; counts what it was asked to run."""

    def __init__(self):
        self.ran = []

    async def run(self, code, suite):
        self.ran.append((code, suite.name))
        status = "passed" if "right" in code else "failed"
        return SuiteResult(status, 1, 0, None, 0.0, "")


def test_a_run_is_graded_on_the_held_out_suite_not_the_feedback_one():
    """The chapter's false accept: a cron matcher that passes feedback and fails held-out."""
    from loopbench.sandbox.run import Sandbox

    grader = CodeGrader(Sandbox())
    code = (WRONG / "cron_field_matcher" / "false_accept.py").read_text()
    check = SuiteCheck(grader, CRON.suites)

    async def main():
        verdict, result = await grader.grade(CRON.suites, code)
        return verdict, result, await check.feedback(code)

    verdict, held_out, fed_back = asyncio.run(main())
    assert fed_back.status == "passed"
    assert not verdict.correct and held_out.status == "failed"
    assert verdict.reason.startswith("held-out suite failed")
    assert held_out.first_failure.test in verdict.reason


def test_the_same_code_on_the_same_suite_runs_once():
    sandbox = CountingSandbox()
    grader = CodeGrader(sandbox)
    check = SuiteCheck(grader, CRON.suites)
    reply = "```python\ndef cron_matches(field, value, kind):\n    return 'right'\n```"

    async def main():
        await asyncio.gather(*(grader.grade(CRON.suites, reply) for _ in range(3)))
        await check.feedback(reply)
        await check.own_tests(reply, "def test_mine(candidate):\n    assert candidate\n")

    asyncio.run(main())
    assert sorted(name for _, name in sandbox.ran) == ["feedback", "heldout", "self_tests"]


def test_a_reply_without_code_is_not_sent_to_the_sandbox():
    sandbox = CountingSandbox()
    verdict, result = asyncio.run(CodeGrader(sandbox).grade(CRON.suites, "I am not sure."))
    assert not verdict.correct and result == no_code() and sandbox.ran == []
    assert "no Python code" in verdict.reason


def test_a_failure_is_described_with_its_test_input_and_values():
    result = SuiteResult(
        "failed", 3, 1, Failure("test_ranges", 'candidate("5-7", 7)', "True", "False"), 0.1, ""
    )
    assert describe(result, "held-out") == (
        "held-out suite failed (3 passed, 1 failed); first failure test_ranges: "
        'candidate("5-7", 7) gave False, expected True'
    )


def test_edits_are_counted_on_the_code_not_its_comments_or_layout():
    first = "def cron_matches(f, v, k):\n    return True\n"
    comment_only = "def cron_matches(f, v, k):\n\n    return True  # checked\n"
    changed = "def cron_matches(f, v, k):\n    return False\n"
    measures = edit_measures(CRON, [first, comment_only, changed], [True, True, True])
    assert measures == {"code_edits": 1.0, "edits_same_result": 1.0}
    measures = edit_measures(CRON, [first, changed], [False, True])
    assert measures == {"code_edits": 1.0, "edits_same_result": 0.0}


def test_edit_measures_are_for_coding_tasks_only():
    depot_task = load_taskset("depot").tasks[0]
    assert edit_measures(depot_task, ["84", "85"], [True, False]) == {}
