"""Arms: one configuration to measure, written ``PATTERN`` or ``PATTERN:key=value,...``.

An arm's identity is the pattern plus the options the user set, sorted, values
canonical (booleans as on/off): ``react_text:guard=on``. Defaults are not part of it,
so adding an option with a default renames no arm and a regression check across a
release still matches arms. Records keep the full resolved options beside it, and
``compare`` says when a matched arm's resolved options differ (a default changed).

A pipeline's stages are arms of their own, written ``PATTERN;key=value;...`` with ``>``
between two, since ``,`` separates the pipeline's options:
``pipeline:max_steps=12,stages=plan_execute>react_text;guard=on``. A pipeline with no
options of its own may be written as its stages alone, each as an arm:
``plan_execute>react_text:guard=on`` is that pipeline, named as the long form is.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from loopbench.harness.errors import BadInput
from loopbench.harness.files import read_toml
from loopbench.harness.patterns.base import Pattern, PatternOptions
from loopbench.harness.patterns.catalog import lookup
from loopbench.harness.patterns.limits import Limited
from loopbench.harness.patterns.pipeline import PipelineOptions
from loopbench.harness.patterns.prompts import prompts_hash
from loopbench.harness.patterns.registry import PatternInfo, UnknownPattern
from loopbench.harness.reasoning import unset_reasoning
from loopbench.harness.tools import ToolChoices
from loopbench.tasks.tool_registry import ToolOptionsError, UnknownTool, check_tool_choices


class ArmError(BadInput):
    """An arm that cannot be run as written: its pattern, its options or its prompts."""


class ArmFileError(ArmError):
    """An arm an experiment file writes, refused for its text: said at the file's line."""


class PromptFileError(ArmError):
    """A prompt file an arm cannot take: said in one line, naming the file and the slot."""


@dataclass(frozen=True)
class Arm:
    """One configuration to measure, resolved once when it is made: its identity, its
    options as records keep them, and its pattern, built inside its run limits, which every
    run of the arm runs (a pattern keeps no state of a run)."""

    info: PatternInfo
    options: PatternOptions
    prompts: Mapping[str, str] = field(default_factory=dict, hash=False)
    """The slots whose text this arm overrides (``loopbench.harness.patterns.prompts``)."""
    prompts_name: str = ""
    """What the arm's name calls its prompts: the prompt file's stem."""
    built: Pattern | None = field(default=None, compare=False, repr=False)
    """Its pattern, when built already (``parse_arm`` builds it to check its call floor)."""

    pattern: str = field(init=False, compare=False, repr=False)
    """The pattern's name."""
    spec: str = field(init=False, compare=False, repr=False)
    """The arm's identity: the pattern and the options set explicitly, sorted."""
    resolved: dict[str, Any] = field(init=False, compare=False, repr=False)
    """Every option's value, defaults included, as records keep them; with overridden
    prompts, their text by slot; a pipeline's stages, each resolved with its pattern."""
    prompt_overrides: dict[str, str] = field(init=False, compare=False, repr=False)
    """Every slot the arm overrides, its stages' too (``stage N.SLOT``)."""
    prompts_hash: str | None = field(init=False, compare=False, repr=False)
    """The short hash of ``prompt_overrides`` records keep; None for none."""
    takes_tools: bool = field(init=False, compare=False, repr=False)
    """The arm calls the task set's tools: its pattern does, or one of its stages."""
    tool_choices: ToolChoices = field(init=False, compare=False, repr=False)
    """What its options choose of the tools (``tool=improved``), by tool."""
    runnable: Pattern = field(init=False, compare=False, repr=False)
    """Its pattern inside the run limits its options set."""

    def __post_init__(self) -> None:
        stages = self.stages
        overrides = dict(self.prompts)
        for number, stage in enumerate(stages, start=1):
            overrides |= {f"stage {number}.{slot}": text for slot, text in stage.prompts.items()}
        values = self.options.model_dump(exclude=unset_reasoning(self.options))
        if stages:
            values["stages"] = [{"pattern": s.pattern} | s.resolved for s in stages]
        resolved = {
            "pattern": self.info.name,
            "spec": _written(self.info.name, self.set_options),
            "resolved": values | {"prompts": dict(self.prompts)} if self.prompts else values,
            "prompt_overrides": overrides,
            "prompts_hash": prompts_hash(overrides),
            "takes_tools": self.options.takes_tools or any(s.takes_tools for s in stages),
            "tool_choices": self.options.tool_options(),
            "runnable": Limited(self.built or self.info.build(self.options), self.options),
        }
        for name, value in resolved.items():
            object.__setattr__(self, name, value)  # frozen: set once, here

    @property
    def stages(self) -> tuple[Arm, ...]:
        """A pipeline's stages, each an arm of its own; none for any other pattern."""
        if not isinstance(self.options, PipelineOptions):
            return ()
        return tuple(s for s in self.options.parsed_stages if isinstance(s, Arm))

    @property
    def set_options(self) -> dict[str, Any]:
        """The options set explicitly; with overridden prompts, ``prompts`` their name."""
        values = self.options.model_dump(include=self.options.model_fields_set)
        if self.prompts:
            # guard: prompts-arm-named-after-prompt
            values["prompts"] = self.prompts_name
        return values

    def build(self) -> Pattern:
        """The arm's pattern inside the run limits its options set (built once)."""
        return self.runnable


