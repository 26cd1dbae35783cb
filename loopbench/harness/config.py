"""A run's settings in one shape: ``RunConfig``.

``loopbench run``'s flags, an experiment file (``--experiment``) and the Python API all
build one; ``Experiment`` runs it, and Ray workers receive it as it is (it holds no key:
a key is read, by its variable's name, where the requests are sent). An experiment file
is a ``RunConfig`` written in TOML: every field below may appear in one, and flags given
on the command line win over it.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError

from loopbench.harness.errors import BadInput
from loopbench.harness.files import read_text, read_toml, toml_line, toml_problems
from loopbench.harness.models.endpoint import DEFAULT_KEY_ENV as DEFAULT_KEY_ENV
from loopbench.harness.models.local import CHAT_FORMATS as CHAT_FORMATS  # the command's choices
from loopbench.harness.reasoning import BudgetOption, EffortOption
from loopbench.harness.results.published import PublishedResult
from loopbench.harness.sampling import Sampling
from loopbench.harness.stats.separation import SeparationRule
from loopbench.harness.trace import MAX_TEXT
from loopbench.tasks.mcp_settings import McpServerSettings


class ConfigError(BadInput):
    """A run's settings that cannot be run (exit code 2): the message names the field."""


def _filled(what: str, hint: str = "") -> AfterValidator:
    """Refuses a blank text where ``what`` is named (a blank folder would be the current
    one, a blank price table the shipped one: neither what was meant)."""

    def check(value: str) -> str:
        if not value.strip():
            raise PydanticCustomError("blank", f"must name {what}, not be blank{hint}")
        return value

    return AfterValidator(check)


#: Characters an arm's text is written with: an arm table's values may not hold them.
ARM_MARKS = ",;>|"
ARM_TABLE_EXAMPLE = '{pattern = "pipeline", stages = [{pattern = "cot"}, {pattern = "direct"}]}'


class StageTable(BaseModel):
    """An arm, or a pipeline's stage, written as a table: ``{pattern = "react_text", guard =
    true}``; its other keys are its options (``prompts`` a prompt file)."""

    model_config = ConfigDict(extra="allow", frozen=True)
    __pydantic_extra__: dict[str, bool | int | float | str]
    pattern: str = Field(min_length=1)

    @model_validator(mode="after")
    def _no_marks(self) -> StageTable:
        for key, value in [("pattern", self.pattern), *(self.model_extra or {}).items()]:
            marks = ARM_MARKS + ":" if key == "pattern" else ARM_MARKS
            if any(mark in str(value) for mark in marks):
                raise ValueError(f"{key} {value!r} holds one of {' '.join(marks)}")
        return self

    def options(self) -> list[str]:
        """Its options as an arm's text writes them."""
        extra = (self.model_extra or {}).items()
        return [f"{k}={('on' if v else 'off') if isinstance(v, bool) else v}" for k, v in extra]


class ArmTable(StageTable):
    """An arm written as a table; a pipeline's ``stages`` a list of tables, each a stage
    with options of its own: ``{pattern = "pipeline", stages = [{pattern = "cot"},
    {pattern = "react_text", guard = true}]}``."""

    stages: list[StageTable] | None = None

    @property
    def text(self) -> str:
        """The arm as ``--arm`` takes it (``pipeline:stages=cot>react_text;guard=on``)."""
        options = self.options()
        if self.stages is not None:
            stages = (";".join([s.pattern, *s.options()]) for s in self.stages)
            options.append("stages=" + ">".join(stages))
        return f"{self.pattern}:{','.join(options)}" if options else self.pattern


