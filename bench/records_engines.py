"""Which columnar engine reads runs.jsonl into the frame `table` needs: time and peak memory.

Each engine reads the same file, in its own child process, into the pandas frame that
``summarize`` takes: every record field, options and metrics as dicts. The child reports
its wall time and its peak resident memory (``getrusage``), so each figure is that
engine's alone, interpreter and imports included.

    .venv/bin/python bench/records_engines.py RUNS_JSONL
    .venv/bin/python bench/records_engines.py RUNS_JSONL --extra /tmp/engines --today

``--extra DIR`` puts a folder holding polars and pyarrow (``pip install --target DIR polars
pyarrow``) on the path of their children only: pyarrow turns pandas' strings into Arrow
strings in any process that can import it, so the others run without it. ``--today`` adds
``records_frame(read_records(...))``, the path being replaced (a minute and ~10 GB at a
million records).

What each engine checks differs: duckdb is loopbench's reader
(``loopbench.harness.results.columns``: the schema checked on the columns, supersedes applied);
polars and pyarrow are read with the record's schema and no more (polars turns a number in a string
field into text, pyarrow's inferred structs blur an absent option with a null one), so they are, if
anything, favoured.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ENGINES = ("duckdb", "polars", "pyarrow")


def _duckdb(path: Path) -> Any:
    from loopbench.harness.results.columns import read_frame

    return read_frame(path)


def _dicts(texts: Any) -> list[Any]:
    cache: dict[str, Any] = {}
    return [cache.setdefault(t, json.loads(t)) if t is not None else None for t in texts]


def _polars(path: Path) -> Any:
    import polars as pl

    from loopbench.harness.results.columns import FIELDS

    types = {"int": pl.Int64, "float": pl.Float64, "bool": pl.Boolean}
    schema = {name: types.get(f.kind, pl.String) for name, f in FIELDS.items()}
    frame = pl.read_ndjson(path, schema=schema).to_pandas()
    for name in ("options", "metrics"):
        frame[name] = _dicts(frame[name])
    frame["task"] = frame["task_id"]
    return frame


def _pyarrow(path: Path) -> Any:
    import pyarrow as pa
    import pyarrow.json as pj

    from loopbench.harness.results.columns import FIELDS

    types = {"int": pa.int64(), "float": pa.float64(), "bool": pa.bool_(), "str": pa.string()}
    schema = pa.schema([(n, types[f.kind]) for n, f in FIELDS.items() if f.kind != "dict"])
    options = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="infer")
    frame = pj.read_json(path, parse_options=options).to_pandas()
    for name in ("options", "metrics"):
        frame[name] = [
            {k: v for k, v in d.items() if v is not None} if d is not None else {}
            for d in frame[name]
        ]
    frame["task"] = frame["task_id"]
    return frame


def _today(path: Path) -> Any:
    from loopbench.harness.results.frames import records_frame
    from loopbench.harness.results.reading import read_records

    return records_frame(read_records(path))


READERS = {"duckdb": _duckdb, "polars": _polars, "pyarrow": _pyarrow, "today": _today}


def child(engine: str, path: Path) -> None:
    start = time.perf_counter()
    frame = READERS[engine](path)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "peak_mb": peak, "rows": len(frame)}))


def measure(engine: str, path: Path, extra: Path | None) -> dict[str, Any]:
    env = dict(os.environ)
    if extra and engine in ("polars", "pyarrow"):
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(extra), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, __file__, "--child", engine, str(path)],
        capture_output=True,
        text=True,
        env=env,
    )
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        return {"engine": engine, "error": last[:90]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return {"engine": engine, **result}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path, help="A runs.jsonl (or its results folder).")
    parser.add_argument("--extra", type=Path, help="A folder holding polars and pyarrow.")
    parser.add_argument("--today", action="store_true", help="Also the path being replaced.")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    path = args.path / "runs.jsonl" if args.path.is_dir() else args.path
    if args.child:
        child(args.child, path)
        return
    size = path.stat().st_size / 1e6
    print(f"| engine ({path.name}, {size:,.0f} MB) | rows | wall s | peak RSS MB |")
    print("|---|---:|---:|---:|")
    for engine in [*ENGINES, *(["today"] if args.today else [])]:
        row = measure(engine, path, args.extra)
        if "error" in row:
            print(f"| {engine} | failed: {row['error']} | | |")
        else:
            print(f"| {engine} | {row['rows']:,} | {row['seconds']:.1f} | {row['peak_mb']:,.0f} |")


if __name__ == "__main__":
    main()
