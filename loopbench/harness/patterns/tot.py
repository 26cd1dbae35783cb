"""tot:breadth=B,beam=K,depth=D (seeds 003 and 004): a tree of thoughts, searched by beam.

A node is a path of reasoning steps. At each of D levels every kept node is expanded:
B distinct next steps are proposed and each is scored with a typed evaluation (score
0-1 and a reason; one call each). The K best scored children are kept for the next
level (ties to the earlier). One last call answers from the best path reached. No
tools: the tree searches over reasoning, as in the paper.

- ``propose=list`` (seed 004): one structured call per node returns B distinct
  approaches; ``propose=sample``: B separate calls at ``temperature``, one step each.
  A repeat of an approach already proposed at the node is dropped and counted, never
  scored nor asked for again (``loopbench.harness.patterns.tot_proposals``).
- A truncated proposal is dropped, never scored or kept, and counted; so is a list that
  does not parse.
- An evaluation that does not parse gives no score (counted as such, never 0); an
  unscored child is not kept.
- The final answer call is reserved: a proposal is made only while the calls left hold
  it, an evaluation and the answer, and an evaluation only while they hold it and the
  answer, so the search stops early rather than losing the answer to the budget. A
  truncated final answer is ``truncated``, never graded.
- ``nodes_expanded`` counts the nodes whose children were proposed, as measured.

Calls at most, the answer included: N*(1 + B) + 1 with ``list``, N*2B + 1 with
``sample``, where N = sum over levels l = 1..D of min(K, B^(l-1)) nodes can be expanded
(``loopbench cost patterns`` prices the ``list`` count).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from loopbench.harness.events import LevelEvent, ParseFailureEvent, ProposalEvent
from loopbench.harness.models.types import Message, ModelRequest
from loopbench.harness.patterns.base import CallFloor, Outcome, PatternOptions, RunContext
from loopbench.harness.patterns.cot import final_answer
from loopbench.harness.patterns.prompts import Prompts, Slot
from loopbench.harness.patterns.registry import register
from loopbench.harness.patterns.structured import Form, OutputMode, Prompt, ask_structured
from loopbench.harness.patterns.tot_proposals import BRANCH_SLOTS, Proposals, Search

EVALUATE_SYSTEM = (
    "Judge how promising the proposed next step is for answering the question correctly. "
    "Call evaluation with a score from 0 (wrong or useless) to 1 (certainly right)."
)
ANSWER_SYSTEM = (
    "Using the reasoning steps given, answer the question. Give the final answer in a few "
    "words on a last line that starts with 'Answer:'."
)
PROMPTS = Prompts(
    Slot(
        "state",
        "Question: {{ question }}\nSteps so far:\n{{ steps }}",
        ("question", "steps"),
        about="a node as the model is shown it: the question and its numbered steps",
        needs=("question", "steps"),
    ),
    *BRANCH_SLOTS,
    Slot("evaluate", EVALUATE_SYSTEM, about="the system prompt scoring a proposed step"),
    Slot(
        "evaluate_request",
        "{{ state }}\nProposed next step: {{ proposal }}",
        ("state", "proposal"),
        about="the node and the step proposed from it, to be scored",
        needs=("state", "proposal"),
    ),
    Slot("answer", ANSWER_SYSTEM, about="the system prompt answering from the best path"),
)
#: Calls left before a proposal: the proposal, one evaluation and the answer.
BEFORE_PROPOSAL = 3


class Evaluation(BaseModel):
    score: float = Field(ge=0, le=1, description="0 = wrong or useless, 1 = certainly right.")
    reason: str = Field(default="", description="Why.")


class TreeOptions(PatternOptions):
    max_steps: int = Field(default=32, ge=0)
    """Ceiling on model calls in the whole run: proposals, evaluations and the answer."""
    breadth: int = Field(default=3, ge=1)
    """Distinct next steps proposed from each kept node."""
    beam: int = Field(default=2, ge=1)
    """Nodes kept at each level, the best scored."""
    depth: int = Field(default=2, ge=1)
    """Levels searched."""
    propose: Literal["list", "sample"] = "list"
    """One structured call listing breadth approaches, or breadth separate sampled calls."""
    temperature: float = Field(default=0.8, gt=0)
    """Sampling temperature of the proposals."""
    output: OutputMode = "tool"
    """Structured output for the proposal lists and the evaluations."""


@dataclass(frozen=True)
class Node:
    path: tuple[str, ...]
    score: float


def _state(ctx: RunContext, path: tuple[str, ...]) -> str:
    steps = "\n".join(f"{i}. {s}" for i, s in enumerate(path, 1)) or "(none yet)"
    return PROMPTS.render(ctx, "state", question=ctx.question, steps=steps)


@dataclass(frozen=True)
class TreeOfThoughts:
    options: TreeOptions
    name: str = "tot"

    def call_floor(self) -> CallFloor:
        return CallFloor(BEFORE_PROPOSAL, "one proposal, its evaluation and the answer")

    async def run(self, ctx: RunContext) -> Outcome:
        opts = self.options
        search = Search()
        best = Node((), 0.0)
        frontier = [best]
        for level in range(1, opts.depth + 1):
            children: list[Node] = []
            for node in frontier:
                # guard: tot-reserves-answer-per-node
                if ctx.calls_left(opts) < BEFORE_PROPOSAL:
                    break
                search.nodes_expanded += 1
                children += await self._expand(ctx, node, search)
            ranked = sorted(children, key=lambda n: -n.score)  # stable: ties to the earlier
            frontier = ranked[: opts.beam]
            ctx.emit(LevelEvent(level=level, kept=[[*n.path] for n in frontier]))
            if not frontier:
                break
            best, search.levels = frontier[0], level
        return await self._answer(ctx, best, search)

    async def _expand(self, ctx: RunContext, node: Node, search: Search) -> list[Node]:
        opts, state = self.options, _state(ctx, node.path)
        proposals = Proposals(ctx, search, node.path, state)
        listed: list[str] = []
        if opts.propose == "list":
            system = PROMPTS.render(ctx, "branch", breadth=opts.breadth)
            listed = await proposals.listed(system, opts.breadth, opts.temperature, opts.output)
        children = []
        for index in range(opts.breadth):
            if opts.propose == "list":
                # guard: tot-reserves-answer-per-evaluation
                if index == len(listed) or ctx.calls_left(opts) < BEFORE_PROPOSAL - 1:
                    break  # no approach left, or the answer call stays reserved
                proposal: str | None = listed[index]
            else:
                # guard: tot-reserves-answer-per-sampled
                if ctx.calls_left(opts) < BEFORE_PROPOSAL:
                    break  # the answer call stays reserved
                system = PROMPTS.render(ctx, "branch_sample")
                proposal = await proposals.sampled(system, opts.temperature)
            if proposal is None:
                continue
            shown = PROMPTS.render(ctx, "evaluate_request", state=state, proposal=proposal)
            judged = await ask_structured(
                ctx,
                Form(Evaluation, "evaluation", "Score the step."),
                Prompt(PROMPTS.render(ctx, "evaluate"), (Message("user", shown),)),
                opts.output,
                ctx.model.calls + 1,
            )
            score = judged.value.score if judged.value else None
            ctx.emit(ProposalEvent(path=[*node.path], proposal=proposal, score=score))
            # guard: tot-unscored-child-not-kept
            if score is None:
                search.unscored += 1
                continue
            children.append(Node((*node.path, proposal), score))
        return children

    async def _answer(self, ctx: RunContext, best: Node, search: Search) -> Outcome:
        request = ModelRequest(
            ctx.model_name,
            (Message("user", _state(ctx, best.path)),),
            system=PROMPTS.render(ctx, "answer"),
            max_output_tokens=200,
        )
        response = await ctx.model.complete(request)
        metrics = search.metrics()
        messages = [Message("user", ctx.question), response.message]
        steps = ctx.model.calls
        # guard: truncation-tot-final-answer
        if response.truncated:
            return Outcome("truncated", messages=messages, steps=steps, metrics=metrics)
        answer = final_answer(response.message.content)
        if answer is None:
            ctx.emit(ParseFailureEvent(step=steps, text=response.message.content))
            return Outcome("unparsed", messages=messages, steps=steps, metrics=metrics)
        return Outcome("answered", answer=answer, messages=messages, steps=steps, metrics=metrics)


@register(
    "tot",
    TreeOptions,
    "tree of thoughts by beam search: breadth distinct approaches (one call, or sampled) and "
    "their evaluations per kept node, beam kept per level, depth levels, then answer; up to "
    "N*(1+breadth)+1 calls, N = sum of min(beam, breadth^(level-1))",
    PROMPTS,
)
def tot(options: TreeOptions) -> TreeOfThoughts:
    return TreeOfThoughts(options)
