"""A pattern's prompts as named slots an arm may override (seed 004, "Configurable
Prompts"): each slot has a built-in text, what runs send unless an arm overrides it, and
the variables it receives. A text is a Jinja2 template that can only fill in those
variables (``loopbench.harness.slot_templates``): it renders in a sandbox, bounded in size.

A pattern declares its slots once (``PROMPTS = Prompts(Slot(...), ...)``), registers them
with itself, and renders one with the run's overrides: ``PROMPTS.render(ctx, "step")``.
An arm overrides slots from a prompt file (TOML, one key per slot), checked when the arm
is parsed: an unknown slot, a variable the slot does not receive, a template that does not
parse or holds more than text and variables, a variable written Python's way
(``{question}``) are refused before any request (``problems``).

An override must also reach the model and keep what the run needs (``unsent``), as each
slot declares next to its text and one function checks for every pattern: a slot shown
only as another slot's variable (``shown_in``: react's ``thought`` is ``system``'s
``{{ thought }}``) is refused when that slot's text, as the arm has it, leaves the
variable out; a slot's text must keep the variables it ``needs``, which its requests show
nowhere else (a step's message its ``{{ step }}``, a pipeline's handover the
``{{ answer }}`` of the stage before).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from loopbench.harness.slot_templates import (
    SlotTooLarge,
    python_style,
    render,
    template_problem,
    used_variables,
)

if TYPE_CHECKING:
    from loopbench.harness.patterns.base import RunContext


@dataclass(frozen=True)
class Slot:
    name: str
    default: str
    """The built-in text, a template: what runs send when no arm overrides the slot."""
    variables: tuple[str, ...] = ()
    """The variables its template receives."""
    about: str = ""
    """What the slot is for, in a few words."""
    needs: tuple[str, ...] = ()
    """The variables its text must use: what its requests show nowhere else and the run
    means nothing without (the step a step's message asks for)."""
    shown_in: tuple[str, str] | None = None
    """(slot, variable): its text reaches the model only as that variable of that slot."""


class Prompts:
    """A pattern's slots, in the order it uses them."""

    def __init__(self, *slots: Slot) -> None:
        self.slots = {slot.name: slot for slot in slots}

    def render(self, ctx: RunContext, name: str, **variables: Any) -> str:
        """Slot ``name``'s text for this run: the arm's override, else the built-in text,
        with ``variables`` filled in; ``SlotTooLarge`` if that makes it longer than its
        variables by more than ``MAX_SLOT_TEXT`` characters."""
        slot = self.slots[name]
        text = ctx.prompts.get(name)
        if text is None and not slot.variables:
            return slot.default  # the built-in text, as it always was sent
        try:
            return render(slot.default if text is None else text, variables)
        except SlotTooLarge as exc:
            raise SlotTooLarge(
                f"prompt slot {name!r} {exc} (its variables' text and 1 MiB); nothing of it "
                "was sent"
            ) from None

    def problems(self, overrides: Mapping[str, object]) -> list[str]:
        """What is wrong with ``overrides`` for these slots, one phrase each: an unknown slot,
        a text that is not a string or does not parse, a variable the slot does not
        receive, anything in it beyond text and the slot's variables, ``{name}`` written
        for a variable (``{question}``: Python's way, which Jinja2 sends as written); then,
        if none of those, what ``unsent`` finds."""
        found = []
        for name, text in overrides.items():
            slot = self.slots.get(name)
            if slot is None:
                known = ", ".join(self.slots) or "none"
                # guard: prompts-unknown-slot-refused
                found.append(f"slot {name!r} is not one of its slots ({known})")
            elif not isinstance(text, str):
                found.append(f"slot {name!r} must be a text (a TOML string)")
            elif problem := template_problem(text, slot.variables):
                found.append(f"slot {name!r}: {problem}")
            # guard: variable-written-name-refused
            elif written := python_style(text, {"question", *slot.variables, *self.variables}):
                variable, line = written
                found.append(
                    f"slot {name!r} writes {{{variable}}} on line {line} of its text, which "
                    f"would be sent as written: a variable is written {{{{ {variable} }}}}"
                    + ("" if variable in slot.variables else f" ({_receives(slot)})")
                )
        # guard: prompt-file-promises-checked-with
        return found or self.unsent({k: str(v) for k, v in overrides.items()})

    @property
    def variables(self) -> set[str]:
        """Every variable one of the slots receives."""
        return {variable for slot in self.slots.values() for variable in slot.variables}

    def unsent(self, overrides: Mapping[str, str]) -> list[str]:
        """Why ``overrides`` (that ``problems`` passed) would not reach the model, or would
        leave out what the run needs, one phrase each: a slot shown only in a slot whose
        text leaves it out, a text that drops a variable its slot ``needs``. A text that is
        the slot's built-in one changes nothing sent: a printed prompt file given back whole
        is taken."""
        found = []
        for name, text in overrides.items():
            slot = self.slots[name]
            if text == slot.default:
                continue
            if hidden := self._hidden_by(slot, overrides):
                host, variable = hidden
                found.append(
                    f"slot {name!r} would never reach the model: it is shown only as "
                    f"{{{{ {variable} }}}} in slot {host!r}, whose text leaves "
                    f"{{{{ {variable} }}}} out; add it there"
                )
            # guard: slot-text-must-keep-variables
            elif missing := [v for v in slot.needs if v not in used_variables(text)]:
                *others, last = ["{{ " + v + " }}" for v in missing]
                shown = f"{', '.join(others)} and {last}" if others else last
                them = "them" if len(missing) > 1 else "it"
                found.append(
                    f"slot {name!r} leaves out {shown}: its requests show {them} nowhere else, "
                    f"so the model would never see {them}; keep {shown} in its text"
                )
        return found

    def _hidden_by(self, slot: Slot, overrides: Mapping[str, str]) -> tuple[str, str] | None:
        """The slot and variable that should show ``slot`` and, as ``overrides`` have its
        text, do not (following a slot shown in one shown in another); None if it is shown."""
        seen = {slot.name}
        while slot.shown_in is not None and slot.shown_in[0] not in seen:
            host, variable = self.slots[slot.shown_in[0]], slot.shown_in[1]
            if variable not in used_variables(overrides.get(host.name, host.default)):
                # guard: slot-shown-only-another-slot
                return host.name, variable
            seen.add(host.name)
            slot = host
        return None


def _receives(slot: Slot) -> str:
    if not slot.variables:
        return "though this slot receives no variables"
    return "though this slot receives only " + ", ".join(slot.variables)


def prompts_hash(overrides: Mapping[str, str]) -> str | None:
    """A short hash of the slots an arm overrode, as records keep it; None for none."""
    if not overrides:
        return None
    canonical = json.dumps(dict(overrides), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]


def prompt_file(pattern: str, prompts: Prompts) -> str:
    """``pattern``'s slots (``prompts``) as a prompt file (TOML): each slot's built-in text
    under its name, with what it is for and the variables it receives in a comment above
    it. Saved and edited, it is what ``prompts=FILE`` takes; a slot left as it is sends
    its built-in text."""
    lines = [
        f"# {pattern}'s prompts: one key per slot, each a Jinja2 template. Keep the slots",
        "# you change (a slot left out sends its built-in text) and give the file to an arm:",
        f"# --arm {pattern}:prompts=FILE",
    ]
    if not prompts.slots:
        lines.append(f"# {pattern} declares no prompt slots.")
    for slot in prompts.slots.values():
        receives = ", ".join("{{ " + v + " }}" for v in slot.variables) or "no variables"
        lines += ["", f"# {slot.about or slot.name}; receives {receives}{_promises(slot)}"]
        lines.append(f"{slot.name} = {_toml_text(slot.default)}")
    return "\n".join(lines) + "\n"


def _promises(slot: Slot) -> str:
    """What an override of ``slot`` must keep to reach the model, as the printed file says."""
    said = ""
    if slot.needs:
        said += "; must keep " + ", ".join("{{ " + v + " }}" for v in slot.needs)
    if slot.shown_in:
        said += f"; sent only as {{{{ {slot.shown_in[1]} }}}} in {slot.shown_in[0]}"
    return said


def _toml_text(text: str) -> str:
    """``text`` as a TOML string that reads back byte for byte: a multi-line literal string
    where it can be one (the newline after the opening quotes is not part of it)."""
    if "'''" not in text and not text.endswith("'") and "\r" not in text:
        return "'''\n" + text + "'''"
    return json.dumps(text, ensure_ascii=False)  # a TOML basic string: JSON's escapes