def _table_as_text(value: object) -> object:
    """An arm written as a table, as the text it stands for; any other value as it is."""
    if not isinstance(value, dict):
        return value
    try:
        return ArmTable.model_validate(value, strict=True).text
    except ValidationError as exc:
        first = exc.errors()[0]
        loc, why = first["loc"], first["msg"].removeprefix("Value error, ")
        if loc and loc[-1] in ("bool", "int", "float", "str"):  # an option's types, each failed
            loc, why = loc[:-1], "an option's value is a text, a number, or true or false"
        where = ".".join(str(part) for part in loc) or "it"
        message = f"an arm table's {where}: {why} (e.g. {ARM_TABLE_EXAMPLE})"
        raise PydanticCustomError("arm_table", "{message}", {"message": message}) from None


#: An arm as text, or as a table (``ArmTable``) read as the text it stands for.
ArmText = Annotated[str, BeforeValidator(_table_as_text)]


class ModelEntry(BaseModel):
    """One model of a grid: its name and where it is served."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    name: str = Field(min_length=1)
    """The model name sent to the endpoint, recorded in every run and priced as itself."""
    base_url: Annotated[str, _filled("a URL")] | None = None
    """Its OpenAI-compatible endpoint; ``base_urls`` or LOOPBENCH_BASE_URL when unset."""
    api_key_env: Annotated[str, _filled("a variable")] | None = None
    """The variable holding its API key; ``api_key_env``'s when unset."""
    provider: Literal["openai", "anthropic"] | None = None
    """The API it is spoken to in; ``provider``'s when unset."""


class JudgeConfig(BaseModel):
    """The judge's endpoint (``[judge]``, ``--judge-model``, ``--judge-base-url``): the model
    a grader asks for its verdicts (the ``judge`` grader), apart from the runs' models."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    model: Annotated[str, _filled("the judge's model")] | None = None
    """The judge's model name, sent to its endpoint and priced as itself."""
    base_url: Annotated[str, _filled("a URL")] | None = None
    """Its endpoint; the runs' (``base_urls``, LOOPBENCH_BASE_URL) when unset."""
    api_key_env: Annotated[str, _filled("a variable")] | None = None
    """The variable holding its API key; the runs' ``api_key_env`` when unset."""
    provider: Literal["openai", "anthropic"] | None = None
    """The API it is spoken to in; chosen as the runs' is when unset."""


