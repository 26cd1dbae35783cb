"""Peak memory of reopening a results folder to resume, with a large traces.jsonl.

Reopening repairs what a kill left: a half-written last line is cut, and trace lines at
the end whose run has no record are dropped (``loopbench.harness.results.store``). This bench writes
a folder of N runs whose traces.jsonl holds about SIZE MB, two orphan traces at its end
(one of them 8 MB) and a half-written line after them, then opens it for writing in a
child process and prints that process's peak resident memory, and what the repair did.

    .venv/bin/python -m bench.resume_traces               # about 300 MB of traces
    .venv/bin/python -m bench.resume_traces --size-mb 1200
    .venv/bin/python -m bench.resume_traces --code /path/to/other/checkout   # compare
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: A trace line's size: a run of a dozen calls, each repeating the conversation.
LINE_BYTES = 64 << 10
EXPECT = {"task_set": "bench", "model": "fake"}

CHILD = """
import json, resource, sys, time
import loopbench.harness
from loopbench.harness.results.store import ResultsFolder
started = time.perf_counter()
with ResultsFolder.open(sys.argv[1], json.loads(sys.argv[2])) as folder:
    repairs = folder.repairs
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
seconds = time.perf_counter() - started
print(json.dumps({"code": loopbench.harness.__file__, "seconds": seconds, "repairs": repairs,
                  "peak_mb": peak_mb}))
"""


def write_folder(folder: Path, size_mb: int) -> int:
    """A results folder of runs whose traces.jsonl holds about ``size_mb`` MB; its runs."""
    folder.mkdir()
    (folder / "experiment.json").write_text(json.dumps({"experiment_id": "bench", **EXPECT}))
    runs = size_mb * (1 << 20) // LINE_BYTES
    text = "y" * (LINE_BYTES - 200)
    with (
        (folder / "runs.jsonl").open("w") as records,
        (folder / "traces.jsonl").open("w") as traces,
    ):
        for n in range(runs):
            run_id = f"{n:032x}"
            traces.write(json.dumps({"run_id": run_id, "events": [{"kind": "x", "text": text}]}))
            traces.write("\n")
            record = {"run_id": run_id, "arm": "direct", "task_id": f"t{n}", "repeat": 0}
            records.write(json.dumps({**record, "status": "answered"}, separators=(",", ":")))
            records.write("\n")
        for run_id, size in (("orphan-a", 8 << 20), ("orphan-b", 1000)):
            traces.write(json.dumps({"run_id": run_id, "events": [{"text": "z" * size}]}) + "\n")
        traces.write(json.dumps({"run_id": "killed", "events": [{"text": "z" * (1 << 20)}]})[:-5])
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=300)
    parser.add_argument("--code", default=None, help="the checkout to import (default: this one)")
    args = parser.parse_args()
    code = args.code or str(Path(__file__).resolve().parents[1])
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "out"
        started = time.perf_counter()
        runs = write_folder(folder, args.size_mb)
        size = (folder / "traces.jsonl").stat().st_size / (1 << 20)
        print(
            f"wrote {runs} runs, traces.jsonl {size:.0f} MB ({time.perf_counter() - started:.1f} s)"
        )
        env = {**os.environ, "PYTHONPATH": code}
        child = [sys.executable, "-c", CHILD, str(folder), json.dumps(EXPECT)]
        done = subprocess.run(child, env=env, cwd=tmp, capture_output=True, text=True, check=True)
        result = json.loads(done.stdout.splitlines()[-1])
        print(f"code: {result['code']}")
        seconds, peak = result["seconds"], result["peak_mb"]
        print(f"reopened in {seconds:.2f} s, peak resident memory {peak:.0f} MB")
        for said in result["repairs"]:
            print(f"  {said[said.index('traces.jsonl') :]}")


if __name__ == "__main__":
    main()