def _written(pattern: str, values: dict[str, Any], colon: str = ":", comma: str = ",") -> str:
    if not values:
        return pattern
    return pattern + colon + comma.join(f"{k}={show_value(values[k])}" for k in sorted(values))


def show_value(value: object) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):  # every digit kept: 0.1234567 and 0.1234568 are two arms
        return str(int(value)) if value.is_integer() else repr(value)
    return str(value)


def arm_identity(text: str) -> str:
    """``text`` as an arm identity (options sorted, values canonical); as given if unparsable."""
    try:
        return parse_arm(text).spec
    except (UnknownPattern, ArmError):
        return text


def parse_arm(text: str) -> Arm:
    if (written := pipeline_written(text)) is not None:
        try:
            return parse_arm(written)
        except (UnknownPattern, ArmError) as exc:  # said of the arm as it was given
            said = str(exc).replace(f"arm {written!r}", f"arm {text!r}", 1)
            raise type(exc)(said) from None
    name, _, rest = text.strip().partition(":")
    info = lookup(name.strip())  # the allowlist check comes first, before any option parsing
    raw: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or not key:
            raise ArmError(f"arm {text!r}: {part!r} is not key=value")
        if key in raw:
            raise ArmError(f"arm {text!r}: option {key!r} is given twice")
        raw[key] = value.strip()
    prompts, prompts_name = _prompt_file(text, info, raw.pop("prompts", None))
    fields = info.options_model.model_fields
    unknown = sorted(set(raw) - set(fields))
    if unknown:
        choices = ", ".join(sorted(fields)) or "none"
        staged = " (a stage's own options follow it after ';')" if "stages" in fields else ""
        raise ArmError(
            f"arm {text!r}: {info.name} has no option {unknown[0]!r}; its options: "
            f"{choices}{staged}"
        )
    try:
        options = info.options_model.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{e['loc'][0]}={raw.get(str(e['loc'][0]))!r}: {_said(e['msg'])}"
            if e["loc"]
            else _said(e["msg"])
            for e in exc.errors()
        )
        raise ArmError(f"arm {text!r}: {problems} (booleans are on/off)") from None
    if isinstance(options, PipelineOptions):
        options = _with_stages(text, options)
    try:  # a plugin pattern's options for the tools, refused before any run
        # guard: arm-options-for-tools-checked
        check_tool_choices(options.tool_options())
    except (UnknownTool, ToolOptionsError) as exc:
        raise ArmError(f"arm {text!r}: {exc}") from None
    built, floor = info.build_with_floor(options)  # a run that cannot finish: refused
    # guard: arm-below-pattern-call-floor
    if options.max_steps < floor.calls:
        raise ArmError(
            f"arm {text!r}: {info.name} needs max_steps of at least {floor.calls} "
            f"({floor.why}); max_steps is {options.max_steps}"
        )
    return Arm(info, options, prompts, prompts_name, built)


def _said(message: str) -> str:
    """A validator's own words, without pydantic's prefix."""
    return message.removeprefix("Value error, ")


