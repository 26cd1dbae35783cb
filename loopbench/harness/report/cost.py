"""Cost arithmetic before running anything (seed 003, sections 3.4 to 3.6 and 3.10).

Token, call, latency and cost figures for each pattern under stated planning
numbers, token growth with full replay, caching and compaction, and the formulas
that turn an accuracy into a cost per correct answer. Every function is pure: the
numbers in, the figures out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict


class Planning(BaseModel):
    """Planning numbers (tokens unless named otherwise); the defaults are the chapter's."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    prompt: int = 1500
    """P: the system prompt, tools and question."""
    thought: int = 150
    """T: one reasoning turn's output."""
    answer: int = 30
    """A: a direct answer."""
    observation: int = 300
    """O: one tool result."""
    chain: int = 350
    """C: a chain of thought's output."""
    plan: int = 250
    """L: a plan."""
    executor_in: int = 600
    """EI: an executor step's brief."""
    executor_out: int = 80
    """EO: an executor step's output."""
    evaluation: int = 20
    """E: one evaluation or verdict."""
    call_s: float = 2.0
    """Seconds per model call before output."""
    token_s: float = 0.02
    """Seconds per output token."""
    tool_s: float = 0.5
    """Seconds per tool call."""
    cache_rate: float = 0.10
    """r: price of a cached input token relative to a fresh one."""
    window: int = 3
    """W: steps kept in full under compaction (an arm's history=window:W)."""
    step_line: int = 0
    """S: an older step's one line under compaction; 0 drops it, as the chapter counts."""


@dataclass(frozen=True)
class Prices:
    input: float
    output: float

    def cost(self, tokens_in: float, tokens_out: float) -> float:
        return tokens_in / 1e6 * self.input + tokens_out / 1e6 * self.output


PRICE_TIERS = {"small": Prices(0.25, 2.0), "frontier": Prices(3.0, 15.0)}


@dataclass(frozen=True)
class PatternCost:
    pattern: str
    calls: int
    input_tokens: float
    output_tokens: float
    latency_s: float
    prices: Prices = field(repr=False)

    @property
    def cost_usd(self) -> float:
        return self.prices.cost(self.input_tokens, self.output_tokens)

    def row(self) -> dict[str, float | str]:
        return {
            "pattern": self.pattern,
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "latency_s": self.latency_s,
            "cost_usd": self.cost_usd,
        }


def react_input(n: int, p: Planning) -> int:
    """Full replay: call k re-reads the prompt and k earlier thought+observation pairs."""
    return sum(p.prompt + k * (p.thought + p.observation) for k in range(n + 1))


def plan_execute_input(n: int, p: Planning) -> int:
    return p.prompt + n * (p.executor_in + p.observation) + (p.prompt + p.plan + n * p.executor_out)


def caching_input(n: int, p: Planning) -> float:
    """Input billed as fresh tokens when each call's repeated prefix costs ``cache_rate``."""
    step = p.thought + p.observation
    return sum(
        (p.prompt if k == 0 else step) + p.cache_rate * (0 if k == 0 else p.prompt + (k - 1) * step)
        for k in range(n + 1)
    )


def compaction_input(n: int, p: Planning) -> int:
    """Call k re-reads the prompt, its last ``window`` steps in full and each older step
    as one line (``step_line`` tokens: what ``history=window:N`` sends)."""
    step = p.thought + p.observation
    return sum(
        p.prompt + min(k, p.window) * step + max(0, k - p.window) * p.step_line
        for k in range(n + 1)
    )


def growth(steps: list[int], p: Planning) -> list[dict[str, float]]:
    return [
        {
            "steps": n,
            "full_replay": react_input(n, p),
            "caching": caching_input(n, p),
            "compaction": compaction_input(n, p),
            "plan_execute": plan_execute_input(n, p),
        }
        for n in steps
    ]


def tree_nodes(breadth: int, beam: int, depth: int) -> list[int]:
    """Nodes the tot arm can expand at each level: one root, then at most ``beam`` of the
    at most ``breadth`` children of each node expanded on the level before."""
    nodes, expanded = [], 1
    for _ in range(depth):
        nodes.append(expanded)
        # guard: cost-counts-nodes-beam-can
        expanded = min(beam, expanded * breadth)
    return nodes


def tree_calls(breadth: int, beam: int, depth: int) -> int:
    """The most calls the tot arm (``propose=list``) makes: per node expanded, one call
    proposing ``breadth`` approaches and one evaluation each; then the answer."""
    # guard: cost-prices-tot-as-arm
    return sum(tree_nodes(breadth, beam, depth)) * (1 + breadth) + 1


def tree_cost(p: Planning, prices: Prices, breadth: int, beam: int, depth: int) -> PatternCost:
    """The tot arm at its most calls, one after another. A node on level l has a path of
    l - 1 steps (T each): its proposal call reads it and writes B steps, each evaluation
    reads it and one more step and writes E; the answer reads the deepest path."""
    b, out = breadth, p.token_s
    input_tokens = output_tokens = latency = 0.0
    for level, nodes in enumerate(tree_nodes(breadth, beam, depth), start=1):
        path = (level - 1) * p.thought
        input_tokens += nodes * ((p.prompt + path) + b * (p.prompt + path + p.thought))
        output_tokens += nodes * b * (p.thought + p.evaluation)
        latency += nodes * ((p.call_s + out * b * p.thought) + b * (p.call_s + out * p.evaluation))
    input_tokens += p.prompt + depth * p.thought
    output_tokens += p.thought
    latency += p.call_s + out * p.thought
    name = f"tot (loopbench: b={b} k={beam} d={depth})"
    calls = tree_calls(breadth, beam, depth)
    return PatternCost(name, calls, input_tokens, output_tokens, latency, prices)


