"""HumanEval through our own sandbox: every canonical solution passes its held-out check and
its feedback suite, the suites a run is graded and repaired on; and on wrong variants of the
canonical solutions the sandbox's verdict is HumanEval's own (``bench/humaneval_agreement.py``
measures all of them)."""

import asyncio

from loopbench.graders.code_tests import feedback, heldout
from loopbench.sandbox.limits import Limits
from loopbench.sandbox.run import Sandbox, Suite
from loopbench.tasks.humaneval import find_problem, heldout_suite, load_problems, preamble
from loopbench.tasks.loading import load_taskset
from loopbench.tasks.taskset import CodeTask
from tests.tasks.humaneval_variants import Variant, humaneval_verdicts, variants


def test_every_canonical_solution_passes_both_suites_in_the_sandbox():
    tasks = [t for t in load_taskset("humaneval").tasks if isinstance(t, CodeTask)]
    assert len(tasks) == 164
    sandbox = Sandbox(Limits(timeout_s=20))

    async def main():
        runs = [
            sandbox.run(task.suites.reference, make(task.suites))
            for task in tasks
            for make in (feedback, heldout)
        ]
        return await asyncio.gather(*runs)

    results = asyncio.run(main())
    failing = [
        (task.id, suite, result.status, result.detail, result.first_failure)
        for (task, suite), result in zip(
            [(t, s) for t in tasks for s in ("feedback", "heldout")], results, strict=True
        )
        if result.status != "passed"
    ]
    assert failing == []


def test_on_wrong_variants_the_verdicts_are_humanevals_own():
    """One problem in four, every kind of change: a comparison flipped, a number off by one,
    a + made a -, an ``and`` made an ``or``. Some variants still pass (the change does not
    matter there); the sandbox must pass exactly those HumanEval passes."""
    problems = load_problems()[::4]
    by_id = {p.task_id: p for p in problems}
    jobs = [(v, by_id[v.task_id]) for v in variants(problems)]
    assert len(jobs) > 60
    sandbox = Sandbox(Limits(timeout_s=5))

    async def ours():
        runs = [
            sandbox.run(v.program, Suite("heldout", heldout_suite(p), p.entry_point, preamble(p)))
            for v, p in jobs
        ]
        return [r.status == "passed" for r in await asyncio.gather(*runs)]

    mine, theirs = asyncio.run(ours()), humaneval_verdicts(jobs, 5.0)
    disagree = [
        (v.task_id, v.kind, a) for (v, _), a, b in zip(jobs, mine, theirs, strict=True) if a != b
    ]
    assert disagree == []
    assert 0 < sum(theirs) < len(jobs) // 2  # both verdicts occur


COUNTER_HISTOGRAM = """
from collections import Counter


def histogram(test):
    counts = Counter(test.split())
    top = max(counts.values(), default=0)
    return Counter({letter: n for letter, n in counts.items() if n == top})
"""


def test_a_counter_where_a_dict_is_expected_is_judged_as_humaneval_judges_it():
    """A right answer in a dict of collections passes here as in HumanEval's own harness."""
    problem = find_problem("HumanEval_111")
    suite = Suite("heldout", heldout_suite(problem), problem.entry_point, preamble(problem))
    result = Sandbox(Limits(timeout_s=5)).run_sync(COUNTER_HISTOGRAM, suite)
    variant = Variant(problem.task_id, "counter", COUNTER_HISTOGRAM)
    assert (result.status, humaneval_verdicts([(variant, problem)], 5.0)) == ("passed", [True])
