"""The judge grader: what it sends the judge, how it reads the verdict, and how a judge that
fails is a failure of its own, with what its calls took."""

import asyncio
from pathlib import Path

import pytest

from loopbench.graders.base import GraderSetup, JudgeEndpoint, JudgeFailed
from loopbench.graders.judge import MAX_JUDGE_TOKENS, JudgeTask
from loopbench.graders.judge_verdict import MAX_STARTS, Unread, Verdict, read_verdict
from loopbench.graders.registry import GRADERS
from loopbench.harness.errors import BadInput
from loopbench.harness.fakes.fake_server import FakeServer
from loopbench.harness.fakes.judge import ScriptedJudge
from loopbench.harness.models.openai_compat import OpenAICompatClient
from loopbench.harness.models.types import Message, ModelAPIError, ModelResponse, Usage
from loopbench.tasks.loading import load_taskset

ROOT = Path(__file__).parents[2]
SAMPLING = {"temperature": 0, "seed": 7}


class Replies:
    """A judge endpoint answering each request with the next reply (an exception is raised),
    keeping what it was sent."""

    def __init__(self, *replies):
        self.replies = list(replies)
        self.sent = []

    async def complete(self, request):
        self.sent.append(request)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return ModelResponse(Message("assistant", reply), usage=Usage(100, 20))


def task(**given):
    return JudgeTask.model_validate({"id": "t1", "question": "Why is the sky blue?", **given})


def judge(client, tasks=(), **options):
    endpoint = JudgeEndpoint(client, "judge-model", SAMPLING)
    setup = GraderSetup(Path("."), options=options, tasks=tasks, judge=endpoint)
    return GRADERS.lookup("judge").build(setup)


def graded(reply, answer="Rayleigh scattering.", **options):
    client = Replies(reply)
    made = task(rubric="Names Rayleigh scattering.")
    return asyncio.run(judge(client, (made,), **options).grade(made, answer)), client


@pytest.mark.parametrize(
    ("reply", "passed"),
    [
        ('{"verdict": "pass", "reason": "names it"}', True),
        ('{"verdict": "fail", "reason": "does not"}', False),
        ('{"Verdict": " PASS ", "reason": "case is no matter"}', True),
        ('Here it is:\n```json\n{"verdict": "fail", "reason": "x"}\n```\nDone.', False),
        ('I think {"verdict": "pass", "reason": "text around"} is fair.', True),
    ],
)
def test_the_verdict_is_read_from_json_alone_fenced_or_among_text(reply, passed):
    grade, _ = graded(reply)
    assert grade.correct is passed
    assert grade.reason.startswith(f"judge: {'pass' if passed else 'fail'}")
    assert grade.usage == Usage(100, 20)
    assert grade.score is None


@pytest.mark.parametrize(
    ("score", "threshold", "passed"), [(5, 4, True), (4, 4, True), (3, 4, False), (3, 3, True)]
)
def test_a_score_passes_from_the_threshold_and_is_recorded_from_0_to_1(score, threshold, passed):
    grade, client = graded(
        f'{{"score": {score}, "reason": "r"}}', scale="score", threshold=threshold
    )
    assert grade.correct is passed
    assert grade.score == (score - 1) / 4
    assert '"score"' in client.sent[0].system  # the judge is asked for a score


@pytest.mark.parametrize(
    "reply",
    [
        "It looks right to me.",
        '{"verdict": "maybe", "reason": "unsure"}',
        '{"verdict": true}',
        '["pass"]',
        '{"reason": "no verdict"}',
        "pass, I think",
        "Fail: it misses the point",
    ],
)
def test_a_reply_with_no_readable_verdict_is_judge_unreadable_with_its_usage(reply):
    with pytest.raises(JudgeFailed) as failed:
        graded(reply)
    assert failed.value.kind == "judge_unreadable"
    assert failed.value.usage == Usage(100, 20)
    assert reply[:10] in str(failed.value)
    assert "\n" not in str(failed.value)


@pytest.mark.parametrize(
    ("reply", "scale", "verdict"),
    [
        ("PASS", "pass_fail", Verdict(True, "")),
        (" fail.\n", "pass_fail", Verdict(False, "")),
        ('"Pass"', "pass_fail", Verdict(True, "")),
        ("**fail**", "pass_fail", Verdict(False, "")),
        ("4", "score", Verdict(True, "", 4)),
        ("2.", "score", Verdict(False, "", 2)),
    ],
)
def test_a_reply_that_is_the_verdict_alone_is_read_as_written(reply, scale, verdict):
    assert read_verdict(reply, scale, 4) == verdict


