"""Reading a results folder's runs.jsonl: every reader takes its lines from
``complete_lines`` (a line ends at ``\n`` alone, and a carriage return is whitespace
inside it, as JSON reads it; a last line without its ``\n`` was cut short by a kill and
is not a run), and its records from ``parse_line``. A run recorded on more than one line
(a copied line, two folders merged into one) counts once, as first recorded, and every
reader says so on stderr, naming the file, the lines and the run (``Repeated``). Writing
the folder is ``loopbench.harness.results.store``'s.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from loopbench.harness.files import describe_errors, special_file_problem
from loopbench.harness.results.errors import ResultsError as ResultsError  # where readers import it
from loopbench.harness.results.prompt_texts import restored
from loopbench.harness.results.records import RunRecord
from loopbench.harness.valid_text import valid_value

RUNS = "runs.jsonl"
TRACES = "traces.jsonl"
EXPERIMENT = "experiment.json"


#: What identifies a run in a folder: (model, arm, task_id, repeat).
RunKey = tuple[str, str, str, int]


def run_key(record: RunRecord) -> RunKey:
    # guard: run-key-holds-model
    return (record.model, record.arm, record.task_id, record.repeat)


def read_records(folder: Path | str, *, superseded: bool = False) -> list[RunRecord]:
    """Every run's record in a results folder (or a runs.jsonl path), in file order.

    A record that a later one supersedes (``--retry-errors``) is left out, unless
    ``superseded`` asks for those alone. A line cut short by a kill ends the reading:
    that run was not finished. A run recorded again (``Repeated``) counts once, as first
    recorded, and a warning says so.
    """
    runs, replaced = read_both(folder)
    return replaced if superseded else runs


def read_both(folder: Path | str) -> tuple[list[RunRecord], list[RunRecord]]:
    """``read_records(folder)`` and ``read_records(folder, superseded=True)``, read once."""
    path = runs_file(folder)
    current: dict[RunKey, tuple[int, RunRecord]] = {}
    replaced: list[RunRecord] = []
    repeated: list[Repeated] = []
    for number, record in iter_records(path):
        key = run_key(record)
        # guard: run-recorded-twice
        if key in current:
            line, earlier = current[key]
            # guard: run-recorded-again-left-out
            if not replaces(record.supersedes, earlier.run_id):
                repeated.append(
                    Repeated(number, line, key, (earlier.experiment_id, record.experiment_id))
                )
                continue
            replaced.append(earlier)
        current[key] = (number, record)
    say_repeated(path, repeated)
    runs = [record for _, record in sorted(current.values(), key=lambda item: item[0])]
    return runs, replaced


def replaces(supersedes: str | None, run_id: str) -> bool:
    """Whether a record naming ``supersedes`` replaces the earlier record ``run_id`` of its
    run (``--retry-errors``); if not, it records that run again and is not counted."""
    # guard: superseding-record-must-name-one
    return bool(supersedes) and supersedes == run_id


@dataclass(frozen=True)
class Repeated:
    """A line recording a run that an earlier line records already, without superseding
    it: a line copied, two folders merged, a writer of an older release. The earlier
    record counts; this one is left out of every count."""

    line: int
    first: int
    """The line of the record that counts."""
    key: RunKey
    experiments: tuple[str, str]
    """The experiment ids of the two records (the first's, then this one's)."""

    def describe(self) -> str:
        first, this = self.experiments
        elsewhere = f", experiment {this!r}, line {self.first}'s {first!r}" if first != this else ""
        return f"line {self.line} repeats line {self.first} (run {self.key}{elsewhere})"


#: The repeated lines a warning names; of the others, it gives the number.
REPEATS_NAMED = 5
#: The warnings said: each once a process (a folder read by load() then table() says it once).
_SAID: set[str] = set()


def say_repeated(path: Path, repeated: Sequence[Repeated]) -> None:
    """Warn on stderr, once a process, that these lines record runs again and are not
    counted; nothing when there are none."""
    if not repeated:
        return
    named = "; ".join(r.describe() for r in repeated[:REPEATS_NAMED])
    more = len(repeated) - REPEATS_NAMED
    text = (
        f"warning: {path}: {len(repeated)} line(s) record again a run already recorded (its "
        "model, arm, task_id and repeat); each run counts once, as first recorded: "
        f"{named}{f'; and {more} more' if more > 0 else ''}"
    )
    if text not in _SAID:
        _SAID.add(text)
        print(text, file=sys.stderr)


def has_traces(folder: Path | str) -> bool:
    """Whether the results folder holds traces; ``ResultsError`` when its traces.jsonl is
    not a file (a folder in its place is not a folder without traces)."""
    path = Path(folder) / TRACES
    # guard: traces-jsonl-not-file-refused
    if path.exists() and not path.is_file():
        raise ResultsError(f"{path}: is not a file; expected the traces `loopbench run` writes")
    return path.is_file()


def read_experiment(folder: Path | str) -> dict[str, Any] | None:
    """The experiment.json beside a folder's runs file; None when there is none to read."""
    path = runs_file(folder).with_name(EXPERIMENT)
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def runs_file(folder: Path | str) -> Path:
    """The runs.jsonl of a results folder (or the path itself, given a runs file);
    ``ResultsError`` when it is a folder, missing, or not a regular file (a FIFO, a device,
    a link to one): refused before it is opened, so it can neither hang nor read without
    end."""
    path = Path(folder)
    if path.is_dir() and path.name != RUNS:  # a folder named runs.jsonl is not a results folder
        path = path / RUNS
    # guard: runs-jsonl-folder-named-as
    if path.is_dir():
        raise ResultsError(f"{path}: is a folder; expected the runs file `loopbench run` writes")
    if problem := special_file_problem(path):
        raise ResultsError(f"{path}: {problem}; expected the runs file `loopbench run` writes")
    if not path.is_file():
        raise ResultsError(
            f"{path}: no such file; give a results folder written by `loopbench run`"
        )
    return path