def pipeline_written(text: str) -> str | None:
    """Arm ``text`` written as its stages alone (``a>b:guard=on``, each stage an arm or a
    stage as the long form writes it) as the pipeline's long form
    (``pipeline:stages=a>b;guard=on``); None for an arm that is not written so."""
    if (stages := _stages_alone(text)) is None:
        return None
    written = []
    for stage in stages:
        pattern, _, options = stage.partition(":")
        written.append(";".join([pattern.strip(), *filter(None, options.split(","))]))
    return "pipeline:stages=" + ">".join(written)


def _stages_alone(text: str) -> list[str] | None:
    """The stages of arm ``text`` written as its stages alone, each as an arm
    (``PATTERN:key=value,...``); None for an arm that is not written so."""
    # guard: stages-alone-pipeline
    if ">" not in text or text.partition(":")[0].strip() == "pipeline":
        return None
    stages = []
    for stage in (s.strip() for s in text.strip().split(">")):
        pattern, semicolon, options = stage.partition(";")  # the long form's way: an arm's
        as_arm = f"{pattern}:{options.replace(';', ',')}" if semicolon and ":" not in stage else ""
        stages.append(as_arm or stage)
    return stages


def _with_stages(text: str, options: PipelineOptions) -> PipelineOptions:
    """A pipeline's options holding its stages, each parsed as an arm, and ``stages`` written
    canonically; ``ArmError`` in one line, naming the stage, otherwise."""
    stages = [_stage(text, n, s) for n, s in enumerate(options.stages.split(">"), start=1)]
    if len(stages) < 2:
        raise ArmError(f"arm {text!r}: a pipeline chains two stages or more: PATTERN>PATTERN")
    tools: dict[str, Mapping[str, str]] = {}
    for number, stage in enumerate(stages, start=1):
        for tool, choice in stage.options.tool_options().items():
            # guard: pipeline-two-stages-giving-one
            if tools.setdefault(tool, choice) != choice:
                raise ArmError(
                    f"arm {text!r}: stage {number} gives the tool {tool!r} {dict(choice)}, a "
                    f"stage before it {dict(tools[tool])}: a run has one set of tools, give "
                    "every stage the same"
                )
    canonical = ">".join(_written(s.pattern, s.set_options, ";", ";") for s in stages)
    if canonical != options.stages:  # the default is canonical, and stays unset
        options = options.model_copy(update={"stages": canonical})
    return options.with_stages(stages)


def _stage(text: str, number: int, written: str) -> Arm:
    """Stage ``number`` of pipeline arm ``text``, written ``PATTERN;key=value;...``."""
    pattern, _, rest = written.strip().partition(";")
    if not pattern.strip() or ":" in pattern:
        raise ArmError(
            f"arm {text!r}: stage {number} is {written!r}; write a stage as PATTERN or "
            "PATTERN;key=value;... (stages=plan_execute>react_text;guard=on)"
        )
    inner = f"{pattern}:{rest.replace(';', ',')}"
    try:
        stage = parse_arm(inner)
    except (UnknownPattern, ArmError) as exc:
        why = str(exc).removeprefix(f"arm {inner!r}: ")
        raise type(exc)(f"arm {text!r}: stage {number}: {why}") from None
    if stage.stages:
        raise ArmError(f"arm {text!r}: stage {number} is a pipeline; list its stages instead")
    return stage


#: The largest prompt file read: a prompt is a few pages; its texts go into every request.
MAX_PROMPT_FILE_BYTES = 2**20


def _prompt_file(text: str, info: PatternInfo, given: str | None) -> tuple[dict[str, str], str]:
    """The slots a prompt file (``prompts=FILE``, TOML: one key per slot) overrides, and its
    stem, checked against the pattern's slots; ``ArmError`` in one line otherwise."""
    if given is None:
        return {}, ""
    path = Path(given)
    where = f"arm {text!r}: prompts={given}"
    expected = (
        f"a TOML prompt file, one key per slot of {info.name} "
        f"(loopbench patterns {info.name} --prompts)"
    )

    def refused(why: str) -> PromptFileError:
        return PromptFileError(f"{where}: {why}")

    # guard: templates-prompt-file-over-1
    data, _ = read_toml(path, refused, expected, MAX_PROMPT_FILE_BYTES)
    if problems := info.prompts.problems(data):
        raise PromptFileError(f"{where}: {'; '.join(problems)}")
    return data, path.stem


