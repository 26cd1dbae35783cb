"""A results folder: experiment.json, runs.jsonl (one record a run) and traces.jsonl.

Each finished run is appended and flushed as it finishes, trace first, record
second: a run counts as done once its record line is complete. After a kill, a
half-written last line is cut off on reopening and that run is simply run again,
so nothing is lost and nothing is duplicated.

A folder is tied to what its runs mean: the task set's content (every task's id,
question and expected answer), its tools, the model and the endpoint, recorded in
experiment.json. Opening it for anything else is refused, saying what differs,
and a record whose task has changed since is never counted as done. A folder has
one writer at a time (an exclusive lock). A run recorded on more than one line (a copied
line, two folders merged into one) counts once, as first recorded, and every reader says
so on stderr, naming the file, the lines and the run.

Every reader of runs.jsonl takes its lines from ``complete_lines``: a line ends at
``\n`` alone, and a carriage return is whitespace inside it, as JSON reads it.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import sys
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from harness.errors import BadInput
from harness.files import describe_errors, read_bounded, special_file_problem
from harness.redaction import redact
from harness.results.identity import identity_changes
from harness.results.records import RunRecord

RUNS = "runs.jsonl"
TRACES = "traces.jsonl"
EXPERIMENT = "experiment.json"


class ResultsError(BadInput):
    pass


#: What identifies a run in a folder: (model, arm, task_id, repeat).
RunKey = tuple[str, str, str, int]


def run_key(record: RunRecord) -> RunKey:
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
        if key in current:
            line, earlier = current[key]
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
    if path.exists() and not path.is_file():
        raise ResultsError(f"{path}: is not a file; expected the traces `loopbench run` writes")
    return path.is_file()


def runs_file(folder: Path | str) -> Path:
    """The runs.jsonl of a results folder (or the path itself, given a runs file);
    ``ResultsError`` when it is a folder, missing, or not a regular file (a FIFO, a device,
    a link to one): refused before it is opened, so it can neither hang nor read without
    end."""
    path = Path(folder)
    if path.is_dir() and path.name != RUNS:  # a folder named runs.jsonl is not a results folder
        path = path / RUNS
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
    """Line ``number`` of ``path`` as a record (older schemas upgraded); None for a blank
    line; ``ResultsError`` naming the file, line and field for any other that is not one."""
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
        return RunRecord.model_validate_json(line)
    except ValidationError as exc:
        raise ResultsError(f"{path}:{number}: {describe_errors(exc, first=True)}") from None


def _cut_partial_line(path: Path) -> bool:
    """Cut a last line a kill left half-written; whether there was one."""
    if not path.is_file() or path.stat().st_size == 0:
        return False
    with path.open("rb+") as handle:
        handle.seek(-1, os.SEEK_END)
        if handle.read(1) == b"\n":
            return False
        handle.seek(0)
        data = handle.read()
        handle.truncate(data.rfind(b"\n") + 1)
    return True


def _drop_orphan_traces(folder: Path) -> int:
    """Drop trace lines at the end of traces.jsonl whose run has no record: a kill between
    writing a run's trace and its record leaves one. How many were dropped."""
    traces, runs = folder / TRACES, folder / RUNS
    if not traces.is_file() or traces.stat().st_size == 0:
        return 0
    recorded = runs.read_bytes() if runs.is_file() else b""
    dropped = 0
    data = traces.read_bytes()
    while data:
        start = data.rfind(b"\n", 0, len(data) - 1) + 1
        try:
            run_id = json.loads(data[start:])["run_id"]
        except (ValueError, KeyError, TypeError):
            break  # not ours to judge: readers say what is wrong with it
        if f'"run_id":"{run_id}"'.encode() in recorded:
            break
        data, dropped = data[:start], dropped + 1
    if dropped:
        with traces.open("rb+") as handle:
            handle.truncate(len(data))
    return dropped