class RunConfig(BaseModel):
    """Everything a grid run needs to be made, as plain data."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    # What runs.
    tasks: str = Field(default="depot", min_length=1)
    """A built-in task set's name, a folder, or a data file (CSV, JSONL, Parquet, Inspect or
    promptfoo; a relative path is read from an experiment file's folder)."""
    grader: Annotated[str, _filled("a grader")] | None = None
    """The grader instead of the set's own, and its options: ``NAME`` or ``NAME:K=V,...``."""
    columns: dict[str, Annotated[str, _filled("a column")]] = Field(default_factory=dict)
    """A data file's columns: the one holding ``question``, ``answer``, ``id``, ``choices``."""
    mcp: list[McpServerSettings] = Field(default_factory=list)
    """MCP servers whose tools are offered beside the set's own, as a taskset.toml's
    ``[[mcp]]`` (docs/tools.md); a command is run from the experiment file's folder."""
    preset: Annotated[str, _filled("a preset")] | None = None
    """The dataset a data file is (``gsm8k``, ``mmlu``, ...), read as it is published."""
    arms: list[ArmText] = Field(default_factory=list)
    """Arm specs; ``a|b`` alternatives expand into every combination. An arm may be a table
    (``ArmTable``), a pipeline's stages a list of tables."""
    repeats: int = Field(default=1, ge=1)
    """Runs of every (model, arm, task)."""
    limit: int | None = Field(default=None, ge=1)
    """Only the first N tasks; the folder stays tied to the whole set (a data file's, to
    the tasks read: the first N, and those a later run reads)."""
    slice: Annotated[str, _filled("a slice")] | None = None
    """Only the tasks of this slice (``hard-100``); the folder stays tied to the whole set."""
    plugins: list[str] = Field(default_factory=list)
    """Modules imported first, so the patterns or task sets they register can run."""
    until_separated: bool = False
    """Run in rounds until the arms are told apart (``loopbench.harness.stats.separation``)."""
    max_repeats: int | None = Field(default=None, ge=1)
    """With until_separated: rounds at most (10)."""
    margin: float | None = Field(default=None, ge=0, le=1, allow_inf_nan=False)
    """With until_separated: a difference within this counts as none (0.05)."""
    alpha: float | None = Field(default=None, gt=0, lt=1, allow_inf_nan=False)
    """With until_separated: the chance of declaring identical arms different (0.05)."""
    published: dict[str, PublishedResult] = Field(default_factory=dict)
    """What a paper reported for some of the arms (``[published."ARM"]``, ARM one of
    ``arms``): recorded in the results folder, shown beside the measured accuracy."""

    # Where the requests go.
    models: list[ModelEntry] = Field(default_factory=list)
    """Several models as a grid axis: every arm runs on every one. None: ``base_urls``
    and LOOPBENCH_MODEL, or the embedded model."""
    base_urls: list[str] = Field(default_factory=list)
    """One shared by the models, one per model in order, or a single model's replicas."""
    api_key_env: str = DEFAULT_KEY_ENV
    """The variable holding the API key (OPENAI_API_KEY when it is unset)."""
    provider: Literal["openai", "anthropic"] | None = None
    """The API the models are spoken to in: ``openai`` (chat completions) or ``anthropic``
    (the Messages API, docs/anthropic.md). Unset: ``anthropic`` for a model written
    ``anthropic/...`` or when only ANTHROPIC_BASE_URL names an endpoint, else ``openai``."""
    local_chat_format: str = "chatml"
    """The embedded model's chat format."""
    judge: JudgeConfig | None = None
    """The judge's endpoint, for a grader that asks a model for its verdicts (``[judge]``);
    its sampling is pinned (temperature 0, and the run's seed or 0 where it takes one)."""
    timeout_s: float = Field(default=120.0, gt=0, allow_inf_nan=False)
    """Seconds allowed for one request, from connecting to its last byte."""
    max_retries: int = Field(default=3, ge=0)
    rate_limit: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """Requests a second at most (an endpoint's published limit)."""
    concurrency: int = Field(default=8, ge=1)
    """Requests in flight at once to each endpoint (each replica, each model's server)."""
    max_response_mb: float = Field(default=32.0, gt=0, allow_inf_nan=False)
    """The most a reply's body may hold, in MiB once decompressed; past it the call is an
    api_error, and the rest is not read."""
    stream: bool = False
    """Ask for every reply as server-sent events, read as it comes, so the time to its first
    token is measured (each record's ``ttft_s``); records are otherwise as unstreamed."""
    stream_idle_s: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """With stream: the most seconds between one event and the next before the stream is
    given up as stalled (an api_error, retried as a dropped connection is); ``timeout_s``
    when unset."""
    batch: bool = False
    """Send the requests through the endpoint's Batch API at its batch price, one batch a
    round of the runs in flight (docs/batch.md)."""
    batch_poll_s: float = Field(default=30.0, gt=0, allow_inf_nan=False)
    """With batch: seconds between polls of a pending batch."""
    runs_in_flight: int | None = Field(default=None, ge=1)
    """Runs in flight at once; when unset, twice the requests allowed (``runs_at_once``)."""
    temperature: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """Sampling temperature sent on every request of arms that do not set their own."""
    top_p: float | None = Field(default=None, gt=0, le=1, allow_inf_nan=False)
    seed: int | None = None
    """Unset, each is not sent: the endpoint's default applies."""
    reasoning_effort: EffortOption = None
    """Reasoning effort sent on every request of arms that do not set their own (none,
    minimal, low, medium, high); unset, none is sent."""
    thinking_budget: BudgetOption = None
    """Thinking budget in tokens (at least 1024) sent likewise (docs/reasoning.md)."""

    # How it is recorded and made.
    out: (
        Annotated[str, _filled("a folder", " (leave out 'out' for results/<timestamp>)")] | None
    ) = None
    """The results folder; re-running into it resumes. Default: results/<timestamp>."""
    prices: Annotated[str, _filled("a TOML price table")] | None = None
    """A price table (TOML) instead of the shipped one."""
    price_as: Annotated[str, _filled("a model")] | None = None
    """In the printed table, price the tokens as this model."""
    max_trace_text: int = Field(default=MAX_TEXT, ge=100)
    """Characters of one reply or tool result a trace keeps."""
    cache: Annotated[str, _filled("a folder")] | None = None
    """Keep every response in this folder's responses.sqlite and replay it."""
    cache_debug: bool = False
    """On a cache miss, say what differed from the nearest cached request."""
    count_tokens: bool = False
    """Estimate the tokens of responses that reported no usage."""
    retry_errors: bool = False
    """Run again the runs recorded as api_error."""
    paired: bool = False
    """Arms sending an identical request on one task and repeat share its response."""
    grading_workers: int | None = Field(default=None, ge=1)
    """Coding tasks: test suites run at once in the sandbox (one per core when unset)."""
    executor: Literal["local", "ray"] = "local"
    """Where the runs are made: this process, or Ray workers."""
    ray_address: Annotated[str, _filled("a cluster")] | None = None
    """With the ray executor: the cluster (auto, HOST:6379, ray://HOST:10001)."""

    @model_validator(mode="after")
    def _consistent(self) -> RunConfig:
        if self.local_chat_format not in CHAT_FORMATS:
            raise ValueError(
                f"local_chat_format {self.local_chat_format!r} is not one of "
                f"{', '.join(CHAT_FORMATS)}"
            )
        stray = [
            name
            for name in ("max_repeats", "margin", "alpha")
            if getattr(self, name) is not None and not self.until_separated
        ]
        if stray:
            raise ValueError(
                f"{stray[0]}: {_flag(stray[0])} applies only with --until-separated "
                "(until_separated)"
            )
        if self.until_separated and "repeats" in self.model_fields_set:
            raise ValueError(
                "repeats: --until-separated decides how many repeats to run; give "
                "--max-repeats instead of --repeats (max_repeats, not repeats)"
            )
        if self.stream_idle_s is not None and not self.stream:
            raise ValueError(
                "stream_idle_s: --stream-idle-timeout applies only with --stream (stream)"
            )
        if self.executor != "ray" and self.ray_address is not None:
            raise ValueError(
                "ray_address: --ray-address applies only with --executor ray (executor)"
            )
        # guard: judge-base-url-needs-model
        if self.judge is not None and self.judge.model is None:
            raise ValueError(
                "judge: --judge-base-url (or [judge]'s base_url, api_key_env, provider) "
                "needs --judge-model (the judge's model name, e.g. gpt-4o)"
            )
        # guard: judge-refused-on-ray
        if self.judge is not None and self.executor == "ray":
            raise ValueError(
                "judge: the judge grades in this process and Ray workers grade on theirs: "
                "drop --judge-model, or run with --executor local"
            )
        # guard: batch-refused-with-stream-or-ray
        if self.batch and (self.stream or self.executor == "ray"):
            raise ValueError(
                "batch: a batch's replies come whole, in this process: drop --stream and "
                "--executor ray, or drop --batch"
            )
        # guard: batch-poll-needs-batch
        if "batch_poll_s" in self.model_fields_set and not self.batch:
            raise ValueError("batch_poll_s: --batch-poll applies only with --batch (batch)")
        if self.executor == "ray" and (self.cache is not None or self.paired):
            raise ValueError(
                "executor: --cache and --paired share responses within one process, and Ray "
                "workers do not share them: drop them, or run with --executor local"
            )
        return self

    @property
    def rows_to_read(self) -> int | None:
        """How many rows of a data file to read: the first ``limit`` (all, with a slice,
        which is chosen before the limit)."""
        return self.limit if self.slice is None else None

    def runs_at_once(self, endpoints: int = 1) -> int:
        """Runs in flight: by default twice the requests all ``endpoints`` allow, so that
        whenever a request ends another run's call is ready to take its slot (between a
        run's calls, while it is graded, and as the grid runs out); a run's latency leaves
        out its waits for a slot. As many as the requests with ``paired`` (a run waiting on
        a call another run shares cannot tell that call's wait for a slot from the
        endpoint's time) and on Ray (a worker per run in flight, each with a whole share of
        the requests, keeps a run that kills its worker from taking others with it)."""
        if self.runs_in_flight:
            return self.runs_in_flight
        requests = self.concurrency * max(1, endpoints)
        return requests if self.paired or self.executor == "ray" else 2 * requests

    @property
    def sampling(self) -> Sampling:
        return Sampling(
            self.temperature, self.top_p, self.seed, self.reasoning_effort, self.thinking_budget
        )

    @property
    def separation(self) -> SeparationRule | None:
        """The stopping rule, with until_separated."""
        if not self.until_separated:
            return None
        default = SeparationRule()
        return SeparationRule(
            alpha=default.alpha if self.alpha is None else self.alpha,
            margin=default.margin if self.margin is None else self.margin,
            max_repeats=self.max_repeats or default.max_repeats,
        )

    _file: Path | None = PrivateAttr(default=None)
    """The experiment file these settings were read from: where its arms are said wrong."""
    _file_arms: tuple[str, ...] = PrivateAttr(default=())

    def merged(self, given: dict[str, Any]) -> RunConfig:
        """These settings with ``given`` laid over them (flags over a file); arms and plugins
        add up."""
        data = self.model_dump(exclude_unset=True) | given
        for added in ("arms", "plugins"):
            if added in given and getattr(self, added):
                data[added] = [*getattr(self, added), *given[added]]
        if "columns" in given:
            data["columns"] = self.columns | given["columns"]
        if "judge" in given and self.judge is not None:  # a flag overrides one key of [judge]
            data["judge"] = self.judge.model_dump(exclude_unset=True) | given["judge"]
        config = build(data)
        config._file, config._file_arms = self._file, self._file_arms
        return config

    def arm_written_at(self, arm: str) -> str | None:
        """Where the experiment file these settings came from writes ``arm``
        (``FILE: field 'arms' on line N``); None for an arm given otherwise."""
        if self._file is None or arm not in self._file_arms:
            return None
        return arms_line(self._file)

    def check_published(self, arms: set[str]) -> None:
        """Refuse a ``[published]`` arm that is none of ``arms`` (the run's, as identities),
        naming the experiment file's line."""
        from loopbench.harness.arms import arm_identity, prompt_files_in  # the registry: only here

        path = self._file or Path("the experiment file")
        written_as = {}
        if self._file is not None:
            found = _published_as_written(self._file)
            written_as = {prompt_files_in(arm, self._file.parent): arm for arm in found}
        for arm in self.published:
            if arm_identity(arm) not in arms:
                written = written_as.get(arm, arm)
                where = field_line(path, ("published", written)) if self._file else str(path)
                raise ConfigError(
                    f"{where}: names no arm of the file; write one of its arms, e.g. "
                    f"[published.{json.dumps(self.arms[0])}]"
                )