def iter_records(folder: Path | str) -> Iterator[tuple[int, RunRecord]]:
    """Each complete line's record with its line number, in file order, repeated runs and
    superseded records included; ``ResultsError`` naming the file, line and field at the
    first line that is not a record."""
    path = runs_file(folder)
    for number, raw in complete_lines(path):
        record = parse_line(path, number, raw)
        if record is not None:
            yield number, record


def complete_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """Each complete line of ``path`` and its number. A line ends at ``\n`` alone: a
    carriage return is JSON's whitespace inside it (so ``\r\n`` ends a line as ``\n``
    does, and a lone ``\r`` splits nothing). A last line without its ``\n`` was cut short
    by a kill: that run was not finished, and the reading ends before it."""
    try:
        with path.open("rb") as handle:
            # guard: carriage-return-whitespace-inside
            for number, raw in enumerate(handle, start=1):  # split at b"\n" only
                if not raw.endswith(b"\n"):
                    return
                yield number, raw
    except OSError as exc:
        raise ResultsError(f"{path}: cannot be read ({exc.strerror})") from None


def record_lines(path: Path, rows: Sequence[int]) -> list[int]:
    """The line numbers of the records at ``rows`` (0-based, counting records: the
    complete lines that are not blank), in the order given; a row may be given twice."""
    lines = dict.fromkeys(rows, 0)
    left = len(lines)
    row = -1
    for number, raw in complete_lines(path):
        if is_blank(number, raw):
            continue
        row += 1
        if row in lines:
            lines[row] = number
            left -= 1
            if not left:
                break
    return [lines[row] for row in rows]


def is_blank(number: int, raw: bytes) -> bool:
    """Whether line ``number`` holds no record (white space alone), as ``parse_line``
    judges it."""
    return not raw.decode("utf-8-sig" if number == 1 else "utf-8", "replace").strip()