@dataclass
class ResultsFolder:
    path: Path
    experiment: dict[str, Any]
    _lock: IO[str] | None = None
    #: What opening repaired after a kill, to be said as warnings.
    repairs: list[str] = field(default_factory=list)

    @classmethod
    def open(cls, path: Path | str, expect: dict[str, Any]) -> ResultsFolder:
        """Open or create, as its one writer; refuse to mix other tasks, tools or models in.

        ``expect`` holds what the runs will mean: task_set, model and, when known,
        base_url and fingerprint (see ``tasks.taskset.TaskSet.fingerprint``).
        """
        folder = Path(path)
        if folder.exists() and not folder.is_dir():
            raise ResultsError(f"{folder}: is a file; --out must name a folder")
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ResultsError(
                f"{folder}: cannot be made a folder for --out ({exc.strerror})"
            ) from None
        for name in (EXPERIMENT, RUNS, TRACES):
            if problem := special_file_problem(folder / name):
                raise ResultsError(f"{folder / name}: {problem}; the folder is unusable")
            if (folder / name).exists() and not (folder / name).is_file():
                raise ResultsError(f"{folder / name}: is not a file; the folder is unusable")
        lock = _take_lock(folder)
        try:
            meta = _check_or_create(folder, expect)
            repairs = [
                f"{folder / name}: cut a half-written last line (a run stopped by a kill; it "
                "will run again)"
                for name in (RUNS, TRACES)
                if _cut_partial_line(folder / name)
            ]
            if orphans := _drop_orphan_traces(folder):
                repairs.append(
                    f"{folder / TRACES}: dropped {orphans} trace line(s) of a run stopped "
                    "before its record was written"
                )
        except BaseException:
            lock.close()
            raise
        return cls(folder, meta, lock, repairs)

    def records(self) -> list[RunRecord]:
        return read_records(self.path) if (self.path / RUNS).is_file() else []

    def writer(self) -> RecordWriter:
        return RecordWriter(self.path)

    def close(self) -> None:
        """Let another writer in (the lock also goes when the process ends)."""
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def __enter__(self) -> ResultsFolder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


LOCK = ".lock"


def _take_lock(folder: Path) -> IO[str]:
    try:
        handle = (folder / LOCK).open("a+", encoding="utf-8")
    except OSError as exc:
        raise ResultsError(f"{folder / LOCK}: cannot be opened ({exc.strerror})") from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise ResultsError(
            f"{folder} is being written by {holder}; wait for it to finish, or give another "
            "--out (one writer per results folder, so no run is recorded twice)"
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"loopbench (pid {os.getpid()})\n")
    handle.flush()
    return handle


def _check_or_create(folder: Path, expect: dict[str, Any]) -> dict[str, Any]:
    meta_path = folder / EXPERIMENT
    if not meta_path.is_file():
        meta = {
            "experiment_id": uuid.uuid4().hex[:12],
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            **expect,
        }
        meta_path.write_text(redact(json.dumps(meta, indent=2)) + "\n", encoding="utf-8")
        return meta
    try:
        meta = json.loads(read_bounded(meta_path).decode("utf-8"))
    except OSError as exc:
        raise ResultsError(f"{meta_path}: cannot be read ({exc.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ResultsError(f"{meta_path}: not a JSON object ({exc}); it is unusable") from None
    if not isinstance(meta, dict):
        raise ResultsError(f"{meta_path}: not a JSON object; it is unusable")
    differs = identity_changes(meta, expect)
    if differs:
        raise ResultsError(
            f"{folder} holds runs with {'; '.join(differs)}; write to another --out folder "
            "so results are not mixed"
        )
    if "fingerprint" in expect and "fingerprint" not in meta:
        # A folder written before fingerprints: from now on it is tied to this content.
        meta = {**meta, "fingerprint": expect["fingerprint"]}
        meta_path.write_text(redact(json.dumps(meta, indent=2)) + "\n", encoding="utf-8")
    return meta


class RecordWriter:
    """Appends runs; files opened once, each line flushed as written (no fsync per run)."""

    def __init__(self, folder: Path) -> None:
        self._runs: IO[str] = (folder / RUNS).open("a", encoding="utf-8")
        self._traces: IO[str] = (folder / TRACES).open("a", encoding="utf-8")

    def append(self, record: RunRecord, trace: list[dict[str, Any]]) -> None:
        self._traces.write(redact(json.dumps({"run_id": record.run_id, "events": trace})) + "\n")
        self._traces.flush()
        self._runs.write(redact(record.model_dump_json()) + "\n")
        self._runs.flush()

    def close(self) -> None:
        self._runs.close()
        self._traces.close()

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def iter_traces(folder: Path | str) -> Iterator[dict[str, Any]]:
    with (Path(folder) / TRACES).open(encoding="utf-8") as handle:
        for line in handle:
            if line.endswith("\n") and line.strip():
                yield json.loads(line)
