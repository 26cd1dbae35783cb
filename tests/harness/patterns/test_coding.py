"""The patterns on coding tasks: direct, reflection (self-review) and reflexion's two checks.

The check here is a stand-in for the sandbox: it passes code that holds ``# right`` and
fails the rest, so each test says exactly which attempt the check accepts.
"""

import asyncio
from dataclasses import dataclass, field

import pytest

from loopbench.harness.arms import parse_arm
from loopbench.harness.models.counting import CountingClient
from loopbench.harness.models.scripted import ScriptedModel
from loopbench.harness.patterns.base import RunContext
from loopbench.harness.patterns.coding import CODE_SYSTEM, failure_report, suite_from_tests
from loopbench.harness.tools import ToolSet
from loopbench.harness.trace import Trace
from loopbench.sandbox.suite_result import Failure, SuiteResult

SPEC = "Write add(a, b) returning a + b."
WRONG = "```python\ndef add(a, b):\n    return a - b\n```"
RIGHT = "```python\ndef add(a, b):\n    return a + b  # right\n```"
FAILED = SuiteResult(
    status="failed",
    passed=1,
    failed=1,
    first_failure=Failure("test_adds", "candidate(2, 3)", "5", "-1"),
    seconds=0.01,
    detail="",
)
PASSED = SuiteResult(
    status="passed", passed=2, failed=0, first_failure=None, seconds=0.01, detail=""
)


@dataclass
class StandInCheck:
    entry_point: str = "add"
    ran: list[tuple[str, str]] = field(default_factory=list)

    async def feedback(self, reply: str) -> SuiteResult:
        self.ran.append(("feedback", reply))
        return PASSED if "# right" in reply else FAILED

    async def own_tests(self, reply: str, suite: str) -> SuiteResult:
        self.ran.append((suite, reply))
        # The model's own tests decide: a suite that expects subtraction passes wrong code.
        if "== -1" in suite:
            return PASSED if "a - b" in reply else FAILED
        return PASSED if "# right" in reply else FAILED


def run(spec, replies, check=None):
    check = check or StandInCheck()
    model = ScriptedModel(replies)
    trace = Trace()
    ctx = RunContext(SPEC, CountingClient(model, trace), "m", ToolSet([]), trace, code=check)
    outcome = asyncio.run(parse_arm(spec).build().run(ctx))
    return outcome, model, ctx, check


def events(ctx, kind):
    return [event.data() for event in ctx.trace.events if event.kind == kind]


def test_direct_on_code_asks_the_shared_first_attempt():
    outcome, model, _, check = run("direct", [RIGHT])
    assert outcome.status == "answered" and outcome.answer == RIGHT.strip()
    assert model.requests[0].system == CODE_SYSTEM
    assert model.requests[0].max_output_tokens == 1024
    assert check.ran == []  # direct runs no check


def test_every_code_arm_sends_the_identical_first_request():
    firsts = []
    for spec, replies in [
        ("direct", [WRONG]),
        ("reflexion:check=tests", [WRONG, RIGHT]),
        ("reflexion:check=self_tests", [WRONG, "assert add(1, 1) == 2", RIGHT]),
        ("reflection", [WRONG, '{"needs_refinement": false, "critique": ""}']),
    ]:
        _, model, _, _ = run(spec, replies)
        firsts.append(model.requests[0])
    assert all(request == firsts[0] for request in firsts)


def test_feedback_loop_shows_the_first_failing_test_and_stops_on_a_pass():
    outcome, model, ctx, check = run("reflexion:check=tests,attempts=3", [WRONG, RIGHT])
    assert outcome.answer == RIGHT.strip()
    assert len(model.requests) == 2
    shown = model.requests[1].messages[-1].content
    assert "test_adds" in shown and "candidate(2, 3)" in shown and "expected: 5" in shown
    assert "actual: -1" in shown
    assert [suite for suite, _ in check.ran] == ["feedback", "feedback"]
    assert [(a["role"], a["accepted"]) for a in events(ctx, "answer")] == [
        ("attempt", False),
        ("attempt", True),
    ]
    assert outcome.metrics == {"attempts": 2.0, "check_passed": 1.0}


def test_feedback_loop_never_asks_again_once_the_check_passes():
    outcome, model, _, _ = run("reflexion:check=tests,attempts=3", [RIGHT])
    assert len(model.requests) == 1 and outcome.metrics["attempts"] == 1.0


def test_feedback_loop_stops_after_its_attempts_with_the_last_answer():
    outcome, model, _, _ = run("reflexion:check=tests,attempts=3", [WRONG, WRONG, WRONG])
    assert outcome.status == "answered" and len(model.requests) == 3
    assert outcome.metrics == {"attempts": 3.0, "check_passed": 0.0}


def test_feedback_loop_keeps_the_last_answer_when_max_steps_runs_out():
    outcome, model, _, _ = run("reflexion:check=tests,attempts=5,max_steps=2", [WRONG, WRONG])
    assert outcome.status == "answered" and len(model.requests) == 2


