"""A results folder: experiment.json, runs.jsonl (one record a run) and traces.jsonl.

Each finished run is appended and flushed as it finishes, trace first, record
second: a run counts as done once its record line is complete. After a kill, a
half-written last line is cut off on reopening and that run is simply run again,
so nothing is lost and nothing is duplicated.

A folder is tied to what its runs mean: the task set's content (every task's id,
question and expected answer), its tools, the model and the endpoint, recorded in
experiment.json. Opening it for anything else is refused, saying what differs,
and a record whose task has changed since is never counted as done. A folder has
one writer at a time (an exclusive lock). Reading runs.jsonl is
``loopbench.harness.results.reading``'s.
"""

from __future__ import annotations

import fcntl
import json
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from pydantic_core import PydanticSerializationError

from loopbench.harness import fast_json
from loopbench.harness.files import read_bounded, special_file_problem
from loopbench.harness.redaction import redact
from loopbench.harness.results.columns_sidecar import write_columns
from loopbench.harness.results.identity import identity_changes
from loopbench.harness.results.prompt_texts import referenced
from loopbench.harness.results.reading import (
    EXPERIMENT,
    RUNS,
    TRACES,
    ResultsError,
    read_records,
    run_id_in,
)
from loopbench.harness.results.records import RunRecord
from loopbench.harness.valid_text import valid_value

#: Bytes read at a time when a file is read from its end: memory stays this small, whatever
#: the size of the file or of its last line.
CHUNK = 1 << 20
#: Of a trace line, the opening read for its run_id (its first key, as loopbench writes it).
RUN_ID_OPENING = 4096


def _line_start(handle: IO[bytes], end: int) -> int:
    """Where the line ending at ``end`` (its ``\n`` excluded) starts: just after the ``\n``
    before it, or 0; read backwards a chunk at a time."""
    position = end
    while position > 0:
        # guard: resume-reads-traces-jsonl-chunk
        step = min(CHUNK, position)
        handle.seek(position - step)
        found = handle.read(step).rfind(b"\n")
        if found >= 0:
            return position - step + found + 1
        position -= step
    return 0


def _cut_partial_line(path: Path) -> bool:
    """Cut a last line a kill left half-written; whether there was one."""
    if not path.is_file() or path.stat().st_size == 0:
        return False
    with path.open("rb+") as handle:
        size = handle.seek(0, os.SEEK_END)
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return False
        handle.truncate(_line_start(handle, size))
    return True


def _recorded_run_ids(runs: Path) -> set[str]:
    """The run ids runs.jsonl records, read a line at a time."""
    if not runs.is_file():
        return set()
    with runs.open("rb") as handle:
        return {found for line in handle if (found := run_id_in(line)) is not None}


def _drop_orphan_traces(folder: Path) -> int:
    """Drop trace lines at the end of traces.jsonl whose run has no record: a kill between
    writing a run's trace and its record leaves one. How many were dropped.

    traces.jsonl is read from its end, a chunk at a time, and of each line only its opening
    (the run_id comes first), so memory does not grow with the file or its lines."""
    traces = folder / TRACES
    if not traces.is_file() or traces.stat().st_size == 0:
        return 0
    recorded: set[str] | None = None
    dropped = 0
    with traces.open("rb+") as handle:
        end = handle.seek(0, os.SEEK_END)
        while end > 0:
            start = _line_start(handle, end - 1)
            handle.seek(start)
            # guard: resume-reads-only-trace-line
            run_id = run_id_in(handle.read(min(RUN_ID_OPENING, end - start)))
            if run_id is None:
                break  # not ours to judge: readers say what is wrong with it
            if recorded is None:
                recorded = _recorded_run_ids(folder / RUNS)
            # guard: orphan-trace-line-dropped
            if run_id in recorded:
                break
            end, dropped = start, dropped + 1
        if dropped:
            handle.truncate(end)
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
        base_url and fingerprint (see ``loopbench.tasks.taskset.TaskSet.fingerprint``).
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
        # guard: one-writer
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
    # guard: changed-task-set
    if differs:
        raise ResultsError(
            f"{folder} holds runs with {'; '.join(differs)}; write to another --out folder "
            "so results are not mixed"
        )
    # A folder written before fingerprints: from now on it is tied to this content. An
    # experiment file's published figures, added or changed since, are its current ones.
    updated = {key: expect[key] for key in ("fingerprint",) if key in expect and key not in meta}
    # guard: folder-fingerprint-widens-as-more
    if _reads_more(meta.get("fingerprint"), expect.get("fingerprint")):
        updated["fingerprint"] = expect["fingerprint"]  # a data file read further since
    if "published" in expect and meta.get("published") != expect["published"]:
        updated["published"] = expect["published"]
    if updated:
        meta = {**meta, **updated}
        meta_path.write_text(redact(json.dumps(meta, indent=2)) + "\n", encoding="utf-8")
    return meta


