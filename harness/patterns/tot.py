"""tot:breadth=B,depth=D (seeds 003 and 004): a tree of thoughts, searched best-first.

At each of D levels: propose B next reasoning steps (B calls at a non-zero
temperature), score each with a typed evaluation (score 0-1 and a reason; B calls),
and expand the best. One last call answers from the chosen path. No tools: the tree
searches over reasoning, as in the paper. Calls: 2*B*D + 1. Nodes expanded are
recorded.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field

from harness.models.types import Message, ModelAPIError, ModelRequest
from harness.patterns.base import Outcome, PatternOptions, RunContext
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


class Evaluation(BaseModel):
    score: float = Field(ge=0, le=1, description="0 = wrong or useless, 1 = certainly right.")
    reason: str = Field(default="", description="Why.")


class TreeOptions(PatternOptions):
    breadth: int = Field(default=3, ge=1)
    """Next steps proposed at each level."""
    depth: int = Field(default=2, ge=1)
    """Levels searched."""
    temperature: float = Field(default=0.8, gt=0)
    """Sampling temperature of the proposals."""
    output: OutputMode = "tool"
    """Structured output for the evaluations."""


def _state(question: str, path: list[str]) -> str:
    steps = "\n".join(f"{i}. {s}" for i, s in enumerate(path, 1)) or "(none yet)"
    return f"Question: {question}\nSteps so far:\n{steps}"


@dataclass(frozen=True)
class TreeOfThoughts:
    options: TreeOptions
    name: str = "tot"

    async def run(self, ctx: RunContext) -> Outcome:
        opts = self.options
        path: list[str] = []
        steps = 0
        for level in range(1, opts.depth + 1):
            state = _state(ctx.question, path)
            proposals: list[str] = []
            for _ in range(opts.breadth):
                request = ModelRequest(
                    ctx.model_name,
                    (Message("user", state),),
                    system=PROPOSE_SYSTEM,
                    temperature=opts.temperature,
                    max_output_tokens=120,
                )
                try:
                    response = await ctx.model.complete(request)
                except ModelAPIError as exc:
                    return Outcome("api_error", steps=steps, error=str(exc))
                steps += 1
                proposals.append(response.message.content.strip())
            scores: list[float] = []
            for proposal in proposals:
                judged = await ask_structured(
                    ctx,
                    system=EVALUATE_SYSTEM,
                    messages=(Message("user", f"{state}\nProposed next step: {proposal}"),),
                    schema=Evaluation,
                    name="evaluation",
                    description="Score the step.",
                    mode=opts.output,
                    step=steps + 1,
                )
                steps += 1
                if judged.failure == "api_error":
                    return Outcome("api_error", steps=steps, error=judged.error)
                scores.append(judged.value.score if judged.value else 0.0)
            best = scores.index(max(scores))  # the first of equals
            ctx.emit("expand", level=level, proposals=proposals, scores=scores, chosen=best)
            path.append(proposals[best])
        request = ModelRequest(
            ctx.model_name,
            (Message("user", _state(ctx.question, path)),),
            system=ANSWER_SYSTEM,
            max_output_tokens=200,
        )
        try:
            response = await ctx.model.complete(request)
        except ModelAPIError as exc:
            return Outcome("api_error", steps=steps, error=str(exc))
        steps += 1
        metrics = {"nodes_expanded": float(opts.breadth * opts.depth)}
        messages = [Message("user", ctx.question), response.message]
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
    "tree of thoughts: breadth proposals + breadth evaluations per level, then answer; "
    "2*breadth*depth + 1 calls",
)
def tot(options: TreeOptions) -> TreeOfThoughts:
    return TreeOfThoughts(options)