def test_self_tests_are_written_from_the_specification_alone():
    outcome, model, ctx, check = run(
        "reflexion:check=self_tests", [WRONG, "```python\nassert add(2, 3) == 5\n```", RIGHT]
    )
    tests_request = model.requests[1]
    assert len(tests_request.messages) == 1  # its own conversation: it never sees the code
    assert SPEC in tests_request.messages[0].content
    assert outcome.answer == RIGHT.strip()
    assert events(ctx, "own_tests")[0]["tests"] == 1
    assert "add = candidate" in check.ran[0][0]


def test_wrong_self_tests_let_wrong_code_through():
    """Reflexion's loss on MBPP: the model's own tests expect the wrong thing."""
    outcome, model, ctx, _ = run(
        "reflexion:check=self_tests", [WRONG, "```python\nassert add(2, 3) == -1\n```"]
    )
    assert outcome.answer == WRONG.strip() and len(model.requests) == 2
    assert events(ctx, "answer")[0]["accepted"] is True


def test_self_tests_without_a_test_accept_the_first_attempt():
    outcome, _model, ctx, check = run(
        "reflexion:check=self_tests", [WRONG, "I cannot write tests."]
    )
    assert outcome.answer == WRONG.strip() and check.ran == []
    assert events(ctx, "answer")[0]["accepted"] is True
    assert outcome.metrics["own_tests"] == 0.0


def test_reflection_reviews_code_without_running_a_test():
    critique = '{"needs_refinement": true, "critique": "it subtracts"}'
    outcome, model, _ctx, check = run(
        "reflection:cycles=2,output=json",
        [WRONG, critique, RIGHT, '{"needs_refinement": false, "critique": ""}'],
    )
    assert check.ran == []
    assert "Review the code above" in model.requests[1].messages[-1].content
    assert model.requests[2].max_output_tokens == 1024
    assert "```python" in model.requests[2].system
    assert outcome.answer == RIGHT.strip()


@pytest.mark.parametrize(
    ("spec", "code"),
    [("reflexion:check=evidence", True), ("reflexion:check=tests", False)],
)
def test_a_check_that_does_not_fit_the_task_set_is_refused(spec, code):
    model = ScriptedModel([])
    trace = Trace()
    check = StandInCheck() if code else None
    ctx = RunContext(SPEC, CountingClient(model, trace), "m", ToolSet([]), trace, code=check)
    outcome = asyncio.run(parse_arm(spec).build().run(ctx))
    assert outcome.status == "refused" and model.requests == []


def test_self_tests_need_two_calls():
    assert parse_arm("reflexion:check=self_tests").build().call_floor().calls == 2
    assert parse_arm("reflexion:check=tests").build().call_floor().calls == 1


def test_a_failure_report_names_what_the_model_needs():
    assert "test_adds" in failure_report(FAILED) and "1 passed, 1 failed" in failure_report(FAILED)
    broken = SuiteResult(
        status="syntax_error",
        passed=0,
        failed=0,
        first_failure=None,
        seconds=0.0,
        detail="line 2: invalid syntax",
    )
    assert "could not be run" in failure_report(broken) and "line 2" in failure_report(broken)


def test_own_tests_become_one_test_per_assert_with_set_up_kept():
    reply = (
        "Here are my tests:\n```python\nimport math\n\nc = add(0, 0)\n"
        "assert add(1, 2) == 3\nassert add(-1, 1) == c\n\n"
        "def test_big():\n    assert add(10**6, 1) == 1000001\n```"
    )
    suite, tests = suite_from_tests(reply, "add")
    assert tests == 3
    namespace: dict[str, object] = {}
    exec(compile(suite, "suite", "exec"), namespace)
    names = [n for n in namespace if n.startswith("test_")]
    assert names == ["test_own_1", "test_own_2", "test_big"]
    for name in names:
        namespace[name](lambda a, b: a + b)  # right code passes every test
    with pytest.raises(AssertionError):
        namespace["test_own_1"](lambda a, b: a - b)


def test_own_tests_drop_a_solution_the_model_wrote_beside_them():
    reply = "```python\ndef add(a, b):\n    return 0\n\nassert add(1, 2) == 3\n```"
    suite, tests = suite_from_tests(reply, "add")
    assert tests == 1 and "return 0" not in suite


def test_a_reply_with_no_code_holds_no_tests():
    assert suite_from_tests("No tests today.", "add") == ("", 0)


def test_an_unfinished_rewrite_leaves_the_last_code_standing():
    from loopbench.harness.models.scripted import text_reply

    critique = '{"needs_refinement": true, "critique": "it adds"}'
    cut_off = text_reply("```python\ndef add(a, b):\n    return", finish_reason="length")
    outcome, _model, ctx, _check = run(
        "reflection:cycles=1,output=json", [RIGHT, critique, cut_off]
    )
    assert outcome.status == "answered" and outcome.answer == RIGHT.strip()
    assert events(ctx, "revision_unfinished")[0]["status"] == "truncated"


def test_own_tests_in_a_loop_or_a_raises_block_are_tests():
    reply = (
        "```python\nimport pytest\n\ncases = [(1, 2, 3), (2, 2, 4)]\n"
        "for a, b, total in cases:\n    assert add(a, b) == total\n\n"
        "with pytest.raises(TypeError):\n    add('a', 1)\n```"
    )
    suite, tests = suite_from_tests(reply, "add")
    assert tests == 2
    assert "import loopbench_suite as pytest" in suite and "import pytest\n" not in suite
