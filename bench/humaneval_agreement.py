"""The sandbox's verdicts against HumanEval's own, on all 164 canonical solutions and on wrong
variants of them (``tests/tasks/humaneval_variants.py``: a comparison flipped, a number off by
one, a + made a -, an ``and`` made an ``or``), and on an object equal to everything.

    .venv/bin/python bench/humaneval_agreement.py
    .venv/bin/python bench/humaneval_agreement.py --kinds flip-comparison --timeout 3

Prints, per kind, how many variants each passes and how many verdicts agree, and lists
every disagreement but the always-equal object's (HumanEval passes it on most problems; the
sandbox never compares it).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections import Counter
from pathlib import Path

from tabulate import tabulate

sys.path.append(str(Path(__file__).parents[1]))  # tests.tasks.humaneval_variants

from loopbench.sandbox.limits import Limits
from loopbench.sandbox.run import Sandbox, Suite
from loopbench.tasks.humaneval import heldout_suite, load_problems, preamble, reference
from tests.sandbox.hostile import always_equal
from tests.tasks.humaneval_variants import (
    MUTATIONS,
    Variant,
    humaneval_verdicts,
    variants,
)


async def ours(sandbox: Sandbox, jobs: list[tuple[Variant, object]]) -> list[bool]:
    runs = [
        sandbox.run(
            v.program,
            Suite("heldout", heldout_suite(p), p.entry_point, preamble(p)),  # type: ignore[arg-type]
        )
        for v, p in jobs
    ]
    return [r.status == "passed" for r in await asyncio.gather(*runs)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", nargs="+", default=list(MUTATIONS), choices=list(MUTATIONS))
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds per program, both")
    args = parser.parse_args()
    problems = load_problems()
    by_id = {p.task_id: p for p in problems}
    jobs = [(Variant(p.task_id, "canonical", reference(p)), p) for p in problems]
    jobs += [(Variant(p.task_id, "always-equal", always_equal(p.entry_point)), p) for p in problems]
    jobs += [(v, by_id[v.task_id]) for v in variants(problems, args.kinds)]
    began = time.perf_counter()
    sandbox = Sandbox(Limits(timeout_s=args.timeout))
    mine = asyncio.run(ours(sandbox, jobs))  # type: ignore[arg-type]
    theirs = humaneval_verdicts(jobs, args.timeout)
    counts: Counter[tuple[str, str]] = Counter()
    disagreements = []
    for (variant, _), a, b in zip(jobs, mine, theirs, strict=True):
        counts[variant.kind, "n"] += 1
        counts[variant.kind, "ours"] += a
        counts[variant.kind, "humaneval"] += b
        counts[variant.kind, "agree"] += a == b
        if a != b and variant.kind != "always-equal":  # that one disagrees by design
            disagreements.append((variant.task_id, variant.kind, a, b))
    kinds = ["canonical", "always-equal", *args.kinds]
    rows = [
        [k, counts[k, "n"], counts[k, "ours"], counts[k, "humaneval"], counts[k, "agree"]]
        for k in kinds
    ]
    print(f"isolation {sandbox.isolation}, {time.perf_counter() - began:.0f} s")
    header = ["programs", "n", "pass (sandbox)", "pass (HumanEval)", "verdicts agree"]
    print(tabulate(rows, headers=header, tablefmt="github"))
    verdict = {True: "pass", False: "fail"}
    for task_id, kind, a, b in disagreements:
        print(f"  {task_id} {kind}: sandbox {verdict[a]}, HumanEval {verdict[b]}")


if __name__ == "__main__":
    main()
