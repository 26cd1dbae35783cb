"""Seconds each grader (and each answer reader a pattern uses) takes on one huge reply, by
the reply's size and shape: an endpoint may send up to 32 MiB, and grading runs on the
run's event loop, so a slow one holds Ctrl-C and the whole run.

Each figure is one call (``grade`` then ``canonical``, as a run does: reading a huge
reply's end only, loopbench/graders/answer_size.py; ``--whole``: the grader given the whole reply),
in a forked child stopped at ``--limit`` seconds (shown ``>LIMIT``). The readers are timed
on the whole reply, but ``sc.plurality`` (self_consistency's vote with no grader), which
reads as a run does.

    .venv/bin/python bench/grading_huge_replies.py [--sizes 100000,1000000,8000000]
        [--only exact,number] [--shapes line,numbers] [--limit 60] [--whole]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT))

import loopbench.harness.patterns.cot as cot  # noqa: E402
from loopbench.graders.answer_size import canonical_read, grade_read  # noqa: E402
from loopbench.graders.base import GraderSetup  # noqa: E402
from loopbench.graders.reading import answer_text  # noqa: E402
from loopbench.graders.readings import Reading, typed_reading  # noqa: E402
from loopbench.graders.registry import GRADERS  # noqa: E402
from loopbench.graders.selftest import as_task  # noqa: E402
from loopbench.graders.squad import affirmed  # noqa: E402
from loopbench.harness.patterns.base import RunContext  # noqa: E402
from loopbench.harness.patterns.self_consistency import plurality, reading_of  # noqa: E402

#: Reply shapes: a unit repeated to the size, then its end (most with no Answer line, so
#: the whole reply is the final answer).
SHAPES: dict[str, tuple[str, str]] = {
    "line": ("the quick brown fox is not Lyon, ", ""),
    "lines": ("Step: the fox is not A or 17 = 9 + 8.\n", ""),
    "numbers": ("1, 23 or 4,567 - ", ""),
    "letters": ("A B C D (A) or ", ""),
    "brackets": ("((((((((((", ""),
    "braces": ('{"a": {', ""),
    "equals": ("1 = 2 = ", "3"),
    "answers": ("Answer: the answer is 17 or B\n", "Answer: 18"),
    "answered": ("the fox is not 17 or B; ", "\nAnswer: 18"),
}

_CITY = {"fields": {"city": "Rotterdam"}}
#: Each grader's task (its ``expected``).
EXPECTED: dict[str, Any] = {
    "exact": {"numbers": [79], "entities": ["Rotterdam"], "distractors": ["Gdansk", "Porto"]},
    "number": 18,
    "choice": {"choices": ["Paris", "Lyon", "Nice", "Lille"], "answer": "B"},
    "label": {"label": "positive", "labels": ["positive", "negative", "neutral"]},
    "em": ["Denver Broncos", "The Broncos"],
    "f1": ["Denver Broncos", "The Broncos"],
    "json": _CITY,
    "regex": r"\d{4}-\d{2}-\d{2}",
    "game24": {"numbers": [4, 9, 10, 13]},
    "asserts": [
        {"type": "icontains", "value": "paris"},
        {"type": "not-contains", "value": "Lyon"},
        {"type": "regex", "value": r"\d+$"},
        {"type": "is-json"},
        {"type": "equals", "value": "42"},
    ],
}
#: The answer readers patterns and graders share, beside the graders.
READERS: dict[str, Callable[[str], object]] = {
    "answer_text": answer_text,
    "cot.final_answer": cot.final_answer,
    "sc.plurality": lambda reply: plurality([reply, reply[1:], reply[2:]], _vote_reading),
    "typed_reading": typed_reading,
    "squad.affirmed": lambda reply: affirmed(reply, ["Denver Broncos"]),
}


#: How self_consistency's vote reads answers on a set graded by no grader.
_vote_reading: Callable[[str], Reading] = reading_of(
    cast(RunContext, SimpleNamespace(canonical=None))
)


def reply_of(shape: str, size: int) -> str:
    unit, last = SHAPES[shape]
    return unit * (size // len(unit)) + last


def call(name: str, whole: bool = False) -> Callable[[str], object]:
    if name in READERS:
        return READERS[name]
    import loopbench.graders.asserts  # noqa: F401  (registers the asserts grader)

    info = GRADERS.lookup(name)
    task = as_task(info, EXPECTED[name])
    grader = info.build(GraderSetup(Path.cwd(), tasks=(task,)))

    def graded(reply: str) -> object:
        if whole:
            return asyncio.run(grader.grade(task, reply)), grader.canonical(task, reply)
        return asyncio.run(grade_read(grader, task, reply)), canonical_read(grader, task, reply)

    return graded


def _timed(name: str, reply: str, whole: bool, out: Any) -> None:
    run = call(name, whole)
    start = time.perf_counter()
    run(reply)
    out.send(time.perf_counter() - start)


def seconds(name: str, reply: str, limit: float, whole: bool) -> float | None:
    """Seconds one call took; None past ``limit``."""
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_timed, args=(name, reply, whole, send))
    child.start()
    done = receive.poll(limit)
    taken = receive.recv() if done else None
    child.kill()
    child.join()
    return taken


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000,8000000")
    parser.add_argument("--only", default=",".join([*EXPECTED, *READERS]))
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--limit", type=float, default=60.0)
    parser.add_argument("--whole", action="store_true", help="graders read the whole reply")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    shapes = args.shapes.split(",")
    print(f"{'':18}{'':10}" + "".join(f"{s:>10,}" for s in sizes))
    for name in args.only.split(","):
        for shape in shapes:
            shown = []
            for size in sizes:
                taken = seconds(name, reply_of(shape, size), args.limit, args.whole)
                shown.append(f">{args.limit:g}" if taken is None else f"{taken:.3f}")
            print(f"{name:18}{shape:10}" + "".join(f"{s:>10}" for s in shown), flush=True)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