#: How a line's run_id key begins: in records (compact) and in traces (JSON's default).
RUN_ID_KEYS = (b'"run_id":"', b'"run_id": "')
_RUN_ID_SPACED = re.compile(rb'"run_id"\s*:\s*"')


def run_id_in(line: bytes) -> str | None:
    """The value of the first ``"run_id"`` key in a JSON line, or None without one.

    Inside a JSON string every quote is escaped, so ``"run_id"`` followed by a colon is a
    key, never text; the record's own is its first, as loopbench writes it.
    """
    for key in RUN_ID_KEYS:
        start = line.find(key)
        if start >= 0:
            start += len(key)
            break
    else:
        match = _RUN_ID_SPACED.search(line)
        if match is None:
            return None
        start = match.end()
    end = line.find(b'"', start)
    if end < 0:
        return None
    raw = line[start:end]
    if b"\\" not in raw:
        return raw.decode("utf-8", "replace")
    # An escape in the id: let JSON read the whole string (rare: loopbench writes hex ids).
    string = re.match(rb'((?:[^"\\]|\\.)*)"', line[start:])
    value = json.loads(b'"' + string.group(1) + b'"') if string else None
    return value if isinstance(value, str) else None


def parse_line(path: Path, number: int, raw: bytes) -> RunRecord | None:
    """Line ``number`` of ``path`` as a record (older schemas upgraded, prompt texts put
    back in its options); None for a blank line; ``ResultsError`` naming the file, line
    and field for any other that is not one."""
    try:
        line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
    except UnicodeDecodeError as exc:
        raise ResultsError(
            f"{path}:{number}: not UTF-8 text (byte {exc.start + 1} of the line); a results "
            "file holds one JSON record a line"
        ) from None
    if not line.strip():  # is_blank
        return None
    try:
        record = RunRecord.model_validate_json(line)
    except ValidationError as exc:
        # guard: record-escaping-lone-surrogate-read
        if (found := _with_valid_text(line)) is None:
            raise ResultsError(f"{path}:{number}: {describe_errors(exc, first=True)}") from None
        record = found
    # guard: read-records-puts-prompt-texts
    return with_prompts(record, path.parent)


def with_prompts(record: RunRecord, folder: Path) -> RunRecord:
    """The record with the prompt texts its options refer to (stored once in ``folder``'s
    prompts/, ``loopbench.harness.results.prompt_texts``) in their place, as records held them
    inline."""
    options = restored(record.options, folder)
    if options is record.options:
        return record
    return record.model_copy(update={"options": options})


def _with_valid_text(line: str) -> RunRecord | None:
    """A line whose JSON escapes half of a surrogate pair alone (``"\\ud800"``: not text,
    which the record's parser refuses as JSON), as a record with each one replaced with
    U+FFFD and counted in ``replaced_characters``; None for any other line the record's
    parser refuses, or one still not a record."""
    if "\\u" not in line:
        return None
    try:
        data, replaced = valid_value(json.loads(line))
    except (ValueError, RecursionError):
        return None
    if not replaced or not isinstance(data, dict):
        return None
    data["replaced_characters"] = data.get("replaced_characters", 0)
    try:
        record = RunRecord.model_validate_json(json.dumps(data))
    except ValidationError:
        return None
    return record.model_copy(update={"replaced_characters": record.replaced_characters + replaced})


#: A surrogate escaped in JSON (a pair's half, or one alone), as json.dumps writes it.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def json_line(raw: bytes) -> Any:
    """A JSON line read as Python reads it, every lone surrogate its text escapes (not text a
    reader can take) replaced with U+FFFD; ValueError or RecursionError when it is not JSON."""
    data = json.loads(raw)
    # guard: trace-escaping-lone-surrogate-read
    return valid_value(data)[0] if _SURROGATE_ESCAPE.search(raw) else data
