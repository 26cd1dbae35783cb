"""A results folder: experiment.json, runs.jsonl (one record a run) and traces.jsonl.

Each finished run is appended and flushed as it finishes, trace first, record
second: a run counts as done once its record line is complete. After a kill, a
half-written last line is cut off on reopening and that run is simply run again,
so nothing is lost and nothing is duplicated.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from harness.records import RunRecord

RUNS = "runs.jsonl"
TRACES = "traces.jsonl"
EXPERIMENT = "experiment.json"


class ResultsError(ValueError):
    pass


RunKey = tuple[str, str, int]


def run_key(record: RunRecord) -> RunKey:
    return (record.arm, record.task_id, record.repeat)


def read_records(folder: Path | str) -> list[RunRecord]:
    """Every complete record in a results folder (or a runs.jsonl path)."""
    path = Path(folder)
    if path.is_dir():
        path = path / RUNS
    if not path.is_file():
        raise ResultsError(
            f"{path}: no such file; give a results folder written by `loopbench run`"
        )
    records = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.endswith("\n"):
                break  # a line cut short by a kill: that run was not finished
            if not line.strip():
                continue
            try:
                records.append(RunRecord.model_validate_json(line))
            except ValidationError as exc:
                first = exc.errors()[0]
                field = ".".join(str(p) for p in first["loc"]) or "(whole line)"
                raise ResultsError(f"{path}:{number}: field {field!r}: {first['msg']}") from None
    return records


def _cut_partial_line(path: Path) -> None:
    if not path.is_file() or path.stat().st_size == 0:
        return
    with path.open("rb+") as handle:
        handle.seek(-1, os.SEEK_END)
        if handle.read(1) == b"\n":
            return
        handle.seek(0)
        data = handle.read()
        handle.truncate(data.rfind(b"\n") + 1)


@dataclass
class ResultsFolder:
    path: Path
    experiment: dict[str, Any]

    @classmethod
    def open(cls, path: Path | str, expect: dict[str, Any]) -> ResultsFolder:
        """Open or create; refuse to mix a different task set or model into existing results."""
        folder = Path(path)
        folder.mkdir(parents=True, exist_ok=True)
        meta_path = folder / EXPERIMENT
        if meta_path.is_file():
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            for key in ("task_set", "model"):
                if meta.get(key) != expect.get(key):
                    raise ResultsError(
                        f"{folder} holds runs with {key} {meta.get(key)!r}, "
                        f"not {expect.get(key)!r}; write to another --out folder so results "
                        "are not mixed"
                    )
        else:
            meta = {
                "experiment_id": uuid.uuid4().hex[:12],
                "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
                **expect,
            }
            meta_path.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        for name in (RUNS, TRACES):
            _cut_partial_line(folder / name)
        return cls(folder, meta)

    def done(self) -> set[RunKey]:
        if not (self.path / RUNS).is_file():
            return set()
        return {run_key(r) for r in read_records(self.path)}

    def writer(self) -> RecordWriter:
        return RecordWriter(self.path)


class RecordWriter:
    """Appends runs; files opened once, each line flushed as written (no fsync per run)."""

    def __init__(self, folder: Path) -> None:
        self._runs: IO[str] = (folder / RUNS).open("a", encoding="utf-8")
        self._traces: IO[str] = (folder / TRACES).open("a", encoding="utf-8")

    def append(self, record: RunRecord, trace: list[dict[str, Any]]) -> None:
        self._traces.write(json.dumps({"run_id": record.run_id, "events": trace}) + "\n")
        self._traces.flush()
        self._runs.write(record.model_dump_json() + "\n")
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
