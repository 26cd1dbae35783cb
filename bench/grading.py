"""Grading throughput: HumanEval's 164 reference solutions through the sandbox.

Each reference runs against its problem's held-out suite, all 164 submitted at once to a
sandbox of W workers (its bounded pool), as the runner submits them beside model calls.
Every reference should pass; any that does not is named, since a sandbox that fails good
code measures nothing.

    .venv/bin/python bench/grading.py                  # workers 1 and 2
    .venv/bin/python bench/grading.py --workers 1 2 4 --repeats 2
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import Counter

from tabulate import tabulate

from loopbench.sandbox.run import Sandbox, Suite
from loopbench.sandbox.suite_result import SuiteResult
from loopbench.tasks.humaneval import heldout_suite, load_problems, preamble, reference


async def grade_all(sandbox: Sandbox, jobs: list[tuple[str, Suite]]) -> list[SuiteResult]:
    return await asyncio.gather(*(sandbox.run(code, suite) for code, suite in jobs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="pool sizes")
    parser.add_argument("--repeats", type=int, default=1, help="passes over the 164 per size")
    args = parser.parse_args()

    problems = load_problems()
    jobs = [
        (reference(p), Suite("heldout", heldout_suite(p), p.entry_point, preamble(p)))
        for p in problems
    ]
    rows = []
    isolation = ""
    for workers in args.workers:
        sandbox = Sandbox(workers=workers)
        isolation = sandbox.isolation
        began = time.perf_counter()
        results: list[SuiteResult] = []
        for _ in range(args.repeats):
            results += asyncio.run(grade_all(sandbox, jobs))
        wall = time.perf_counter() - began
        statuses = Counter(r.status for r in results)
        seconds = sorted(r.seconds for r in results)
        rows.append(
            [
                workers,
                len(results),
                f"{wall:.2f}",
                f"{len(results) / wall:.1f}",
                f"{1000 * seconds[len(seconds) // 2]:.0f}",
                f"{1000 * seconds[int(len(seconds) * 0.99)]:.0f}",
                ", ".join(f"{s} {n}" for s, n in statuses.most_common()),
            ]
        )
        for problem, result in zip(problems * args.repeats, results, strict=True):
            if result.status != "passed":
                print(f"  {problem.task_id}: {result.status} {result.detail}")
    header = ["workers", "suites", "wall s", "suites/s", "median ms", "p99 ms", "statuses"]
    print(f"isolation: {isolation}")
    print(tabulate(rows, headers=header, tablefmt="github"))


if __name__ == "__main__":
    main()