@dataclass(frozen=True)
class Shapes:
    """The patterns' sizes: the loop's tool steps, the tree's breadth, depth and beam, and
    best-of-m's candidates."""

    steps: int = 5
    breadth: int = 3
    depth: int = 3
    candidates: int = 5
    beam: int = 2


def chapter_tree(p: Planning, prices: Prices, breadth: int, depth: int) -> PatternCost:
    """The chapter's tree: b*d generation calls and b^2*d evaluation calls, each reading the
    prompt and half the deepest path on average; a level's generations write b thoughts
    and its evaluations one verdict each."""
    b, d, out = breadth, depth, p.token_s
    # guard: cost-prints-chapter-tree
    calls = b * d + b * b * d
    latency = d * ((p.call_s + out * b * p.thought) + (p.call_s + out * p.evaluation))
    return PatternCost(
        f"tree of thoughts, b={b} d={d}",
        calls,
        calls * (p.prompt + d * p.thought / 2),
        b * d * b * p.thought + b * b * d * p.evaluation,
        latency,
        prices,
    )


def pattern_costs(p: Planning, prices: Prices, shapes: Shapes = Shapes()) -> list[PatternCost]:
    """The chapter's seven patterns, priced by the chapter's arithmetic (section 3.10's
    table, row for row), then loopbench's own arms whose calls differ from it, in rows of
    their own: the tot arm (``tree_cost``). Best-of-m candidates run in parallel (one
    call's time)."""
    n, m = shapes.steps, shapes.candidates
    breadth, depth, beam = shapes.breadth, shapes.depth, shapes.beam
    out = p.token_s
    react_latency = (n + 1) * (p.call_s + out * p.thought) + p.tool_s * n
    plan_latency = (
        (p.call_s + out * p.plan)
        + (p.call_s + out * p.executor_out + p.tool_s)
        + (p.call_s + out * p.thought)
    )
    chain_latency = p.call_s + out * p.chain
    verdict_latency = p.call_s + out * p.evaluation
    return [
        PatternCost("direct", 1, p.prompt, p.answer, p.call_s + out * p.answer, prices),
        PatternCost("chain of thought", 1, p.prompt, p.chain, chain_latency, prices),
        PatternCost(
            f"ReAct, {n} tool steps",
            n + 1,
            react_input(n, p),
            (n + 1) * p.thought,
            react_latency,
            prices,
        ),
        PatternCost(
            f"plan-and-execute, {n} steps",
            n + 2,
            plan_execute_input(n, p),
            p.plan + n * p.executor_out + p.thought,
            plan_latency,
            prices,
        ),
        chapter_tree(p, prices, breadth, depth),
        PatternCost(
            f"best-of-{m}, model verifier",
            2 * m,
            m * p.prompt + m * (p.prompt + p.chain),
            m * p.chain + m * p.evaluation,
            chain_latency + verdict_latency,
            prices,
        ),
        PatternCost(
            f"best-of-{m}, free checker (tests)",
            m,
            m * p.prompt,
            m * p.chain,
            chain_latency,
            prices,
        ),
        tree_cost(p, prices, breadth, beam, depth),
    ]


def cost_per_correct(cost: float, accuracy: float) -> float | None:
    """Cost per attempt / accuracy; undefined (None) at zero accuracy."""
    return cost / accuracy if accuracy > 0 else None


def success_within(p: float, k: int) -> float:
    """Chance that at least one of k independent attempts passes, with a perfect verifier."""
    return 1 - (1 - p) ** k


def expected_attempts(p: float, k: int) -> float:
    return success_within(p, k) / p if p > 0 else float(k)


def verifier_precision(p: float, r: float, f: float) -> float:
    """P(correct | accepted) = p*r / (p*r + (1-p)*f)."""
    accepted = p * r + (1 - p) * f
    return p * r / accepted if accepted else float("nan")


def nothing_accepted(p: float, r: float, f: float, m: int) -> float:
    """Best-of-m returning the first accepted: the chance that none of m is accepted."""
    return (1 - p * r - (1 - p) * f) ** m


#: Accuracies for the cost-per-correct table: the chapter's three measured ones (direct,
#: chain of thought and the plain loop, 1, 8 and 20 of 36 runs) and its assumptions.
CHAPTER_ACCURACY = {
    "direct": 1 / 36,
    "chain of thought": 8 / 36,
    "ReAct": 20 / 36,
    "plan-and-execute": 0.80,
    "tree of thoughts": 0.90,
    "tot": 0.90,
}
MEASURED = {"direct", "chain of thought", "ReAct"}


def default_accuracy(pattern: str, candidates: int = 5) -> tuple[float, str]:
    """The accuracy to assume for a pattern row, and where it comes from."""
    for prefix, value in CHAPTER_ACCURACY.items():
        if pattern.startswith(prefix):
            return value, "measured" if prefix in MEASURED else "assumed"
    # Best-of-m with a reliable check: at least one of m loop attempts right.
    return success_within(CHAPTER_ACCURACY["ReAct"], candidates), "1-(1-p)^m, p = loop"
