"""ask_twice: ask, then ask again showing the first reply; the second reply is the answer.
Its second question is a prompt slot, ``check``, which an arm may override with a prompt
file (``ask_twice:prompts=FILE``; ``loopbench patterns ask_twice --prompts`` prints one).
Written against loopbench's public API only."""

from dataclasses import dataclass

import loopbench

PROMPTS = loopbench.Prompts(
    loopbench.Slot(
        "check",
        "Check that answer; reply again.",
        variables=("question",),
        about="the second question, asked after the first reply",
    )
)


class AskTwiceOptions(loopbench.PatternOptions):
    pass


@dataclass(frozen=True)
class AskTwice:
    options: AskTwiceOptions
    name: str = "ask_twice"

    def call_floor(self) -> loopbench.CallFloor:
        return loopbench.CallFloor(2, "a first reply and a second look at it")

    async def run(self, ctx: loopbench.RunContext) -> loopbench.Outcome:
        check = PROMPTS.render(ctx, "check", question=ctx.question)
        messages = [loopbench.Message("user", ctx.question)]
        for _ in range(2):
            request = loopbench.ModelRequest(model=ctx.model_name, messages=tuple(messages))
            reply = (await ctx.model.complete(request)).message
            messages += [reply, loopbench.Message("user", check)]
        return loopbench.Outcome("answered", answer=reply.content, messages=messages, steps=2)


@loopbench.register_pattern("ask_twice", AskTwiceOptions, "asks, then asks again; 2 calls", PROMPTS)
def ask_twice(options: AskTwiceOptions) -> AskTwice:
    return AskTwice(options)