@pytest.mark.parametrize(
    ("reply", "scale"), [("7", "score"), ("pass", "score"), ("3", "pass_fail")]
)
def test_a_bare_verdict_off_its_scale_is_unreadable(reply, scale):
    assert isinstance(read_verdict(reply, scale, 4), Unread)


@pytest.mark.parametrize("reply", ['{"score": 6}', '{"score": 0}', '{"score": 3.5}', "{}"])
def test_a_score_off_the_scale_is_unreadable(reply):
    assert isinstance(read_verdict(reply, "score", 4), Unread)


def test_a_score_written_as_a_numeral_or_whole_float_is_read():
    assert read_verdict('{"score": "5"}', "score", 4) == Verdict(True, "", 5)
    assert read_verdict('{"score": 2.0, "reason": " r "}', "score", 4) == Verdict(False, "r", 2)


def test_only_a_bounded_number_of_braces_is_tried():
    reply = "{" * (MAX_STARTS + 5) + ' {"verdict": "pass"}'
    assert isinstance(read_verdict(reply, "pass_fail", 4), Unread)
    assert read_verdict('{ {"verdict": "pass"}', "pass_fail", 4) == Verdict(True, "")


def test_an_endpoint_error_is_judge_api_error_with_the_usage_it_billed():
    error = ModelAPIError("HTTP 500", 500, usage=Usage(7, 3))
    with pytest.raises(JudgeFailed) as failed:
        graded(error)
    assert failed.value.kind == "judge_api_error"
    assert failed.value.usage == Usage(7, 3)
    assert "HTTP 500" in str(failed.value)


def test_every_request_sends_the_pinned_sampling_and_a_bounded_reply():
    _, client = graded('{"verdict": "pass", "reason": "r"}')
    sent = client.sent[0]
    assert (sent.model, sent.temperature, sent.seed) == ("judge-model", 0, 7)
    assert sent.max_output_tokens == MAX_JUDGE_TOKENS


def test_the_endpoints_max_output_tokens_wins_and_a_setting_no_request_sends_is_refused():
    endpoint = JudgeEndpoint(Replies(), "m", {"temperature": 0, "max_output_tokens": 2048})
    setup = GraderSetup(Path("."), tasks=(task(rubric="r"),), judge=endpoint)
    assert (
        GRADERS.lookup("judge").build(setup).request(task(rubric="r"), "a").max_output_tokens
        == 2048
    )
    endpoint = JudgeEndpoint(Replies(), "m", {"temperature": 0, "top_k": 5})
    with pytest.raises(BadInput, match="'top_k'"):
        GRADERS.lookup("judge").build(GraderSetup(Path("."), judge=endpoint))


def test_the_prompt_shows_the_question_answer_rubric_and_reference():
    client = Replies('{"verdict": "pass", "reason": "r"}')
    made = task(rubric="Names Rayleigh scattering.", expected={"answer": "scattering"})
    asyncio.run(judge(client, (made,)).grade(made, "Because of Rayleigh scattering."))
    user = client.sent[0].messages[0].content
    for shown in ("Why is the sky blue?", "Because of Rayleigh scattering.", "Names Rayleigh"):
        assert shown in user
    assert '<reference>\n{"answer": "scattering"}\n</reference>' in user


def test_a_tasks_rubric_wins_over_the_sets_and_a_task_without_one_gets_the_sets():
    client = Replies(*['{"verdict": "pass", "reason": "r"}'] * 2)
    own, plain = task(rubric="Its own rubric."), task(id="t2", expected="blue")
    grader = judge(client, (own, plain), rubric="The set's rubric.")
    asyncio.run(grader.grade(own, "a"))
    asyncio.run(grader.grade(plain, "a"))
    first, second = (r.messages[0].content for r in client.sent)
    assert "Its own rubric." in first and "The set's rubric." not in first
    assert "The set's rubric." in second
    assert "<rubric>" not in judge(client, (plain,)).request(plain, "a").messages[0].content


