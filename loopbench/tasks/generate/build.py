"""The knobs of a generated set, and the set they make: world, encyclopedia, questions, each
question checked by the reference solver before it is kept."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

from loopbench.graders.answer_keys import OPERATIONS, Operation
from loopbench.harness.errors import BadInput
from loopbench.tasks.generate.encyclopedia import BookJson, write_book
from loopbench.tasks.generate.public import PUBLIC_FACTS
from loopbench.tasks.generate.questions import (
    Draft,
    DraftError,
    feasible,
    make_drafts,
    public_drafts,
)
from loopbench.tasks.generate.solver import SolverError, solve
from loopbench.tasks.generate.world import World, build_world
from loopbench.tasks.taskset import Task
from loopbench.tasks.tools import Encyclopedia

MAX_HOPS = 4
MAX_N = 5000


class GenerateError(BadInput):
    """Knobs that cannot make a set, or a question the solver disagrees with; says why."""


def parse_hops(text: str) -> tuple[int, int]:
    """ "2-4" or "3" -> the range of look-ups, each from 1 to MAX_HOPS, low before high."""
    match = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", text)
    if not match:
        raise GenerateError(f"--hops {text!r} is not a number or a range; write e.g. 2-4 or 1")
    low, high = int(match[1]), int(match[2] or match[1])
    if not 1 <= low <= high <= MAX_HOPS:
        raise GenerateError(
            f"--hops {text!r} is out of order or range; give A-B with 1 <= A <= B <= {MAX_HOPS}, "
            "e.g. 2-4 (1 is the easy level, a single look-up)"
        )
    return low, high


def parse_operations(text: str) -> tuple[Operation, ...]:
    """ "difference,ratio" -> those operations, in the canonical order; "" -> all."""
    if not text.strip():
        return ()
    asked = [w.strip() for w in text.split(",") if w.strip()]
    unknown = [w for w in asked if w not in OPERATIONS]
    if unknown:
        raise GenerateError(
            f"--operations: unknown {', '.join(map(repr, unknown))}; choose from "
            f"{', '.join(OPERATIONS)}, separated by commas"
        )
    return tuple(op for op in OPERATIONS if op in asked)


@dataclass(frozen=True)
class Options:
    n: int
    hops: tuple[int, int]
    seed: int
    ambiguity: float = 0.3
    distractors: float = 0.2
    operations: tuple[Operation, ...] = ()  # none given: every one the hop counts allow
    public: int = 0
    name: str = "generated"

    def __post_init__(self) -> None:
        if not 1 <= self.n <= MAX_N:
            raise GenerateError(f"--n {self.n}: give a number of questions from 1 to {MAX_N}")
        if self.public < 0:
            raise GenerateError(f"--public {self.public}: give 0 or more public questions")
        for knob, share in (("--ambiguity", self.ambiguity), ("--distractors", self.distractors)):
            if not 0 <= share <= 1:
                raise GenerateError(f"{knob} {share}: give a share from 0 to 1, e.g. 0.3")
        for op in self.operations:
            if not any(op in feasible(hops) for hops in self.hop_counts):
                needs = " or ".join(str(h) for h in range(1, MAX_HOPS + 1) if op in feasible(h))
                raise GenerateError(
                    f"--operations {op} only makes questions of {needs} look-up"
                    f"{'' if needs == '1' else 's'} (--hops {needs[0]}); widen --hops or drop it"
                )
        for hops in self.hop_counts:
            if not self.operations_at(hops):
                raise GenerateError(
                    f"--operations {','.join(self.operations)} cannot make a question of {hops} "
                    f"look-ups (those allow {', '.join(feasible(hops))}); add one or narrow --hops"
                )

    @property
    def hop_counts(self) -> list[int]:
        return list(range(self.hops[0], self.hops[1] + 1))

    def operations_at(self, hops: int) -> list[Operation]:
        return [op for op in feasible(hops) if not self.operations or op in self.operations]

    @property
    def command(self) -> str:
        """Every knob spelled out, so later defaults cannot change what it makes."""
        low, high = self.hops
        hops = str(low) if low == high else f"{low}-{high}"
        ops = ",".join(
            op for op in OPERATIONS if any(op in self.operations_at(h) for h in self.hop_counts)
        )
        return (
            f"loopbench tasks generate --n {self.n} --hops {hops} --seed {self.seed} "
            f"--ambiguity {self.ambiguity:g} --distractors {self.distractors:g} "
            f"--operations {ops} --public {self.public} --name {self.name}"
        )


@dataclass
class Generated:
    options: Options
    world: World
    tasks: list[Task]
    book: BookJson
    description: str = field(default="")


def targets(options: Options, rng: random.Random) -> list[tuple[int, Operation]]:
    """Hop counts in turn, and at each hop count its operations in turn, so every one
    allowed appears; then shuffled, so the first N tasks of a set are a fair sample."""
    made: list[tuple[int, Operation]] = []
    seen: dict[int, int] = {}
    for i in range(options.n):
        hops = options.hop_counts[i % len(options.hop_counts)]
        ops = options.operations_at(hops)
        made.append((hops, ops[seen.get(hops, 0) % len(ops)]))
        seen[hops] = seen.get(hops, 0) + 1
    rng.shuffle(made)
    return made


def generate(options: Options) -> Generated:
    rng = random.Random(options.seed)
    world = build_world(rng, options.n, options.ambiguity, options.distractors)
    public = list(PUBLIC_FACTS) if options.public else []
    book_data = write_book(world, public)
    book = Encyclopedia(book_data["entries"], book_data["related"], book_data["naming"])
    try:
        drafts = make_drafts(world, rng, targets(options, rng))
        # Its own generator: adding public questions leaves the world and the rest unchanged.
        asked = public_drafts(world, random.Random(options.seed + 1), options.public, public)
    except DraftError as exc:
        raise GenerateError(str(exc)) from None
    width = len(str(options.n))
    tasks = [_checked(f"q{i:0{width}d}", d, book) for i, d in enumerate(drafts, start=1)]
    tasks += [_checked(f"public-{i}", d, book) for i, d in enumerate(asked, start=1)]
    return Generated(options, world, tasks, book_data, _describe(options, len(world.companies)))


def _checked(task_id: str, made: Draft, book: Encyclopedia) -> Task:
    """The task, once the solver, reading only the text, agrees with the draft."""
    try:
        solved = solve(made.question, book)
    except SolverError as exc:
        raise GenerateError(
            f"{task_id}: the solver cannot answer {made.question!r}: {exc}"
        ) from None
    answer = made.answer
    drafted = answer.expected(made.question)
    if solved.expected != drafted or tuple(solved.solution.lookups) != made.lookups:
        raise GenerateError(
            f"{task_id}: the solver disagrees on {made.question!r}: it found "
            f"{solved.expected} by {solved.solution.lookups}, the draft {drafted} by "
            f"{list(made.lookups)}"
        )
    return Task(
        id=task_id,
        question=made.question,
        expected=solved.expected,
        slice=made.slice,
        hops=solved.hops,
        solution=solved.solution,
    )


def _describe(options: Options, companies: int) -> str:
    low, high = options.hops
    hops = (
        "1 look-up"
        if high == 1
        else f"{low} look-ups"
        if low == high
        else f"{low} to {high} look-ups"
    )
    public = f", and {options.public} on public facts" if options.public else ""
    return (
        f"{options.n} generated questions over a fictional haulage world of {companies} "
        f"companies, each needing {hops} (slices hops-N){public}. Ambiguous depot "
        f"titles: {options.ambiguity:g}; look-alike distractors: {options.distractors:g}. "
        "Made by the command in generated_by; checked by loopbench tasks check."
    )
