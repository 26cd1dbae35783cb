"""The lines of a few chosen runs, read without parsing the others: a line's run_id is
found in its bytes, and only the lines of wanted runs become records or trace events.

Records are written compact (``"run_id":"…"``) and trace lines with JSON's default
separators (``{"run_id": "…", …``); any other spacing is found too, only slower.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from loopbench.harness.events import TraceError, parse_events
from loopbench.harness.results.columns_sidecar import fresh_sidecar, open_sidecar
from loopbench.harness.results.columns_sql import LINE_BYTES
from loopbench.harness.results.columns_stored import Damaged
from loopbench.harness.results.reading import (
    RUN_ID_KEYS,
    RUNS,
    TRACES,
    ResultsError,
    json_line,
    parse_line,
    run_id_in,
)
from loopbench.harness.results.records import RunRecord


def records_of(folder: Path, wanted: Collection[str]) -> list[RunRecord]:
    """The records of the runs in ``wanted`` (by run_id), in file order, each line parsed
    as ``read_records`` parses it. Superseded records are not left out here: ask only for
    run_ids of runs that count (a ``read_frame`` holds those). A line copied (the same
    run_id again) is the run recorded again: its first line alone is taken, as every reader
    takes it.

    A folder with a sidecar (``loopbench.harness.results.columns_sidecar``) says which lines hold
    them: only those are parsed, and unless every one holds the run it was said to, the
    file is read through as below."""
    path = folder / RUNS
    located = _located(path, set(wanted))
    if located is not None:
        return located
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


#: Bytes of runs.jsonl read at a time when looking for lines by number, and counted at a
#: time within what was read.
_BLOCK, _STEP = 1 << 24, 1 << 16


def _located(path: Path, wanted: set[str]) -> list[RunRecord] | None:
    """The records of ``wanted`` from the lines the sidecar puts them on (its row n is line
    n + 1 when no line is blank), read where its line lengths say they start, or counted
    to when it has none or they do not add up; None without a fresh sidecar, or when a
    line does not hold the run the sidecar says."""
    columnar = fresh_sidecar(path)
    if columnar is None or not wanted:
        return None
    try:
        with open_sidecar(path, columnar) as stored:
            run_ids = pd.Series(stored.texts("run_id"))
            ends = np.cumsum(np.ma.getdata(stored.number(LINE_BYTES)).astype(np.int64) + 1)
    except Damaged:
        return None
    # Each wanted run's first row (a line copied holds it again)
    held = run_ids[run_ids.isin(wanted)]
    rows = held[~held.duplicated()]
    said = dict(zip(rows.index.tolist(), map(str, rows), strict=True))
    if set(said.values()) != wanted:
        return None
    started = _lines_from_starts(path, sorted(said), ends)
    found = None if started is None else _records_on(path, said, started)
    return found if found is not None else _records_on(path, said, _lines_at(path, sorted(said)))


def _records_on(
    path: Path, said: dict[int, str], lines: Iterable[tuple[int, bytes]]
) -> list[RunRecord] | None:
    """The records of ``lines`` (row, line); None unless each holds the run ``said`` of its
    row, and every row of ``said`` has one."""
    found = []
    for row, raw in lines:
        record = parse_line(path, row + 1, raw) if raw.endswith(b"\n") else None
        if record is None or record.run_id != said[row]:
            return None
        found.append(record)
    return found if len(found) == len(said) else None


def _lines_from_starts(
    path: Path, rows: list[int], ends: np.ndarray[Any, Any]
) -> list[tuple[int, bytes]] | None:
    """The lines at these 0-based rows (ascending), each read where ``ends`` puts it; None
    unless each is a whole line of the length the sidecar says (a line DuckDB read with
    spaces around it, or a blank line, moves the lines after it: they are counted to)."""
    found = []
    with path.open("rb", buffering=0) as handle:
        for row in rows:
            if row >= len(ends):
                return None
            start, end = (int(ends[row - 1]) if row else 0), int(ends[row])
            handle.seek(max(start - 1, 0))
            raw = handle.read(end - max(start - 1, 0))
            line = raw[1:] if start else raw
            # guard: report-line-read-whole-where-sidecar-says
            if (start and raw[:1] != b"\n") or line.find(b"\n") != end - start - 1:
                return None
            found.append((row, line))
    return found


def _lines_at(path: Path, rows: list[int]) -> Iterator[tuple[int, bytes]]:
    """The complete lines of ``path`` at these 0-based positions (ascending), with their
    newline; it stops at the end of the file. Lines are counted a stretch of bytes at a
    time: none is split off but those wanted. (Read, not mapped: a mapped file's pages
    would count as this process's memory.)"""
    targets = iter(rows)
    row = next(targets, None)
    first, held = 0, 0  # the line the buffer starts, and the bytes it holds of it onward
    buffer = bytearray(_BLOCK)
    with path.open("rb", buffering=0) as handle:
        while row is not None:
            if held == len(buffer):  # a line longer than the buffer
                buffer.extend(bytes(_BLOCK))
            read = handle.readinto(memoryview(buffer)[held:])
            if not read:
                return
            held += read
            end = buffer.rfind(b"\n", 0, held) + 1  # its complete lines end here
            pos, seen = 0, first  # seen: first + the newlines before pos
            while row is not None:
                while pos < end and seen + (count := buffer.count(b"\n", pos, pos + _STEP)) < row:
                    seen, pos = seen + count, min(pos + _STEP, end)
                while seen < row and pos < end:
                    pos = buffer.find(b"\n", pos) + 1
                    seen += 1
                if pos >= end:  # the line starts beyond the complete lines
                    break
                yield row, bytes(buffer[pos : buffer.find(b"\n", pos) + 1])
                row = next(targets, None)
            first = seen + buffer.count(b"\n", pos, end)
            buffer[: held - end] = buffer[end:held]  # the line cut by the read, to the front
            held -= end
