"""A pattern's prompts as named slots an arm may override (seed 004, "Configurable
Prompts"): each slot has a built-in text, what runs send unless an arm overrides it, and
the variables it receives. A text is a Jinja2 template; an undefined variable is an error.

A pattern declares its slots once (``PROMPTS = Prompts(Slot(...), ...)``), registers them
with itself, and renders one with the run's overrides: ``PROMPTS.render(ctx, "step")``.
An arm overrides slots from a prompt file (TOML, one key per slot), checked when the arm
is parsed: an unknown slot, a variable the slot does not receive, a template that does not
parse are refused before any request (``check``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import jinja2
from jinja2 import meta

if TYPE_CHECKING:
    from harness.patterns.base import RunContext

#: Templates render as written: no escaping, a last newline kept, an unknown name an error.
_JINJA = jinja2.Environment(
    undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False
)


@dataclass(frozen=True)
class Slot:
    name: str
    default: str
    """The built-in text, a template: what runs send when no arm overrides the slot."""
    variables: tuple[str, ...] = ()
    """The variables its template receives."""
    about: str = ""
    """What the slot is for, in a few words."""


class Prompts:
    """A pattern's slots, in the order it uses them."""

    def __init__(self, *slots: Slot) -> None:
        self.slots = {slot.name: slot for slot in slots}

    def render(self, ctx: RunContext, name: str, **variables: Any) -> str:
        """Slot ``name``'s text for this run: the arm's override, else the built-in text,
        with ``variables`` filled in."""
        slot = self.slots[name]
        text = ctx.prompts.get(name)
        if text is None and not slot.variables:
            return slot.default  # the built-in text, as it always was sent
        return _template(slot.default if text is None else text).render(**variables)

    def problems(self, overrides: Mapping[str, object]) -> list[str]:
        """What is wrong with ``overrides`` for these slots, one phrase each: an unknown slot,
        a text that is not a string or does not parse, a variable the slot does not
        receive."""
        found = []
        for name, text in overrides.items():
            slot = self.slots.get(name)
            if slot is None:
                known = ", ".join(self.slots) or "none"
                found.append(f"slot {name!r} is not one of its slots ({known})")
            elif not isinstance(text, str):
                found.append(f"slot {name!r} must be a text (a TOML string)")
            else:
                found.extend(
                    f"slot {name!r}: {problem}" for problem in _template_problems(slot, text)
                )
        return found


def _template_problems(slot: Slot, text: str) -> list[str]:
    try:
        parsed = _JINJA.parse(text)
    except jinja2.TemplateSyntaxError as exc:
        return [f"not a template: {exc.message} (line {exc.lineno})"]
    unknown = sorted(meta.find_undeclared_variables(parsed) - set(slot.variables))
    if not unknown:
        return []
    receives = ", ".join(slot.variables) or "no variables"
    return [f"uses {', '.join(unknown)}, but the slot receives {receives}"]


@lru_cache(maxsize=256)
def _template(text: str) -> jinja2.Template:
    return _JINJA.from_string(text)


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
        lines += ["", f"# {slot.about or slot.name}; receives {receives}"]
        lines.append(f"{slot.name} = {_toml_text(slot.default)}")
    return "\n".join(lines) + "\n"


def _toml_text(text: str) -> str:
    """``text`` as a TOML string that reads back byte for byte: a multi-line literal string
    where it can be one (the newline after the opening quotes is not part of it)."""
    if "'''" not in text and not text.endswith("'") and "\r" not in text:
        return "'''\n" + text + "'''"
    return json.dumps(text, ensure_ascii=False)  # a TOML basic string: JSON's escapes
