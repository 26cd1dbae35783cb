"""reflection:cycles=N (seed 000): answer, ask whether the answer holds, rewrite only if not.

    output = generate(task)              # a full tool loop, tools included
    for cycle in cycles:
        critique = reflect(task, output) # only tool: critique(needs_refinement, critique)
        if not needs_refinement: return output
        output = refine(task, output, critique)   # no tools

- The loop branches on a typed boolean, never on the critique's wording.
- A critique that asks for changes without saying which is refused.
- The budget for the cycles is reserved before generating: generation gets
  ``max_steps - 2*cycles``, and a budget too small for the cycles is refused at once.
- The draft is traced before any critique, and so is every rewrite, so the record
  says whether the first answer was right (``first_correct``).
- The rewrite replaces the draft in the conversation; the critique never enters it.
- With ``history=window:N`` the critique and the rewrite are sent the draft's steps as
  its tool loop sends them: the last N in full, each older one as a line.
- ``cycles=0`` is the plain tool loop, so the cycle count is an ablation axis.
- On a coding task the draft is the first attempt every code arm makes, and the
  critique reviews the code against the specification: self-review with no test run
  (seed 003, 3.5), the baseline a test-driven repair loop is measured against. A
  critique or rewrite that does not finish leaves the last code as the answer.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pydantic import BaseModel, Field

from loopbench.harness.events import CritiqueEvent, RevisionUnfinishedEvent
from loopbench.harness.models.types import Message, ModelRequest
from loopbench.harness.patterns.base import (
    CallFloor,
    Outcome,
    RunContext,
    ToolLoopOptions,
    answer_reply,
)
from loopbench.harness.patterns.coding import CODE_OUTPUT_TOKENS, CODE_SLOT, first_attempt
from loopbench.harness.patterns.history import compacted
from loopbench.harness.patterns.prompts import Prompts, Slot
from loopbench.harness.patterns.react import react_system
from loopbench.harness.patterns.registry import register
from loopbench.harness.patterns.structured import (
    Form,
    OutputMode,
    Prompt,
    Structured,
    ask_structured,
)
from loopbench.harness.patterns.tool_loop import Loop, tool_loop

CRITIC_SYSTEM = (
    "You check answers. Judge whether the last answer above is correct and complete, using "
    "only the conversation above. Call critique: needs_refinement false if it holds; true "
    "with a critique that says exactly what is wrong if it does not."
)
REWRITE_SYSTEM = (
    "Rewrite the answer above so that it meets the critique. Reply with the answer only."
)
CODE_REWRITE_SYSTEM = (
    "Rewrite the code above so that it meets the critique. Reply with the complete corrected "
    "code in one ```python code block."
)
PROMPTS = Prompts(
    Slot("draft", react_system(False), about="the system prompt of the first answer's tool loop"),
    Slot("critic", CRITIC_SYSTEM, about="the system prompt of the critique call"),
    Slot("critique_request", "Check the answer above.", about="the request for the critique"),
    Slot("rewrite", REWRITE_SYSTEM, about="the system prompt of the rewrite"),
    Slot(
        "rewrite_request",
        "Critique: {{ critique }}",
        ("critique",),
        about="the critique shown",
        needs=("critique",),
    ),
    CODE_SLOT,
    Slot(
        "code_critique_request",
        "Review the code above against the specification.",
        about="the request for the critique (coding tasks)",
    ),
    Slot("code_rewrite", CODE_REWRITE_SYSTEM, about="the rewrite's system prompt (coding tasks)"),
)


@dataclass(frozen=True)
class Review:
    """The slots of what the critique is asked to check and what the rewrite is told, and
    what the rewrite may write."""

    request: str
    rewrite: str
    rewrite_tokens: int


ANSWER_REVIEW = Review("critique_request", "rewrite", 300)
CODE_REVIEW = Review("code_critique_request", "code_rewrite", CODE_OUTPUT_TOKENS)


class Critique(BaseModel):
    needs_refinement: bool = Field(description="True if the answer must change.")
    critique: str = Field(default="", description="What is wrong, if anything.")


class ReflectionOptions(ToolLoopOptions):
    cycles: int = Field(default=1, ge=0)
    """Critique-and-rewrite cycles after the first answer."""
    output: OutputMode = "tool"
    """Structured output for the critique: tool calling, or prompted JSON."""


@dataclass(frozen=True)
class Reflection:
    options: ReflectionOptions
    name: str = "reflection"

    def call_floor(self) -> CallFloor:
        cycles = self.options.cycles
        # guard: reflection-refusal
        return CallFloor(2 * cycles + 1, f"{cycles} cycles need 2 calls each, plus 1 to answer")

    async def run(self, ctx: RunContext) -> Outcome:
        draft = await self._draft(ctx)
        if draft.status != "answered" or draft.answer is None:
            return draft
        review = ANSWER_REVIEW if ctx.code is None else CODE_REVIEW
        answer, steps, conversation = draft.answer, draft.steps, draft.messages
        # guard: reflection-traces-draft
        ctx.answer_given("draft", answer)
        for cycle in range(1, self.options.cycles + 1):
            shown = compacted(conversation, self.options.history)
            asked = (*shown, Message("user", PROMPTS.render(ctx, review.request)))
            steps += 1
            judged = await self._critique(ctx, cycle, asked, steps)
            if (critique := judged.value) is None:
                failure = judged.failure or "unparsed"
                unread = Outcome(failure, messages=conversation, steps=steps, error=judged.error)
                return self._unfinished(ctx, unread, answer)
            if not critique.needs_refinement:
                break
            if not critique.critique.strip():
                error = "the critique asked for changes without saying which"
                return Outcome("refused", messages=conversation, steps=steps, error=error)
            rewritten = await self._rewrite(ctx, conversation, critique.critique, review, shown)
            steps += 1
            if rewritten.answer is None:  # truncated or empty: the rewrite is not an answer
                return self._unfinished(ctx, replace(rewritten, steps=steps), answer)
            answer = rewritten.answer
            ctx.answer_given("revision", answer)
            # The rewrite replaces the draft; the critique is never part of the conversation.
            conversation = [*conversation[:-1], Message("assistant", answer)]
        return Outcome("answered", answer=answer, messages=conversation, steps=steps)

    async def _draft(self, ctx: RunContext) -> Outcome:
        """The first answer: on code the first attempt every code arm makes; elsewhere a
        full tool loop, in the steps the cycles leave."""
        if ctx.code is not None:
            return await first_attempt(ctx, PROMPTS.render(ctx, "code"))
        opts = self.options
        # guard: reflection-reserves-cycles
        generation_steps = opts.max_steps - 2 * opts.cycles
        loop = Loop(opts, PROMPTS.render(ctx, "draft"), ctx.tools, generation_steps)
        return await tool_loop(ctx, loop, [Message("user", ctx.question)])

    async def _critique(
        self, ctx: RunContext, cycle: int, messages: tuple[Message, ...], step: int
    ) -> Structured[Critique]:
        """The critique of the last answer in ``messages``, traced when it was read."""
        judged = await ask_structured(
            ctx,
            Form(Critique, "critique", "Say whether the answer needs refinement, and why."),
            Prompt(PROMPTS.render(ctx, "critic"), messages),
            self.options.output,
            step,
        )
        if (critique := judged.value) is not None:
            ctx.emit(
                CritiqueEvent(
                    cycle=cycle,
                    needs_refinement=critique.needs_refinement,
                    critique=critique.critique,
                )
            )
        return judged

    @staticmethod
    async def _rewrite(
        ctx: RunContext,
        conversation: list[Message],
        critique: str,
        review: Review,
        sent: tuple[Message, ...],
    ) -> Outcome:
        """The answer rewritten to meet the critique, with no tools; ``sent`` is what the
        request carries of ``conversation`` (all of it, or its window of steps)."""
        shown = PROMPTS.render(ctx, "rewrite_request", critique=critique)
        request = ModelRequest(
            ctx.model_name,
            (*sent, Message("user", shown)),
            system=PROMPTS.render(ctx, review.rewrite),
            max_output_tokens=review.rewrite_tokens,
        )
        return answer_reply(ctx, await ctx.model.complete(request), conversation)

    @staticmethod
    def _unfinished(ctx: RunContext, unfinished: Outcome, answer: str) -> Outcome:
        """A critique or rewrite that did not finish. On code the last code stands (as in
        reflexion): the draft is an artefact, and losing it would count as no answer rather
        than as what the review did. Elsewhere the run ends with that status."""
        # guard: unfinished-review-leaves-last-code
        if ctx.code is None:
            return unfinished
        ctx.emit(RevisionUnfinishedEvent(status=unfinished.status, error=unfinished.error))
        return replace(unfinished, status="answered", answer=answer, error=None)


@register(
    "reflection",
    ReflectionOptions,
    "tool loop, then per cycle a critique call and (if needed) a rewrite; 1 + up to 2/cycle",
    PROMPTS,
)
def reflection(options: ReflectionOptions) -> Reflection:
    return Reflection(options)
