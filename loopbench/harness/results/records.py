"""What a run leaves on disk: one ``RunRecord`` line per (arm, task, repeat) in runs.jsonl.

The full trace of the same run is one line of traces.jsonl with the same run_id.
Records are a public format, documented field by field in ``docs/records.md``:
every field added after the first version has a default, and records written by an
earlier version are mapped to today's meaning as they are read
(``loopbench.harness.results.legacy``), so every older results folder still loads in ``table``,
``compare`` and ``plot``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, Strict, model_validator

from loopbench.harness.results.legacy import upgrade_record
from loopbench.harness.results.statuses import Status

#: 1: the first release (arm strings wrote every option, defaults included).
#: 2: arms are identities (only the options set), answers on the way are graded.
SCHEMA_VERSION = 2

#: A count as written: a whole number, not negative (``"5"``, ``5.0`` and ``true`` refused).
# guard: count-never-negative
Count = Annotated[int, Field(ge=0), Strict()]
#: Dollars or seconds as written: a finite number, not negative (NaN refused).
# guard: cost-finite-number
Amount = Annotated[float, Field(ge=0, allow_inf_nan=False), Strict()]
#: A verdict as written: ``true`` or ``false``.
Verdict = Annotated[bool, Strict()]
#: A graded measure as written: a number from 0 to 1.
Score = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False), Strict()]
#: A version this reader knows: a later one's fields may mean what it cannot tell.
# guard: schema-version-this-reader-does
Version = Annotated[int, Field(ge=1, le=SCHEMA_VERSION), Strict()]


def _settings_sent(sent: dict[str, float | int | str]) -> dict[str, float | int | str]:
    """The sampling settings sent: numbers, but for the reasoning effort, a level's name."""
    for name, value in sent.items():
        # guard: record-sampling-numbers-but-effort
        if isinstance(value, str) != (name == "reasoning_effort"):
            kind = "an effort level's name" if name == "reasoning_effort" else "a number"
            raise ValueError(f"sampling's {name} is {value!r}, not {kind}")
    return sent


#: What a record's ``sampling`` holds (``loopbench.harness.sampling``).
SettingsSent = Annotated[dict[str, float | int | str], AfterValidator(_settings_sent)]


class RunRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    schema_version: Version = SCHEMA_VERSION
    """Version of this format the record was written in; older ones are upgraded on reading."""
    run_id: str = ""
    """Unique id; keys this run's line in traces.jsonl."""
    experiment_id: str = ""
    """Id of the results folder's experiment (see experiment.json)."""
    arm: str
    """The arm's identity: the pattern and the options set explicitly, sorted
    (``react_text:guard=on``)."""
    pattern: str = ""
    """The pattern's registered name; read from ``arm`` when absent."""
    options: dict[str, Any] = {}
    """Every option's resolved value, defaults included; with prompts the arm overrode,
    ``prompts``: their text by slot."""
    prompts_hash: str | None = None
    """A short hash of the prompt slots the arm overrode (``prompts=FILE``); null when it
    overrode none, as in records written before prompts were slots."""
    task_set: str = ""
    task_id: str
    task_fingerprint: str = ""
    """Digest of the task's id, question and expected answer when it ran (since schema 2):
    a run whose task has changed since is never resumed as done."""
    slice: str | None = None
    repeat: Count
    """0-based repeat index; (model, arm, task_id, repeat) identifies a run in a folder, and
    (arm, task_id, repeat) across result sets of one model."""
    model: str = ""
    sampling: SettingsSent | None = None
    """The sampling settings sent on every request that did not set its own (temperature,
    top_p, seed, and the reasoning settings reasoning_effort and thinking_budget); {} when
    none (the endpoint's defaults). Null in records written before sampling was a run
    setting, when loopbench sent temperature 0 (``loopbench.harness.sampling``)."""
    status: Status
    """How the run ended; separate from correctness."""
    answer: str | None = None
    correct: Verdict | None = None
    """The grader's verdict; null when there was no answer to grade."""
    grade_reason: str = ""
    score: Score | None = None
    """The grader's measure of the answer besides its verdict, from 0 to 1 (f1's token F1,
    em's 1 or 0, a function grader's score); null when the grader gives none, and in records
    written before it was recorded."""
    canonical: str | None = None
    """The answer as its grader reads it (``Grader.canonical``: the exact grader's typed
    reading, a choice grader's option), equal for answers the grader reads alike; what
    ``answer_key`` compares repeats by. Null when there was no answer to grade, and in
    records written before it was recorded, where repeats are compared by their text."""
    turns: Count = 0
    """Model requests the run made (failed ones included)."""
    tool_calls: Count = 0
    parse_failures: Count = 0
    """Replies whose action or answer could not be read."""
    repeated_actions: Count = 0
    """Tool calls identical to an earlier one in the same run, failed ones included."""
    retries: Count = 0
    """HTTP attempts beyond the first, across the run's requests."""
    tokens_in: Count = 0
    """Input tokens as the endpoint reported them (cached ones included)."""
    tokens_out: Count = 0
    """Output tokens as the endpoint reported them (reasoning ones included)."""
    tokens_cached: Count = 0
    """The share of ``tokens_in`` read from the provider's prompt cache."""
    tokens_reasoning: Count | None = None
    """The share of ``tokens_out`` the model spent reasoning, as the endpoint reported it
    (0 when it reported none). Null in records written before it was recorded."""
    tokens_cache_write: Count | None = None
    """The share of ``tokens_in`` written to the provider's prompt cache (Anthropic's
    ``cache_creation_input_tokens``), priced at the cache-write rate; 0 when none was
    reported. Null in records written before it was recorded."""
    usage_missing: Count = 0
    """Model calls whose response reported no usage (since schema 2): their tokens are
    unknown and are not in the token counts or the cost, unless estimated."""
    usage_estimated: Count = 0
    """Of those, the calls whose tokens were estimated with a tokenizer (``--count-tokens``,
    since schema 2): their estimates are in the token counts and the cost."""
    tools_offered: Verdict | None = None
    """Whether the pattern was given tools to call: it takes the task set's tools and the
    set has some. Null in records written before it was recorded, where readers judge it
    from the options (``loopbench.harness.results.legacy.offered_tools``)."""
    answer_kind: Literal["text", "code"] | None = None
    """What the answer is: text graded against an answer key, or code the grader runs.
    Null in records written before it was recorded, where a coding run is known by its
    ``code_edits`` metric."""
    first_correct: Verdict | None = None
    """For patterns that answer on the way (reflection's draft, reflexion's attempts,
    best_of_n's candidates): whether the first such answer was correct."""
    metrics: dict[str, float] = {}
    """Pattern-specific measurements, e.g. agreement, candidates, nodes_expanded."""
    cost_usd: Amount | None = None
    """From the price table at run time; null when the model has no price."""
    cache_hits: Count = 0
    """Model calls replayed from the response cache (``--cache``, since schema 2); their
    tokens are in the token counts as first served."""
    cost_from_cache_usd: Amount | None = None
    """The part of cost_usd that replayed calls stand for: not spent again on this run."""
    batched_calls: Count | None = None
    """Model calls answered within a batch (``--batch``), whose tokens cost_usd prices at
    the price table's batch share; null when none was, and in records written before
    batches were sent."""
    latency_s: Amount = 0.0
    ttft_s: Amount | None = None
    """Seconds from sending the run's first model call to the first token of its reply
    (``--stream``); null when that reply was not streamed (or was replayed from the
    response cache, or failed), and in records written before it was measured."""
    error: str | None = None
    started_at: str = ""
    """UTC, ISO 8601."""
    supersedes: str | None = None
    """The run_id of the api_error record this run replaces (``run --retry-errors``, since
    schema 2; also a pattern_error an older release recorded when its response cache
    failed); the replaced record stays in runs.jsonl and readers leave it out."""
    loopbench_version: str | None = None
    """The loopbench release that wrote the record (since schema 2)."""
    grade_status: Literal["judge_api_error", "judge_unreadable"] | None = None
    """Why an answered run has no verdict although it has an answer: its judge failed
    (``judge_api_error``: the judge's endpoint failed after retries; ``judge_unreadable``:
    no verdict could be read from the judge's reply). The run's own ``status`` is untouched;
    ``grade --regrade`` grades it again. Null when the grader gave its verdict, when there
    was nothing to grade, and in records written before judges."""
    judge_tokens_in: Count | None = None
    """Input tokens the judge's calls on this run's answer took (the ``judge`` grader, as
    its endpoint reported them); null when no judge graded the run."""
    judge_tokens_out: Count | None = None
    """Output tokens of the judge's calls on this run's answer; null when no judge graded it."""
    judge_cost_usd: Amount | None = None
    """The judge's calls on this run's answer, priced as the judge's model: kept apart from
    ``cost_usd`` (the runs' own cost); null when no judge graded the run or its model has no
    price."""
    replaced_characters: Count = 0
    """Lone surrogates (half of a UTF-16 pair alone, such as the JSON escape ``\\ud800``:
    not text any file can hold) replaced with U+FFFD in what the run sent and received and in
    what was written of it (since schema 2); 0 in records written before it was counted."""

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        return upgrade_record(data) if isinstance(data, dict) else data
