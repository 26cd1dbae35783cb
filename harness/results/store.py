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
``harness.results.reading``'s.
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

from harness.files import read_bounded, special_file_problem
from harness.redaction import redact
from harness.results.identity import identity_changes
from harness.results.reading import EXPERIMENT, RUNS, TRACES, ResultsError, read_records
from harness.results.records import RunRecord


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
    # A folder written before fingerprints: from now on it is tied to this content. An
    # experiment file's published figures, added or changed since, are its current ones.
    updated = {key: expect[key] for key in ("fingerprint",) if key in expect and key not in meta}
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
