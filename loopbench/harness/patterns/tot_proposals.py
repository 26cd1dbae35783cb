"""How tot proposes a node's next steps, and what it measures of its tree.

``propose=list`` (seed 004) asks once for the node's approaches through a structured
call; ``propose=sample`` asks for one next step per call at the arm's temperature.
Either way an approach is kept only if it is distinct: its text, normalised as the
grader normalises it (case, accents, punctuation), differs from every approach already
proposed at the node. A repeat is dropped and counted, never scored and never asked for
again; a list is cut to its first ``breadth`` distinct approaches.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from loopbench.graders.exact import normalise
from loopbench.harness.events import ProposalDroppedEvent
from loopbench.harness.models.types import Message, ModelRequest
from loopbench.harness.patterns.base import RunContext
from loopbench.harness.patterns.prompts import Slot
from loopbench.harness.patterns.structured import Form, OutputMode, Prompt, ask_structured

SAMPLE_SYSTEM = (
    "You are solving the question step by step. Write only the next single step of "
    "reasoning, in one or two sentences."
)
LIST_SYSTEM = (
    "You are solving the question step by step. Propose {{ breadth }} distinct next steps of "
    "reasoning, each a different approach in one or two sentences. Call approaches with them."
)
#: The proposal prompts, slots of tot: ``branch`` lists a node's approaches in one call,
#: ``branch_sample`` asks for one next step per call.
BRANCH_SLOTS = (
    Slot(
        "branch",
        LIST_SYSTEM,
        ("breadth",),
        about="the system prompt asking for breadth distinct next steps (propose=list)",
    ),
    Slot("branch_sample", SAMPLE_SYSTEM, about="the system prompt for one step (propose=sample)"),
)
STEP_TOKENS = 120  # completion limit of one proposed step


class Approaches(BaseModel):
    approaches: list[str] = Field(min_length=1, description="Distinct next steps, one each.")


@dataclass
class Search:
    """What the search measured: the tree it actually grew."""

    nodes_expanded: int = 0
    proposals: int = 0
    duplicate_proposals: int = 0
    truncated_proposals: int = 0
    unparsed_proposals: int = 0
    unscored: int = 0
    levels: int = 0

    def metrics(self) -> dict[str, float]:
        return {k: float(v) for k, v in vars(self).items()}


@dataclass
class Proposals:
    """The proposals made at one node, whose state (question and path) is ``state``."""

    ctx: RunContext
    search: Search
    path: tuple[str, ...]
    state: str
    seen: set[str] = field(default_factory=set)

    async def listed(
        self, system: str, breadth: int, temperature: float, mode: OutputMode
    ) -> list[str]:
        """One structured call under ``system`` (the rendered ``branch`` slot); its first
        ``breadth`` distinct approaches (none if it failed)."""
        ctx = self.ctx
        proposed = await ask_structured(
            ctx,
            Form(Approaches, "approaches", "Submit the distinct next steps."),
            Prompt(
                system,
                (Message("user", self.state),),
                temperature=temperature,
                max_output_tokens=STEP_TOKENS * breadth,
            ),
            mode,
            ctx.model.calls + 1,
        )
        if proposed.value is None:
            self.search.truncated_proposals += proposed.failure == "truncated"
            self.search.unparsed_proposals += proposed.failure != "truncated"
            self._dropped(proposed.failure or "unparsed")
            return []
        kept: list[str] = []
        for approach in proposed.value.approaches:
            # guard: tot-list-cut-breadth
            if len(kept) == breadth:
                break
            if self.distinct(approach):
                kept.append(approach)
        return kept

    async def sampled(self, system: str, temperature: float) -> str | None:
        """One next step sampled under ``system`` (the rendered ``branch_sample`` slot), or
        None when it was cut off, empty or a repeat."""
        request = ModelRequest(
            self.ctx.model_name,
            (Message("user", self.state),),
            system=system,
            temperature=temperature,
            max_output_tokens=STEP_TOKENS,
        )
        response = await self.ctx.model.complete(request)
        # guard: truncation-tot-sampled-proposals
        if response.truncated:
            self.search.proposals += 1
            self.search.truncated_proposals += 1
            self._dropped("truncated")
            return None
        proposal = response.message.content.strip()
        return proposal if self.distinct(proposal) else None

    def distinct(self, approach: str) -> bool:
        """Whether ``approach`` is new at this node; a repeat (or a blank) is dropped."""
        self.search.proposals += 1
        key = normalise(approach)
        # guard: tot-repeated-approach-dropped
        if key and key not in self.seen:
            self.seen.add(key)
            return True
        self.search.duplicate_proposals += bool(key)
        self._dropped("duplicate" if key else "empty", approach)
        return False

    def _dropped(self, reason: str, text: str = "") -> None:
        self.ctx.emit(ProposalDroppedEvent(path=[*self.path], reason=reason, text=text))
