"""Peak memory of an API run with a plain function as the model (issue 23: 10,000 runs under
300 MB): ``Experiment(model=fn).run()`` on the depot questions, repeated until the runs
asked for are made, in a child process whose peak resident memory is read back.

    .venv/bin/python bench/api_memory.py [--runs 10000] [--arm react_text]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time

CHILD = """
import json, math, resource, sys, time
import loopbench

runs, arm, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
tasks = loopbench.load_taskset("depot")
start = time.perf_counter()
results = loopbench.Experiment(
    tasks=tasks,
    arms=[arm],
    repeats=math.ceil(runs / len(tasks.tasks)),
    model=lambda request: "Answer: 84",
    out=out,
).run()
print(json.dumps([results.ran, time.perf_counter() - start]))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--arm", default="react_text")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(options.runs), options.arm, f"{tmp}/out"],
            capture_output=True,
            text=True,
            check=True,
        )
    ran, seconds = json.loads(done.stdout)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(
        f"{ran:,} runs of {options.arm} in {seconds:.1f} s "
        f"({time.perf_counter() - started:.1f} s with start-up): peak {peak:.0f} MB"
    )


if __name__ == "__main__":
    main()
