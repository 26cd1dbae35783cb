"""Generators of big or deep results files for the records cases (``records-*.toml``): a
runs.jsonl or traces.jsonl beside a good record, written in the test, never kept in git."""

from __future__ import annotations

import json
from pathlib import Path

#: The record every generated folder holds first: one that reads.
GOOD = {"run_id": "ok", "arm": "direct", "task_id": "t0", "repeat": 0, "status": "answered"}


def _record(**fields: object) -> str:
    return json.dumps({**GOOD, **fields}, separators=(",", ":")) + "\n"


def runs_with_huge_error(path: Path, mb: int = 50) -> None:
    """A good record, then an api_error run whose ``error`` holds ``mb`` MiB."""
    error = "E" * (mb << 20)
    failed = _record(run_id="big", task_id="t1", status="api_error", error=error)
    path.write_text(_record() + failed, encoding="utf-8")


def runs_with_deep_line(path: Path, depth: int = 100_000, field: str = "metrics") -> None:
    """A good record, then one whose ``field`` is a list nested ``depth`` deep."""
    deep = _record(run_id="deep", task_id="t1")[:-2] + f',"{field}":' + "[" * depth + "]" * depth
    path.write_text(_record() + deep + "}\n", encoding="utf-8")


def traces_of_size(path: Path, mb: int = 300, line_kb: int = 1024) -> None:
    """About ``mb`` MiB of trace lines of ``line_kb`` KiB each, the first the good record's
    run and the rest runs no record names."""
    text = "y" * (line_kb << 10)
    with path.open("w", encoding="utf-8") as traces:
        for n in range(max(1, (mb << 10) // line_kb)):
            event = {"t": 0, "kind": "pattern_error", "error": text}
            traces.write(json.dumps({"run_id": "ok" if n == 0 else f"x{n}", "events": [event]}))
            traces.write("\n")


def trace_nested(path: Path, depth: int = 100_000) -> None:
    """The good record's trace line, its events nested ``depth`` deep."""
    path.write_text('{"run_id": "ok", "events": ' + "[" * depth + "]" * depth + "}\n")


def good_runs(path: Path) -> None:
    """runs.jsonl of the good record alone (beside a generated traces.jsonl)."""
    path.write_text(_record(), encoding="utf-8")
