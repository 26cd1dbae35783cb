"""Size of runs.jsonl and the time of ``loopbench table`` for N runs of an arm whose prompt
file holds 1 MiB, with the texts inline in every record (as folders were written before
prompts/) and stored once in prompts/ (``loopbench.harness.results.prompt_texts``).

    .venv/bin/python -m bench.prompts_once             # 200 runs
    .venv/bin/python -m bench.prompts_once --runs 1000
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from loopbench.harness.results.reading import RUNS
from loopbench.harness.results.records import RunRecord
from loopbench.harness.results.store import RecordWriter

PROMPT = ("Think step by step, then end with a line 'Answer: X'. " * 20_000)[: 1 << 20]


def records(runs: int) -> list[RunRecord]:
    options = {"max_turns": 8, "prompts": {"step": PROMPT}}
    return [
        RunRecord(
            run_id=f"r{n}",
            arm="cot:prompts=big",
            pattern="cot",
            options=options,
            prompts_hash="0123456789ab",
            task_id=f"t{n}",
            repeat=0,
            status="answered",
            answer="84",
            correct=True,
        )
        for n in range(runs)
    ]


def inline(folder: Path, runs: int) -> None:
    """As a writer before prompts/ wrote it: the texts in every record."""
    with (folder / RUNS).open("w", encoding="utf-8") as out:
        for record in records(runs):
            out.write(record.model_dump_json() + "\n")


def stored(folder: Path, runs: int) -> None:
    with RecordWriter(folder) as writer:
        for record in records(runs):
            writer.append(record, [])


def table_seconds(folder: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "loopbench.harness.cli", "table", str(folder)],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory(prefix="loopbench-bench-") as tmp:
        for name, write in (("inline", inline), ("prompts/", stored)):
            folder = Path(tmp) / name.strip("/")
            folder.mkdir()
            write(folder, runs)
            size = (folder / RUNS).stat().st_size
            seconds = min(table_seconds(folder) for _ in range(3))
            print(f"{name:9} {runs} runs: runs.jsonl {size / 1e6:9.2f} MB, table {seconds:6.2f} s")
            (folder / RUNS).unlink()


if __name__ == "__main__":
    main()
