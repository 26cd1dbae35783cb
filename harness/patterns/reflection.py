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
- ``cycles=0`` is the plain tool loop, so the cycle count is an ablation axis.
- On a coding task the draft is the first attempt every code arm makes, and the
  critique reviews the code against the specification: self-review with no test run
  (seed 003, 3.5), the baseline a test-driven repair loop is measured against. A
  critique or rewrite that does not finish leaves the last code as the answer.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pydantic import BaseModel, Field

from harness.events import CritiqueEvent, RevisionUnfinishedEvent
from harness.models.types import Message, ModelRequest
from harness.patterns.base import CallFloor, Outcome, RunContext, ToolLoopOptions, answer_reply
from harness.patterns.coding import CODE_OUTPUT_TOKENS, first_attempt
from harness.patterns.react import react_system
from harness.patterns.registry import register
from harness.patterns.structured import Form, OutputMode, Prompt, ask_structured
from harness.patterns.tool_loop import Loop, tool_loop

CRITIC_SYSTEM = (
    "You check answers. Judge whether the last answer above is correct and complete, using "
    "only the conversation above. Call critique: needs_refinement false if it holds; true "
    "with a critique that says exactly what is wrong if it does not."
)
CRITIQUE_REQUEST = "Check the answer above."
REWRITE_SYSTEM = (
    "Rewrite the answer above so that it meets the critique. Reply with the answer only."
)
CODE_CRITIQUE_REQUEST = "Review the code above against the specification."
CODE_REWRITE_SYSTEM = (
    "Rewrite the code above so that it meets the critique. Reply with the complete corrected "
    "code in one ```python code block."
)


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
        return CallFloor(2 * cycles + 1, f"{cycles} cycles need 2 calls each, plus 1 to answer")

    async def run(self, ctx: RunContext) -> Outcome:
        opts = self.options
        messages = [Message("user", ctx.question)]
        generation_steps = opts.max_steps - 2 * opts.cycles
        if ctx.code is not None:
            draft = await first_attempt(ctx)
            review, rewrite, rewrite_tokens = (
                CODE_CRITIQUE_REQUEST,
                CODE_REWRITE_SYSTEM,
                CODE_OUTPUT_TOKENS,
            )
        else:
            loop = Loop(opts, react_system(False), ctx.tools, generation_steps)
            draft = await tool_loop(ctx, loop, messages)
            review, rewrite, rewrite_tokens = CRITIQUE_REQUEST, REWRITE_SYSTEM, 300
        if draft.status != "answered" or draft.answer is None:
            return draft
        answer, steps, conversation = draft.answer, draft.steps, draft.messages
        ctx.answer_given("draft", answer)
        for cycle in range(1, opts.cycles + 1):
            judged = await ask_structured(
                ctx,
                Form(Critique, "critique", "Say whether the answer needs refinement, and why."),
                Prompt(CRITIC_SYSTEM, (*conversation, Message("user", review))),
                opts.output,
                steps + 1,
            )
            steps += 1
            if judged.value is None:
                failure = judged.failure or "unparsed"
                unread = Outcome(failure, messages=conversation, steps=steps, error=judged.error)
                return self._unfinished(ctx, unread, answer)
            critique = judged.value
            ctx.emit(
                CritiqueEvent(
                    cycle=cycle,
                    needs_refinement=critique.needs_refinement,
                    critique=critique.critique,
                )
            )
            if not critique.needs_refinement:
                break
            if not critique.critique.strip():
                return Outcome(
                    "refused",
                    messages=conversation,
                    steps=steps,
                    error="the critique asked for changes without saying which",
                )
            request = ModelRequest(
                ctx.model_name,
                (*conversation, Message("user", f"Critique: {critique.critique}")),
                system=rewrite,
                max_output_tokens=rewrite_tokens,
            )
            response = await ctx.model.complete(request)
            steps += 1
            rewritten = answer_reply(ctx, response, conversation)
            if rewritten.answer is None:  # truncated or empty: the rewrite is not an answer
                return self._unfinished(ctx, replace(rewritten, steps=steps), answer)
            answer = rewritten.answer
            ctx.answer_given("revision", answer)
            # The rewrite replaces the draft; the critique is never part of the conversation.
            conversation = [*conversation[:-1], Message("assistant", answer)]
        return Outcome("answered", answer=answer, messages=conversation, steps=steps)

    @staticmethod
    def _unfinished(ctx: RunContext, unfinished: Outcome, answer: str) -> Outcome:
        """A critique or rewrite that did not finish. On code the last code stands (as in
        reflexion): the draft is an artefact, and losing it would count as no answer rather
        than as what the review did. Elsewhere the run ends with that status."""
        if ctx.code is None:
            return unfinished
        ctx.emit(RevisionUnfinishedEvent(status=unfinished.status, error=unfinished.error))
        return replace(unfinished, status="answered", answer=answer, error=None)


@register(
    "reflection",
    ReflectionOptions,
    "tool loop, then per cycle a critique call and (if needed) a rewrite; 1 + up to 2/cycle",
)
def reflection(options: ReflectionOptions) -> Reflection:
    return Reflection(options)
