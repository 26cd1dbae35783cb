"""tot:breadth=B,beam=K,depth=D (seeds 003 and 004): a tree of thoughts, searched by beam.

A node is a path of reasoning steps. At each of D levels every kept node is
expanded: B next steps are proposed (B calls at a non-zero temperature) and each is
scored with a typed evaluation (score 0-1 and a reason; one call each). The K best
scored children are kept for the next level (ties to the earlier). One last call
answers from the best path reached. No tools: the tree searches over reasoning, as
in the paper.

- A truncated proposal is dropped, never scored or kept, and counted.
- An evaluation that does not parse gives no score (counted as such, never 0); an
  unscored child is not kept.
- The final answer call is reserved: a proposal is made only while the calls left hold
  it, its evaluation and the answer, so the search stops early rather than
  losing the answer to the budget.
- ``nodes_expanded`` counts the nodes whose children were proposed, as measured.

Calls at most: 2*B*(1 + K*(D-1)) + 1.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field

from harness.models.types import Message, ModelRequest
from harness.patterns.base import CallFloor, Outcome, PatternOptions, RunContext
from harness.patterns.cot import final_answer
from harness.patterns.registry import register
from harness.patterns.structured import OutputMode, ask_structured

PROPOSE_SYSTEM = (
    "You are solving the question step by step. Write only the next single step of "
    "reasoning, in one or two sentences."
)
EVALUATE_SYSTEM = (
    "Judge how promising the proposed next step is for answering the question correctly. "
    "Call evaluation with a score from 0 (wrong or useless) to 1 (certainly right)."
)
ANSWER_SYSTEM = (
    "Using the reasoning steps given, answer the question. Give the final answer in a few "
    "words on a last line that starts with 'Answer:'."
)
CALLS_PER_CHILD = 2  # a proposal and its evaluation


class Evaluation(BaseModel):
    score: float = Field(ge=0, le=1, description="0 = wrong or useless, 1 = certainly right.")
    reason: str = Field(default="", description="Why.")


class TreeOptions(PatternOptions):
    max_steps: int = Field(default=32, ge=0)
    """Ceiling on model calls in the whole run: proposals, evaluations and the answer."""
    breadth: int = Field(default=3, ge=1)
    """Next steps proposed from each kept node."""
    beam: int = Field(default=2, ge=1)
    """Nodes kept at each level, the best scored."""
    depth: int = Field(default=2, ge=1)
    """Levels searched."""
    temperature: float = Field(default=0.8, gt=0)
    """Sampling temperature of the proposals."""
    output: OutputMode = "tool"
    """Structured output for the evaluations."""


@dataclass(frozen=True)
class Node:
    path: tuple[str, ...]
    score: float


@dataclass
class Search:
    """What the search measured: the tree it actually grew."""

    nodes_expanded: int = 0
    proposals: int = 0
    truncated_proposals: int = 0
    unscored: int = 0
    levels: int = 0

    def metrics(self) -> dict[str, float]:
        return {k: float(v) for k, v in vars(self).items()}


def _state(question: str, path: tuple[str, ...]) -> str:
    steps = "\n".join(f"{i}. {s}" for i, s in enumerate(path, 1)) or "(none yet)"
    return f"Question: {question}\nSteps so far:\n{steps}"


@dataclass(frozen=True)
class TreeOfThoughts:
    options: TreeOptions
    name: str = "tot"

    def call_floor(self) -> CallFloor:
        return CallFloor(CALLS_PER_CHILD + 1, "one proposal, its evaluation and the answer")

    async def run(self, ctx: RunContext) -> Outcome:
        opts = self.options
        search = Search()
        best = Node((), 0.0)
        frontier = [best]
        for level in range(1, opts.depth + 1):
            children: list[Node] = []
            for node in frontier:
                if ctx.calls_left(opts) < CALLS_PER_CHILD + 1:
                    break
                search.nodes_expanded += 1
                children += await self._expand(ctx, node, search)
            ranked = sorted(children, key=lambda n: -n.score)  # stable: ties to the earlier
            frontier = ranked[: opts.beam]
            ctx.emit("level", level=level, kept=[[*n.path] for n in frontier])
            if not frontier:
                break
            best, search.levels = frontier[0], level
        return await self._answer(ctx, best, search)

    async def _expand(self, ctx: RunContext, node: Node, search: Search) -> list[Node]:
        opts, state = self.options, _state(ctx.question, node.path)
        children = []
        for _ in range(opts.breadth):
            if ctx.calls_left(opts) < CALLS_PER_CHILD + 1:
                break  # the answer call stays reserved
            request = ModelRequest(
                ctx.model_name,
                (Message("user", state),),
                system=PROPOSE_SYSTEM,
                temperature=opts.temperature,
                max_output_tokens=120,
            )
            response = await ctx.model.complete(request)
            search.proposals += 1
            proposal = response.message.content.strip()
            if response.truncated or not proposal:
                search.truncated_proposals += response.truncated
                ctx.emit("proposal_dropped", path=[*node.path], truncated=response.truncated)
                continue
            judged = await ask_structured(
                ctx,
                system=EVALUATE_SYSTEM,
                messages=(Message("user", f"{state}\nProposed next step: {proposal}"),),
                schema=Evaluation,
                name="evaluation",
                description="Score the step.",
                mode=opts.output,
                step=ctx.model.calls + 1,
            )
            score = judged.value.score if judged.value else None
            ctx.emit("proposal", path=[*node.path], proposal=proposal, score=score)
            if score is None:
                search.unscored += 1
                continue
            children.append(Node((*node.path, proposal), score))
        return children

    async def _answer(self, ctx: RunContext, best: Node, search: Search) -> Outcome:
        request = ModelRequest(
            ctx.model_name,
            (Message("user", _state(ctx.question, best.path)),),
            system=ANSWER_SYSTEM,
            max_output_tokens=200,
        )
        response = await ctx.model.complete(request)
        metrics = search.metrics()
        messages = [Message("user", ctx.question), response.message]
        steps = ctx.model.calls
        if response.truncated:
            return Outcome("truncated", messages=messages, steps=steps, metrics=metrics)
        answer = final_answer(response.message.content)
        if answer is None:
            ctx.emit("parse_failure", step=steps, text=response.message.content)
            return Outcome("unparsed", messages=messages, steps=steps, metrics=metrics)
        return Outcome("answered", answer=answer, messages=messages, steps=steps, metrics=metrics)


@register(
    "tot",
    TreeOptions,
    "tree of thoughts by beam search: breadth proposals + evaluations per kept node, beam "
    "kept per level, depth levels, then answer; up to 2*breadth*(1+beam*(depth-1)) + 1 calls",
)
def tot(options: TreeOptions) -> TreeOfThoughts:
    return TreeOfThoughts(options)
