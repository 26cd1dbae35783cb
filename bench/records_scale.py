"""`table`, `compare`, `failures` and `report` on a million run records: wall time and peak
memory of each, run as the command a person types.

Writes two results folders of synthetic but realistic records (8 arms, 500 tasks, 250
repeats, every status, priced tokens, options and metrics as the patterns write them, and
api_error runs superseded by a ``--retry-errors`` round), then runs each command in its own
process and reads its peak resident memory and CPU time from ``getrusage(RUSAGE_CHILDREN)``
(the CPU seconds are steadier than the wall time on a machine other work shares).

    .venv/bin/python bench/records_scale.py                      # 1,000,000 records
    .venv/bin/python bench/records_scale.py --records 200000 --keep /tmp/scale
    .venv/bin/python bench/records_scale.py --traced 20000       # also a folder with traces
    .venv/bin/python bench/records_scale.py --older --only table # also an older folder
    .venv/bin/python bench/records_scale.py --cold               # no sidecar to read

Each folder gets the columnar sidecar ``loopbench run`` leaves at the end of a run
(``loopbench.harness.results.columns_sidecar``); ``--cold`` removes it before each command, which
then reads runs.jsonl's JSON and writes the sidecar again, as a first read of a folder
written by something else does.

``--older`` also writes folders as loopbench wrote them before ``usage_estimated``,
``cache_hits``, ``cost_from_cache_usd``, ``supersedes`` and ``sampling`` existed (those
keys absent from every line, and so no ``--retry-errors`` round), and runs each command on
them too: older folders are read as fast as current ones (issue 21).

Each command gets --timeout seconds (default 600); one that runs longer is
stopped and reported as such. The goal (issue 43): `table`, `compare`, `failures` and
`report` under 5 s and 1 GB each at a million records, measured on a quiet machine
(without traces: a traced folder's failures read the traces of every failed run). Each
row says the load average (1 minute) when the command ended: on a machine other work
shares, the wall time is that work's as much as the command's.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loopbench.harness.results.columns_sidecar import SIDECAR, write_columns

LOOP = {"max_steps": 8, "max_tokens": 20000, "step_timeout_s": 0, "max_output_tokens": None}
TOOLS = {"guard": False, "tool": "plain"}
#: The arms and their resolved options, as `loopbench run` records them.
ARMS: dict[str, dict[str, Any]] = {
    "direct": LOOP,
    "cot": LOOP,
    "react_text": {**LOOP, **TOOLS},
    "react_text:guard=on": {**LOOP, **TOOLS, "guard": True},
    "best_of_n": {
        **LOOP,
        **TOOLS,
        "max_steps": 24,
        "n": 3,
        "candidate_steps": 6,
        "verifier": "evidence",
        "temperature": 0.7,
        "output": "tool",
    },
    "reflexion": {
        **LOOP,
        **TOOLS,
        "max_steps": 16,
        "check": "evidence",
        "attempts": 2,
        "attempt_steps": 8,
    },
    "self_consistency": {**LOOP, "max_steps": 64, "samples": 5, "temperature": 0.7},
    "plan_execute": {
        **LOOP,
        **TOOLS,
        "max_steps": 16,
        "replan": False,
        "step_budget": 3,
        "output": "tool",
    },
}
STATUSES = {
    "answered": 0.72,
    "step_budget": 0.06,
    "token_budget": 0.03,
    "truncated": 0.02,
    "unparsed": 0.05,
    "step_timeout": 0.02,
    "none_accepted": 0.03,
    "refused": 0.01,
    "api_error": 0.04,
    "pattern_error": 0.02,
}
MODEL = "gpt-5-mini"
PRICE = (0.25, 0.025, 2.0)  # input, cached input, output: USD per million tokens
#: The fields records written before them lacked (``--older``).
NEWER = ("usage_estimated", "cache_hits", "cost_from_cache_usd", "supersedes", "sampling")
#: Wrong grades whose reason says the reading could not tell, by (task + repeat) % 10.
UNTOLD = {
    0: "hedged: states 84, 25; expected 84",
    1: "retracted: corrected with no answer after it",
    2: "states no number",
}
ANSWERS = ["84", "25", "2954", "1889", "3.5", "No, no working and no explanation.", "约 42 公里"]


@dataclass(frozen=True)
class Shape:
    tasks: int = 500
    repeats: int = 250
    #: Share of api_error runs run again by a later --retry-errors round.
    retried: float = 0.5


def _metrics(arm: str, rng: random.Random, correct: bool | None) -> dict[str, float]:
    if arm in ("best_of_n", "reflexion"):
        judged = float(rng.randint(1, 3))
        right = float(rng.randint(0, int(judged)))
        return {
            "judged": judged,
            "judged_correct": right,
            "accepted_correct": float(rng.randint(0, int(right))),
            "accepted_wrong": float(rng.randint(0, int(judged - right))),
            "last_accepted": float(bool(correct)),
        }
    if arm == "self_consistency":
        return {"agreement": round(rng.random(), 4), "samples": 5.0}
    return {}


def record(
    rng: random.Random, experiment: str, arm: str, task: int, repeat: int, status: str
) -> dict[str, Any]:
    """One run record, field for field as the writer lays it out."""
    answered = status == "answered"
    correct = rng.random() < 0.6 if answered else None
    first = rng.random() < 0.5 if arm in ("best_of_n", "reflexion", "self_consistency") else None
    turns = rng.randint(1, 8)
    tokens_in, tokens_out = rng.randint(60, 9000), rng.randint(5, 900)
    cached = rng.randint(0, tokens_in // 2)
    cost = ((tokens_in - cached) * PRICE[0] + cached * PRICE[1] + tokens_out * PRICE[2]) / 1e6
    answer = rng.choice(ANSWERS) if answered else None
    reason = (
        f"expected numbers [{task % 97}], found [{answer}]" if answered else f"not graded: {status}"
    )
    if correct is False:  # some wrong grades say the reading could not tell (a hedge, ...)
        reason = UNTOLD.get((task + repeat) % 10, reason)
    error = (
        "HTTP 503 after 3 retries: upstream overloaded"
        if status == "api_error"
        else ("ValueError: plan had no steps" if status == "pattern_error" else None)
    )
    missing = 1 if rng.random() < 0.01 else 0
    hits = 1 if rng.random() < 0.05 else 0
    minute, second = divmod(rng.randrange(3600 * 24), 60)
    return {
        "schema_version": 2,
        "run_id": uuid.UUID(int=rng.getrandbits(128)).hex,
        "experiment_id": experiment,
        "arm": arm,
        "pattern": arm.partition(":")[0],
        "options": ARMS[arm],
        "task_set": "scale",
        "task_id": f"task-{task:04d}",
        "task_fingerprint": f"{task * 2654435761 % 16**16:016x}",
        "slice": "public" if task % 3 else "company",
        "repeat": repeat,
        "model": MODEL,
        "sampling": {},
        "status": status,
        "answer": answer,
        "correct": correct,
        "grade_reason": reason,
        "turns": turns,
        "tool_calls": max(0, turns - 1) if "react" in arm else 0,
        "parse_failures": int(status == "unparsed"),
        "repeated_actions": rng.randint(0, 2) if "react" in arm else 0,
        "retries": int(rng.random() < 0.02),
        "tokens_in": tokens_in,
        "tokens_out": tokens_out,
        "tokens_cached": cached,
        "usage_missing": missing,
        "usage_estimated": 0,
        "first_correct": first,
        "metrics": _metrics(arm.partition(":")[0], rng, correct),
        "cost_usd": round(cost, 8),
        "cache_hits": hits,
        "cost_from_cache_usd": round(cost / 2, 8) if hits else None,
        "latency_s": round(rng.uniform(0.2, 30.0), 4),
        "error": error,
        "started_at": f"2026-12-01T{minute // 60:02d}:{minute % 60:02d}:{second:02d}.000+00:00",
        "supersedes": None,
        "loopbench_version": "0.2.0",
    }


def records(count: int, seed: int, shape: Shape = Shape()) -> Iterator[dict[str, Any]]:
    """``count`` records: a grid in run order, then the --retry-errors round."""
    rng = random.Random(seed)
    experiment = f"{rng.getrandbits(48):012x}"
    names, weights = list(STATUSES), list(STATUSES.values())
    failed: list[dict[str, Any]] = []
    cells = len(ARMS) * shape.tasks
    made = 0
    while made + len(failed) < count:
        repeat, cell = divmod(made, cells)
        task, arm = divmod(cell, len(ARMS))
        status = rng.choices(names, weights)[0]
        run = record(rng, experiment, list(ARMS)[arm], task, repeat, status)
        if status == "api_error" and rng.random() < shape.retried:
            failed.append(run)
        made += 1
        yield run
    for earlier in failed[: count - made]:
        again = record(
            rng,
            experiment,
            earlier["arm"],
            int(earlier["task_id"][5:]),
            earlier["repeat"],
            rng.choices(names[:-2], weights[:-2])[0],
        )
        yield again | {"supersedes": earlier["run_id"]}


def write_folder(
    folder: Path, count: int, seed: int, traced: bool = False, older: bool = False
) -> Path:
    """A results folder of ``count`` records (and their traces when ``traced``); ``older``
    leaves out the fields in ``NEWER``, and so the retry round that needs ``supersedes``."""
    folder.mkdir(parents=True, exist_ok=True)
    experiment = {"experiment_id": "scale", "task_set": "scale", "model": MODEL, "base_url": ""}
    (folder / "experiment.json").write_text(json.dumps(experiment, indent=2) + "\n")
    traces = (folder / "traces.jsonl").open("w", encoding="utf-8") if traced else None
    with (folder / "runs.jsonl").open("w", encoding="utf-8") as runs:
        for made in records(count, seed, Shape(retried=0.0) if older else Shape()):
            if older:
                made = {key: value for key, value in made.items() if key not in NEWER}
            runs.write(json.dumps(made, separators=(",", ":"), ensure_ascii=False) + "\n")
            if traces is not None:
                traces.write(json.dumps({"run_id": made["run_id"], "events": _trace(made)}) + "\n")
    if traces is not None:
        traces.close()
    return folder


def _trace(made: dict[str, Any]) -> list[dict[str, Any]]:
    """Each model call as a request (the conversation so far) and its response."""
    system = "Think step by step: write out your working. Then give the final answer."
    messages = [{"role": "user", "content": f"Question {made['task_id']}: how many trucks?"}]
    events: list[dict[str, Any]] = []
    for call in range(1, made["turns"] + 1):
        request = {
            "model": MODEL,
            "system": system,
            "messages": list(messages),
            "tools": [],
            "tool_choice": None,
            "temperature": 0.0,
            "max_output_tokens": 512,
            "stop": [],
        }
        reply = f"Step {call}: the depots hold 12 and 30 trucks. Answer: {made['answer']}"
        response = {
            "message": {"role": "assistant", "content": reply},
            "finish_reason": "stop",
            "usage": {"input": made["tokens_in"] // made["turns"], "output": 40, "cached": 0},
            "retries": 0,
            "from_cache": False,
        }
        events.append({"t": call * 0.5, "kind": "request", "call": call, "request": request})
        events.append(
            {"t": call * 0.5 + 0.4, "kind": "response", "call": call, "response": response}
        )
        messages += [{"role": "assistant", "content": reply}, {"role": "user", "content": "Go on."}]
    return events


@dataclass(frozen=True)
class Measured:
    command: str
    seconds: float
    cpu_seconds: float
    peak_mb: float
    exit: int | str


def measure(argv: list[str], timeout: float) -> Measured:
    """Run one command in a child process: wall time and peak RSS (its own, not ours)."""
    code = (
        "import resource, subprocess, sys, json, time\n"
        "start = time.perf_counter()\n"
        "try:\n"
        "    done = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL,"
        " stderr=subprocess.PIPE, timeout=float(sys.argv[1]))\n"
        "    exit = done.returncode\n"
        "    if exit:\n"
        "        exit = f'{exit}: ' + (done.stderr.decode(errors='replace').strip()"
        " or '?').splitlines()[-1][:80]\n"
        "except subprocess.TimeoutExpired:\n"
        "    exit = 'timeout'\n"
        "seconds = time.perf_counter() - start\n"
        "used = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "cpu = used.ru_utime + used.ru_stime\n"
        "print(json.dumps([seconds, cpu, used.ru_maxrss / 1024, exit]))\n"
    )
    # A fresh watcher per command, so RUSAGE_CHILDREN holds that command's peak alone.
    out = subprocess.run(
        [sys.executable, "-c", code, str(timeout), *argv],
        capture_output=True,
        text=True,
        check=True,
    )
    seconds, cpu, peak, exit = json.loads(out.stdout)
    return Measured(" ".join(argv[1:]), seconds, cpu, peak, exit)


def _folder(
    root: Path, name: str, count: int, seed: int, traced: bool = False, older: bool = False
) -> Path:
    folder = root / name
    if not (folder / "runs.jsonl").is_file():
        start = time.perf_counter()
        write_folder(folder, count, seed, traced, older)
        size = (folder / "runs.jsonl").stat().st_size / 1e6
        print(
            f"wrote {folder}: {count:,} records, {size:,.0f} MB, "
            f"{time.perf_counter() - start:.0f} s",
            file=sys.stderr,
        )
    write_columns(folder)  # as a run leaves it (nothing when it holds the file already)
    return folder


def _commands(root: Path, prefix: str, baseline: Path, candidate: Path) -> dict[str, list[Any]]:
    loopbench = str(Path(sys.executable).with_name("loopbench"))
    report = str(root / f"{prefix}report.html")
    return {
        "table": [[loopbench, "table", str(baseline)]],
        "compare": [[loopbench, "compare", str(baseline), str(candidate)]],
        "failures": [[loopbench, "failures", str(baseline)]],
        "report": [[loopbench, "report", str(baseline), "-o", report]],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--traced", type=int, default=0, help="Also a folder with traces.")
    parser.add_argument("--older", action="store_true", help="Also older-format folders.")
    parser.add_argument("--keep", type=Path, help="Write the folders here and keep them.")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--only", nargs="*", default=["table", "compare", "failures", "report"])
    parser.add_argument("--cold", action="store_true", help="Remove the sidecars first.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        formats = {"current": ""} | ({"older": "older-"} if args.older else {})
        runs: dict[str, list[tuple[str, list[str]]]] = {name: [] for name in args.only}
        for label, prefix in formats.items():
            older = bool(prefix)
            baseline = _folder(root, f"{prefix}baseline", args.records, 1, older=older)
            candidate = _folder(root, f"{prefix}candidate", args.records, 2, older=older)
            for name, argvs in _commands(root, prefix, baseline, candidate).items():
                if name in runs:
                    runs[name] += [(label, argv) for argv in argvs]
        if args.traced:
            traced = _folder(root, f"traced-{args.traced}", args.traced, 3, traced=True)
            for name, argvs in _commands(root, "traced-", traced, traced).items():
                if name in ("failures", "report") and name in runs:
                    runs[name] += [("current", argv) for argv in argvs]
        print(f"sidecar: {'removed before each command' if args.cold else 'present'}")
        print(f"machine: {os.cpu_count()} cores")
        print("| command | format | runs.jsonl | wall s | CPU s | peak RSS MB | load | exit |")
        print("|---|---|---:|---:|---:|---:|---:|---|")
        for name in args.only:
            for label, argv in runs[name]:
                if args.cold:
                    for folder in {Path(arg) for arg in argv[2:]} & {*root.iterdir()}:
                        (folder / SIDECAR).unlink(missing_ok=True)
                row = measure(argv, args.timeout)
                lines = sum(1 for _ in (Path(argv[2]) / "runs.jsonl").open("rb"))
                print(
                    f"| {row.command} | {label} | {lines:,} | {row.seconds:.1f} | "
                    f"{row.cpu_seconds:.1f} | {row.peak_mb:,.0f} | {os.getloadavg()[0]:.1f} | "
                    f"{row.exit} |",
                    flush=True,
                )
                if name == "report" and row.exit == 0:
                    size = Path(argv[-1]).stat().st_size / 1e6
                    print(f"|   (the page: {size:,.0f} MB) | | | | | | | |", flush=True)


if __name__ == "__main__":
    main()
