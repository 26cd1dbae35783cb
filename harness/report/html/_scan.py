"""The lines of a few chosen runs, read without parsing the others: a line's run_id is
found in its bytes, and only the lines of wanted runs become records or trace events.

Records are written compact (``"run_id":"…"``) and trace lines with JSON's default
separators (``{"run_id": "…", …``); any other spacing is found too, only slower.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

from harness.events import TraceError, parse_events
from harness.results.reading import (
    RUN_ID_KEYS,
    RUNS,
    TRACES,
    ResultsError,
    json_line,
    parse_line,
    run_id_in,
)
from harness.results.records import RunRecord


def records_of(folder: Path, wanted: Collection[str]) -> list[RunRecord]:
    """The records of the runs in ``wanted`` (by run_id), in file order, each line parsed
    as ``read_records`` parses it. Superseded records are not left out here: ask only for
    run_ids of runs that count (a ``read_frame`` holds those). A line copied (the same
    run_id again) is the run recorded again: its first line alone is taken, as every reader
    takes it."""
    path = folder / RUNS
    compact = {run_id.encode() for run_id in wanted}
    key = RUN_ID_KEYS[0]
    found: dict[str, RunRecord] = {}
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            # Inline for the million lines that are not wanted: run_id_in is the slow path.
            start = raw.find(key) + len(key)
            if start >= len(key):
                written = raw[start : raw.find(b'"', start)]
                if written not in compact and b"\\" not in written:
                    continue
            if run_id_in(raw) not in wanted or not raw.endswith(b"\n"):
                continue  # a line without a newline was cut short by a kill: not finished
            record = parse_line(path, number, raw)
            if record is not None and record.run_id in wanted:
                # guard: copied-line-one-run-report
                found.setdefault(record.run_id, record)
    return list(found.values())


def traces_of(folder: Path, wanted: Collection[str]) -> Iterator[dict[str, Any]]:
    """The lines of traces.jsonl (as ``iter_traces`` yields them, their ``events`` parsed
    by ``parse_events``) of the runs in ``wanted``; nothing when the folder has no traces.
    A damaged line is a ``ResultsError`` naming it."""
    path = folder / TRACES
    if not path.is_file():
        return
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if raw.endswith(b"\n") and run_id_in(raw) in wanted:
                line = _trace_line(path, number, raw)
                if isinstance(line, dict) and line.get("run_id") in wanted:
                    try:
                        line["events"] = parse_events(line.get("events"))
                    except TraceError as exc:
                        raise ResultsError(f"{path}:{number}: damaged trace line ({exc})") from None
                    yield line


def _trace_line(path: Path, number: int, raw: bytes) -> Any:
    """The JSON of a trace line; ``ResultsError`` naming the line when it is not JSON (or
    nested past what a reader follows)."""
    try:
        return json_line(raw)
    # guard: trace-line-nested-too-deep
    except (ValueError, RecursionError) as exc:  # UTF-8 errors are ValueErrors too
        raise ResultsError(f"{path}:{number}: damaged trace line ({exc})") from None
