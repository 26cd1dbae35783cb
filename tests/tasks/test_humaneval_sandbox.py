"""HumanEval through our own sandbox: every canonical solution passes its held-out check and
its feedback suite, the suites a run is graded and repaired on."""

import asyncio

from graders.code_tests import feedback, heldout
from graders.sandbox import Limits, Sandbox
from tasks.loading import load_taskset
from tasks.taskset import CodeTask


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