def _flag(field: str) -> str:
    return "--" + field.replace("_", "-")


def build(data: dict[str, Any], where: str = "the run's settings") -> RunConfig:
    """A RunConfig from plain data; ``ConfigError`` naming the field otherwise."""
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        message = first["msg"].removeprefix("Value error, ")
        field = ".".join(str(part) for part in first["loc"])
        raise ConfigError(
            f"{where}: {field}: {message}" if field else f"{where}: {message}"
        ) from None


class ExperimentFile(RunConfig):
    """An experiment file: a RunConfig that lists its arms."""

    arms: list[ArmText] = Field(min_length=1)
    """Arm specs; ``a|b`` alternatives expand into every combination. An arm may be a table
    (``ArmTable``), a pipeline's stages a list of tables."""


EXPERIMENT_EXAMPLE = 'arms = ["direct", "react_text:guard=on"], tasks = "depot", repeats = 3'

#: The experiment files shipped with the package (``experiments/`` of a checkout), which
#: ``--experiment NAME`` takes by name.
SHIPPED_EXPERIMENTS = Path(__file__).with_name("experiment_files")


def shipped_experiments() -> list[str]:
    """The names ``--experiment`` takes besides a path: the shipped files' stems."""
    return sorted(p.stem for p in SHIPPED_EXPERIMENTS.glob("*.toml"))


