"""Reopening a results folder after a kill reads traces.jsonl from its end, a chunk at a
time: memory stays small whatever the size of the file or of its lines."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

from loopbench.harness.results import store
from loopbench.harness.results.store import ResultsFolder

EXPECT = {"task_set": "mine", "model": "fake"}
#: Far more than the chunks read (1 MiB), far less than the files written.
PEAK = 8 << 20


def trace_line(run_id: str, size: int = 100) -> str:
    return json.dumps({"run_id": run_id, "events": [{"kind": "x", "text": "y" * size}]}) + "\n"


def record_line(run_id: str) -> str:
    return (
        json.dumps(
            {
                "run_id": run_id,
                "arm": "direct",
                "task_id": run_id,
                "repeat": 0,
                "status": "answered",
            },
            separators=(",", ":"),
        )
        + "\n"
    )


def folder_of(tmp_path: Path, recorded: int, orphans: list[int]) -> Path:
    """A folder whose traces.jsonl holds ``recorded`` runs' traces, then orphans of the
    sizes given: traces of runs a kill stopped before their record."""
    folder = tmp_path / "out"
    folder.mkdir()
    with (folder / "runs.jsonl").open("w") as runs, (folder / "traces.jsonl").open("w") as traces:
        for n in range(recorded):
            traces.write(trace_line(f"run{n}", 4000))
            runs.write(record_line(f"run{n}"))
        for n, size in enumerate(orphans):
            traces.write(trace_line(f"orphan{n}", size))
    return folder


def opened(folder: Path) -> tuple[list[str], int]:
    """The folder's repairs on opening, and the most memory Python held meanwhile."""
    tracemalloc.start()
    try:
        with ResultsFolder.open(folder, EXPECT) as results:
            repairs = results.repairs
        return repairs, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_orphan_traces_are_dropped_however_long_their_lines(tmp_path):
    folder = folder_of(tmp_path, 3, [10, 3 * store.CHUNK + 7, 5])
    repairs, _ = opened(folder)
    assert any("dropped 3 trace line(s)" in said for said in repairs)
    kept = (folder / "traces.jsonl").read_text().splitlines()
    assert [json.loads(line)["run_id"] for line in kept] == ["run0", "run1", "run2"]


def test_a_recorded_last_trace_is_kept(tmp_path):
    folder = folder_of(tmp_path, 3, [])
    before = (folder / "traces.jsonl").read_bytes()
    repairs, _ = opened(folder)
    assert repairs == [] and (folder / "traces.jsonl").read_bytes() == before


def test_a_half_written_line_longer_than_a_chunk_is_cut(tmp_path):
    folder = folder_of(tmp_path, 2, [])
    with (folder / "traces.jsonl").open("a") as traces:
        traces.write(trace_line("killed", 2 * store.CHUNK)[:-100])  # no line end
    repairs, _ = opened(folder)
    assert any("traces.jsonl: cut a half-written last line" in said for said in repairs)
    assert (folder / "traces.jsonl").read_bytes().endswith(trace_line("run1", 4000).encode())


def test_a_damaged_last_trace_is_left_to_the_readers(tmp_path):
    folder = folder_of(tmp_path, 1, [])
    with (folder / "traces.jsonl").open("a") as traces:
        traces.write('{"events": []}\n')
    repairs, _ = opened(folder)
    assert repairs == [] and (folder / "traces.jsonl").read_text().endswith('{"events": []}\n')


def test_memory_does_not_grow_with_the_traces(tmp_path):
    """40 MB of traces, a 12 MB orphan among them and 4 MB half-written at the end."""
    folder = folder_of(tmp_path, 7000, [12 << 20, 1000])
    with (folder / "traces.jsonl").open("a") as traces:
        traces.write(trace_line("killed", 4 << 20)[:-10])
    assert (folder / "traces.jsonl").stat().st_size > 40 << 20
    repairs, peak = opened(folder)
    assert len(repairs) == 2 and peak < PEAK, peak