def test_a_task_with_no_rubric_and_no_reference_is_refused_in_one_line():
    with pytest.raises(BadInput) as refused:
        judge(Replies(), (task(rubric="r"), task(id="bare")))
    assert "'bare'" in str(refused.value) and "\n" not in str(refused.value)
    with pytest.raises(BadInput, match="'blank'"):  # an empty answer cell is no reference
        judge(Replies(), (task(id="blank", expected="  "),))
    judge(Replies(), (task(id="bare"),), rubric="the set's")  # the set's rubric serves


def test_without_a_judge_endpoint_the_grader_is_refused_naming_the_flags():
    setup = GraderSetup(Path("."), tasks=(task(rubric="r"),))
    with pytest.raises(BadInput, match=r"--judge-model.*--judge-base-url.*\[judge\]"):
        GRADERS.lookup("judge").build(setup)


def test_the_judge_grades_the_final_answer_only_and_offers_no_check():
    grader = judge(Replies(), (task(rubric="r"),))
    assert grader.grades_on_the_way is False
    assert grader.answer_check(task(rubric="r")) is None


def test_a_bad_option_is_refused_naming_it():
    with pytest.raises(BadInput, match="scale"):
        judge(Replies(), (), scale="stars")
    with pytest.raises(BadInput, match="threshold"):
        judge(Replies(), (), scale="score", threshold=6)


def test_the_example_set_and_an_exact_set_load_for_the_judge():
    example = load_taskset(str(ROOT / "examples/open-ended"))
    assert example.grader == "judge" and len(example.tasks) == 6
    depot = load_taskset(str(ROOT / "loopbench/tasks/depot"), grader="judge")
    assert all(t.expected is not None for t in depot.tasks)


def test_the_scripted_judge_grades_the_example_set_by_its_rule():
    example = load_taskset(str(ROOT / "examples/open-ended"))
    scripted = ScriptedJudge()
    grader = judge(scripted, example.tasks, **example.grader_options)
    capital = next(t for t in example.tasks if t.id == "capital-australia")
    assert asyncio.run(grader.grade(capital, "It is Canberra, chosen as a compromise.")).correct
    assert not asyncio.run(grader.grade(capital, "Sydney.")).correct
    assert scripted.calls == 2 and scripted.usage.input_tokens > 0


def test_the_scripted_judges_errors_follow_its_rates_from_its_seed():
    def verdicts(seed):
        scripted = ScriptedJudge(false_fail=0.3, seed=seed)
        made = task(expected="Canberra")
        grader = judge(scripted, (made,))
        return [asyncio.run(grader.grade(made, "Canberra")).correct for _ in range(400)]

    first = verdicts(1)
    assert first == verdicts(1)
    assert 0.2 < first.count(False) / 400 < 0.4


def test_the_scripted_judge_answers_500s_and_unreadable_replies_when_asked():
    made = task(expected="x")
    for scripted, kind in (
        (ScriptedJudge(errors=1.0), "judge_api_error"),
        (ScriptedJudge(unreadable=1.0), "judge_unreadable"),
    ):
        with pytest.raises(JudgeFailed) as failed:
            asyncio.run(judge(scripted, (made,)).grade(made, "x"))
        assert failed.value.kind == kind


def test_the_scripted_judge_serves_a_judge_endpoint_over_http():
    made = task(expected="Canberra")

    async def both():
        async with OpenAICompatClient(server.base_url) as client:
            grader = judge(client, (made,))
            return [(await grader.grade(made, said)).correct for said in ("Canberra.", "Perth")]

    scripted = ScriptedJudge()
    with FakeServer(scripted) as server:
        assert asyncio.run(both()) == [True, False]
        sent = server.served.bodies[0]
    assert (sent["temperature"], sent["seed"]) == (0, 7)
    assert scripted.calls == 2


def test_a_data_files_answer_column_is_the_judges_reference(tmp_path):
    data = tmp_path / "open.csv"
    data.write_text("id,question,answer\nc1,Capital of Australia?,Canberra\n", encoding="utf-8")
    taskset = load_taskset(str(data), grader="judge")
    assert taskset.tasks[0].expected == "Canberra"
    request = judge(Replies(), taskset.tasks).request(taskset.tasks[0], "Canberra")
    assert "<reference>\nCanberra\n</reference>" in request.messages[0].content