def experiment_path(given: Path) -> Path:
    """The experiment file ``given`` names: itself when there is one at that path, else the
    shipped file of that name (``chapter3``, ``chapter3.toml`` or, where there is no
    checkout, ``experiments/chapter3.toml``)."""
    if given.exists() or given.is_symlink() or given.parent not in (Path(), Path("experiments")):
        return given
    shipped = SHIPPED_EXPERIMENTS / f"{given.name.removesuffix('.toml')}.toml"
    return shipped if given.name and shipped.is_file() else given


def load_experiment(path: Path) -> RunConfig:
    """The settings an experiment file (a path, or a shipped one's name) holds;
    ``ConfigError`` naming the file, line and field otherwise. TOML values are typed, so
    ``repeats = "3"`` is refused."""
    path = experiment_path(path)
    names = ", ".join(shipped_experiments())
    expected = f"a TOML experiment file (or a shipped one: {names}), e.g. {EXPERIMENT_EXAMPLE}"
    data, text = read_toml(path, ConfigError, expected)
    try:
        written = ExperimentFile.model_validate(data, strict=True)
    except ValidationError as exc:
        raise ConfigError(
            f"{toml_problems(path, text, exc)}; write e.g. {EXPERIMENT_EXAMPLE}"
        ) from None
    config = RunConfig.model_validate(written.model_dump(exclude_unset=True))
    from loopbench.harness.arms import prompt_files_in  # the registry's module: only here

    arms = [prompt_files_in(arm, path.parent) for arm in config.arms]  # from the file's folder
    published = {prompt_files_in(arm, path.parent): p for arm, p in config.published.items()}
    folder = path.parent / config.tasks  # a folder or a data file
    tasks = str(folder) if folder.exists() else config.tasks
    servers = [s.in_folder(path.parent) for s in config.mcp]  # run from the file's folder
    update = {"tasks": tasks, "arms": arms, "published": published, "mcp": servers}
    config = config.model_copy(update=update)
    config._file, config._file_arms = path, tuple(arms)
    return config


def _published_as_written(path: Path) -> list[str]:
    """The arms an experiment file's ``[published]`` names, as written (``load_experiment``
    names their prompt files from the file's folder)."""
    written = tomllib.loads(experiment_path(path).read_text(encoding="utf-8"))
    return list(written.get("published", {}))


def arms_line(path: Path) -> str:
    """Where an experiment file's arms are, for an error naming them (the file was read
    whole by ``load_experiment`` already)."""
    return field_line(path, ("arms",), ("arms", 0))  # or [[arms]]


def field_line(path: Path, *fields: tuple[str | int, ...]) -> str:
    """``FILE: field 'a.b' on line N``: where an experiment file sets the first of
    ``fields`` it sets (the file was read whole by ``load_experiment`` already)."""
    path = experiment_path(path)
    try:
        text = read_text(path, ConfigError, "a TOML experiment file")
        line = next(filter(None, (toml_line(text, f) for f in fields)), None)
    except ConfigError:  # changed since: the field is still named
        line = None
    return f"{path}: field {'.'.join(map(str, fields[0]))!r}{f' on line {line}' if line else ''}"
