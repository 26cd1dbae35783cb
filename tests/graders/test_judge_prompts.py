"""The judge's prompt slots: a prompt file overrides them, checked as an arm's is, and what
it changes is part of the grader's identity."""

import asyncio
import shutil
from pathlib import Path

import pytest

from loopbench.graders.base import GraderSetup, JudgeEndpoint
from loopbench.graders.judge import JudgeTask
from loopbench.graders.judge_prompts import BUILT_IN
from loopbench.graders.registry import GRADERS
from loopbench.harness.errors import BadInput
from loopbench.harness.fakes.judge import ScriptedJudge
from loopbench.tasks.loading import load_taskset

ROOT = Path(__file__).parents[2]
TASK = JudgeTask(id="t1", question="Name a primary colour.", rubric="Red, blue or yellow.")


def built(options=None, model="judge-model", sampling=None):
    endpoint = JudgeEndpoint(ScriptedJudge(), model, sampling or {"temperature": 0, "seed": 1})
    setup = GraderSetup(Path("."), options=options or {}, tasks=(TASK,), judge=endpoint)
    return GRADERS.lookup("judge").build(setup)


def prompt_file(tmp_path, text, name="judge.toml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_prompt_file_overrides_a_slot_and_the_other_keeps_its_built_in_text(tmp_path):
    given = prompt_file(tmp_path, 'user = "Q: {{ question }}\\nA: {{ answer | upper }}"\n')
    request = built({"prompts": given}).request(TASK, "blue")
    assert request.messages[0].content == "Q: Name a primary colour.\nA: BLUE"
    assert request.system == built().request(TASK, "blue").system


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('verdict = "x"', "slot 'verdict' is not one of its slots (system, user)"),
        ('user = "{{ answer }} {{ colour }}"', "uses colour, but the slot receives question"),
        ('user = "{{ answer }"', "not a template"),
        ('user = "{{ answer.__class__ }}"', "reads an attribute"),
        ('user = "{answer}"', "writes {answer} on line 1"),
        ("user = 3", "must be a text"),
        ('user = "{{ question }}"', "leave out {{ answer }}"),
        ("user = ", "not valid TOML"),
    ],
)
def test_a_bad_prompt_file_is_refused_in_one_line_naming_it(tmp_path, text, said):
    given = prompt_file(tmp_path, text + "\n")
    with pytest.raises(BadInput) as refused:
        built({"prompts": given})
    message = str(refused.value)
    assert said in message and f"prompts={given}" in message and "\n" not in message


def test_a_prompt_file_over_1_mib_is_refused_unread(tmp_path):
    given = prompt_file(tmp_path, 'user = "{{ answer }}' + "x" * 2**20 + '"\n')
    with pytest.raises(BadInput, match="larger than 1 MiB"):
        built({"prompts": given})


def test_a_missing_prompt_file_is_one_line():
    with pytest.raises(BadInput, match="no such file"):
        built({"prompts": "no-such-judge-prompts.toml"})


def test_the_answer_may_move_to_the_system_slot(tmp_path):
    given = prompt_file(tmp_path, 'system = "Grade: {{ answer }}"\nuser = "{{ question }}"\n')
    assert built({"prompts": given}).request(TASK, "red").system == "Grade: red"


def test_identity_is_the_judges_model_and_sampling_and_a_changed_prompt(tmp_path):
    plain = built().identity()
    assert plain == {"judge_model": "judge-model", "judge_sampling": {"temperature": 0, "seed": 1}}
    assert built(model="other").identity() != plain
    assert built(sampling={"temperature": 0, "seed": 2}).identity() != plain
    first = built({"prompts": prompt_file(tmp_path, 'user = "{{ answer }}"\n', "a.toml")})
    second = built({"prompts": prompt_file(tmp_path, 'user = "A: {{ answer }}"\n', "b.toml")})
    assert first.identity()["prompts"] == {"user": "{{ answer }}"}
    assert len({str(plain), str(first.identity()), str(second.identity())}) == 3
    assert first.identity()["prompts_hash"] != second.identity()["prompts_hash"]


def test_a_prompt_file_named_in_taskset_toml_is_read_from_the_sets_folder(tmp_path, monkeypatch):
    folder = tmp_path / "set"
    shutil.copytree(ROOT / "examples/open-ended", folder)
    toml = (folder / "taskset.toml").read_text(encoding="utf-8")
    toml = toml.replace("[grader_options]", '[grader_options]\nprompts = "judge_prompts.toml"')
    (folder / "taskset.toml").write_text(toml, encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # not the set's folder: the file is found there all the same
    taskset = load_taskset(str(folder))
    endpoint = JudgeEndpoint(ScriptedJudge(), "judge-model", {})
    setup = GraderSetup(folder, options=taskset.grader_options, tasks=taskset.tasks, judge=endpoint)
    grader = GRADERS.lookup("judge").build(setup)
    assert "support team" in grader.request(taskset.tasks[0], "a").system
    with pytest.raises(BadInput, match="no such file"):  # --grader's is the current folder's
        load_taskset(str(folder), grader="judge:prompts=judge_prompts.toml")


def test_a_bad_prompt_file_in_taskset_toml_is_refused_when_the_set_loads(tmp_path):
    folder = tmp_path / "set"
    shutil.copytree(ROOT / "examples/open-ended", folder)
    (folder / "judge_prompts.toml").write_text('user = "{{ nothing }}"\n', encoding="utf-8")
    toml = (folder / "taskset.toml").read_text(encoding="utf-8")
    toml = toml.replace("[grader_options]", '[grader_options]\nprompts = "judge_prompts.toml"')
    (folder / "taskset.toml").write_text(toml, encoding="utf-8")
    with pytest.raises(BadInput, match="uses nothing"):
        load_taskset(str(folder))


def test_the_built_in_prompt_asks_for_the_scales_json():
    grader = built({"scale": "score"})
    assert '{"score": N' in grader.request(TASK, "red").system
    assert '"verdict": "pass"' in built().request(TASK, "red").system
    assert set(BUILT_IN) == {"system", "user"}
    assert asyncio.run(grader.grade(TASK, "red")).score == 1.0
