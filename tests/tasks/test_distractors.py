"""Distractors in the data: a generated entity answer lists the other candidates the
question does not name, the solver finds the same, and the depot set's entity answers list
the other entries of their kind."""

import asyncio
import json
import shutil

from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.grading import Grading
from loopbench.tasks.loading import load_taskset


def test_a_generated_which_question_lists_the_companys_other_depots():
    tasks = load_taskset("depot-500").tasks
    which = [t for t in tasks if "'s depots" in t.question]
    assert which and all(t.expected.distractors for t in which)
    for task in which:  # each another depot the walk read
        for other in task.expected.distractors:
            assert any(other in title for title in task.solution.lookups[1:]), task.id


def test_tasks_check_names_a_task_whose_distractors_the_solver_does_not_find(tmp_path):
    folder = tmp_path / "s"
    shutil.copytree(load_taskset("depot-500").path, folder)
    lines = (folder / "tasks.jsonl").read_text().splitlines()
    first = next(i for i, line in enumerate(lines) if '"distractors"' in line)
    task = json.loads(lines[first])
    del task["expected"]["distractors"]
    lines[first] = json.dumps(task)
    (folder / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    checked = CliRunner().invoke(main, ["tasks", "check", str(folder)])
    assert checked.exit_code != 0 and task["id"] in checked.output
    assert "distractors" in checked.output


def test_the_depot_set_refuses_a_hedge_over_its_depots():
    depot = load_taskset("depot")
    task = next(t for t in depot.tasks if t.id == "most-trucks")
    grading = Grading(depot)
    for answer, correct in [
        ("Answer: Hamburg, 59 more than Bilbao", True),
        ("Answer: Hamburg or Lyon, 59", False),
        ("Answer: Hamburg, Lyon, Turin: 59", False),
    ]:
        assert asyncio.run(grading.grade(task, answer)).correct is correct, answer
