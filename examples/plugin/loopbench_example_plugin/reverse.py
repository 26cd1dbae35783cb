"""reverse: a tool that spells a text backwards, which the task set ``words`` offers.
Written against loopbench's public API only."""

from pydantic import BaseModel, Field

import loopbench


class TextArgs(BaseModel):
    text: str = Field(description="The text to spell backwards.")


class ReverseOptions(loopbench.ToolOptions):
    upper: bool = False
    """Give the reversed text in capitals."""


@loopbench.register_tool("reverse", ReverseOptions, "spells a text backwards")
def reverse(source: loopbench.ToolSource, options: ReverseOptions) -> loopbench.Tool:
    def run(args: TextArgs) -> str:
        backwards = args.text[::-1]
        return backwards.upper() if options.upper else backwards

    return loopbench.Tool("reverse", "Spell a text backwards.", TextArgs, run)