def arm(spec: str, prompts: Mapping[str, str] | None = None, name: str = "") -> Arm:
    """An arm for the API: ``spec`` as on the command line, its prompt slots overridden by
    ``prompts`` (text by slot, checked as a prompt file is), and ``prompts=NAME`` in its
    identity (default: the texts' short hash)."""
    parsed = parse_arm(spec)
    if not prompts:
        return parsed
    if parsed.prompts:
        raise PromptFileError(
            f"arm {spec!r}: give its prompts as prompts=FILE or prompts=, not both"
        )
    if problems := parsed.info.prompts.problems(prompts):
        raise PromptFileError(f"arm {spec!r}: prompts: {'; '.join(problems)}")
    return replace(parsed, prompts=dict(prompts), prompts_name=name or str(prompts_hash(prompts)))


#: A prompt file an arm or a stage names: what follows ``prompts=`` up to the next option.
_PROMPT_FILE = re.compile(r"(?<=prompts=)[^,;>]+")


def prompt_files_in(spec: str, folder: Path) -> str:
    """``spec`` with each relative prompt file it names (the arm's or a stage's) that stands
    in ``folder`` named by its path there: an experiment file's arms name theirs from the
    file's folder, as its task set is; a Ray worker reads them at the driver's paths."""

    def there(found: re.Match[str]) -> str:
        given = Path(found.group(0))
        path = folder / given
        return str(path.resolve()) if not given.is_absolute() and path.is_file() else str(given)

    return _PROMPT_FILE.sub(there, spec)


#: The most arms one grid may stand for; a typo in a grid should not exhaust memory.
MAX_GRID = 10_000


def expand_grid(text: str) -> list[str]:
    """``react_text:guard=on|off,tool=plain|improved`` -> the four arms it stands for; a
    pipeline written as its stages alone, each stage's grid: ``cot|direct>react_text``
    -> the two pipelines."""
    # guard: grid-stages-alone-each-stage
    if "|" in text and (stages := _stages_alone(text)) is not None:
        grids = [expand_grid(stage) for stage in stages]
        size = math.prod(len(grid) for grid in grids)
        if size > MAX_GRID:
            raise ArmError(
                f"arm {text!r} stands for {size} arms, more than {MAX_GRID}; split it into "
                "smaller grids"
            )
        return [">".join(combo) for combo in itertools.product(*grids)]
    name, colon, rest = text.strip().partition(":")
    names = [n.strip() for n in name.split("|")]
    choices: list[list[str]] = []
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, values = part.partition("=")
        choices.append([f"{key}{eq}{v.strip()}" for v in values.split("|")] if eq else [part])
    size = math.prod(len(c) for c in choices) * len(names)
    if size > MAX_GRID:
        raise ArmError(
            f"arm {text!r} stands for {size} arms, more than {MAX_GRID}; split it into "
            "smaller grids"
        )
    return [
        f"{n}{colon}{','.join(combo)}" if combo else n
        for n in names
        for combo in itertools.product(*choices)
    ]


def parse_arms(
    given: Sequence[str | Arm], written_at: Callable[[str], str | None] | None = None
) -> list[Arm]:
    """Parse every arm (grids expanded; an Arm is taken as it is); refuse two that run the
    same configuration. ``written_at`` says where a file writes an arm, for its refusal."""
    arms: dict[str, Arm] = {}
    for item in given:
        try:
            texts = [item] if isinstance(item, Arm) else expand_grid(item)
            parsed = [text if isinstance(text, Arm) else parse_arm(text) for text in texts]
        except BadInput as exc:
            where = written_at(item) if written_at and isinstance(item, str) else None
            if where is None:
                raise
            raise ArmFileError(f"{where}: {exc}") from None
        for text, arm in zip(texts, parsed, strict=True):
            resolved = _written(arm.pattern, arm.resolved)
            named = next((a for a in arms.values() if a.spec == arm.spec), None)
            # guard: prompts-two-prompt-files-one
            if named is not None and resolved not in arms:
                raise ArmError(
                    f"two arms are named {arm.spec!r} with other prompts: give their prompt "
                    "files names of their own"
                )
            if resolved in arms:
                shown = text.spec if isinstance(text, Arm) else text
                raise ArmError(
                    f"arm {shown!r} runs the same configuration as {arms[resolved].spec!r}; "
                    "give it once"
                )
            arms[resolved] = arm
    return list(arms.values())