def _reads_more(was: Any, now: Any) -> bool:
    """``now`` fingerprints more of a data file than ``was``, the first tasks of it read
    with --limit: the whole file, or more of its first tasks."""
    if not isinstance(was, dict) or not isinstance(now, dict) or "first" not in was:
        return False
    return "first" not in now or now["first"] > was["first"]


def _trace_line(run_id: str, trace: list[dict[str, Any]]) -> tuple[str, int]:
    """A run's line of traces.jsonl, and how many lone surrogates it replaced. orjson
    (``loopbench.harness.fast_json``) refuses a lone surrogate, and what else only the standard
    library writes: then the line is made valid and written by the standard library."""
    try:
        return fast_json.dumps_text({"run_id": run_id, "events": trace}), 0
    except TypeError:
        pass
    # guard: writer-replaces-what-left
    events, replaced = valid_value(trace)
    return json.dumps({"run_id": run_id, "events": events}), replaced


class RecordWriter:
    """Appends runs; files opened once, each line flushed as written (no fsync per run).

    An arm's prompt texts are stored once in the folder's prompts/ and each record refers
    to them (``loopbench.harness.results.prompt_texts``). Every text written is valid UTF-8: a lone
    surrogate the run's texts still hold (the client replaces those of requests and replies
    as they pass) is replaced with U+FFFD here, in the trace and the record alike, and
    counted in the record's ``replaced_characters``, so no run is lost to a character a
    file cannot hold."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        #: The prompts files this writer has stored (``loopbench.harness.results.prompt_texts``).
        self._prompts: set[str] = set()
        self._runs: IO[str] = (folder / RUNS).open("a", encoding="utf-8")
        self._traces: IO[str] = (folder / TRACES).open("a", encoding="utf-8")

    def append(self, record: RunRecord, trace: list[dict[str, Any]]) -> None:
        # guard: writer-stores-prompt-texts-once
        options = referenced(record.options, self._folder, self._prompts)
        if options is not record.options:  # the texts stored once in prompts/, referenced
            record = record.model_copy(update={"options": options})
        line, replaced = _trace_line(record.run_id, trace)
        try:
            text = record.model_dump_json()  # fails on a lone surrogate: then the slow path
        except PydanticSerializationError:
            text = ""
        if replaced or not text:
            # guard: writer-counts-record
            fields, in_record = valid_value(record.model_dump())
            fields["replaced_characters"] = record.replaced_characters + replaced + in_record
            text = RunRecord.model_validate(fields).model_dump_json()
        # guard: secrets-traces-jsonl-redacted-as
        self._traces.write(redact(line) + "\n")
        self._traces.flush()
        # guard: secrets-runs-jsonl-redacted-as
        self._runs.write(redact(text) + "\n")
        self._runs.flush()

    def close(self) -> None:
        self._runs.close()
        self._traces.close()

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(self, kind: object, *exc: object) -> None:
        self.close()
        if kind is None:  # a run ended: its columns kept beside its records
            write_columns(self._folder)


def iter_traces(folder: Path | str) -> Iterator[dict[str, Any]]:
    with (Path(folder) / TRACES).open(encoding="utf-8") as handle:
        for line in handle:
            if line.endswith("\n") and line.strip():
                yield json.loads(line)
