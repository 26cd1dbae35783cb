"""Big hostile task files for the readers' cases (tests/hostile_inputs/cases/readers-*.toml),
made when a case runs, never committed: each ``def NAME(path, **kwargs)`` writes ``path``."""

from __future__ import annotations

from pathlib import Path


def readers_parquet_rows(path: Path, rows: int = 10_000_000) -> None:
    """A Parquet file of ``rows`` small tasks (10^7 make about 50 MB), written by DuckDB."""
    import duckdb

    with duckdb.connect() as db:
        db.execute("SET enable_progress_bar = false")
        db.execute(
            f"COPY (SELECT 't' || i AS id, 'What is ' || i || ' + 1?' AS question, "
            f"CAST(i + 1 AS VARCHAR) AS answer FROM range({int(rows)}) r(i)) "
            f"TO '{path}' (FORMAT parquet)"
        )


def readers_jsonl_rows(path: Path, rows: int = 1_000_000, pad: int = 0) -> None:
    """A JSONL file of ``rows`` small tasks, each question padded by ``pad`` characters."""
    filler = "x" * pad
    with path.open("w", encoding="utf-8") as out:
        for i in range(rows):
            out.write(
                f'{{"id": "t{i}", "question": "What is {i} + 1? {filler}", "answer": "{i + 1}"}}\n'
            )


def readers_csv_rows(path: Path, rows: int = 1_000_000) -> None:
    """A CSV file of ``rows`` small tasks."""
    with path.open("w", encoding="utf-8") as out:
        out.write("id,question,answer\n")
        out.writelines(f"t{i},What is {i} + 1?,{i + 1}\n" for i in range(rows))


def readers_deep_json(path: Path, depth: int = 100_000, where: str = "answer") -> None:
    """A JSON list of one task whose ``where`` field nests lists ``depth`` deep."""
    deep = "[" * depth + "1" + "]" * depth
    fields = {"id": '"a"', "question": '"q?"', "answer": '"1"', where: deep}
    path.write_text("[{" + ", ".join(f'"{k}": {v}' for k, v in fields.items()) + "}]\n")


def readers_deep_jsonl(path: Path, depth: int = 100_000) -> None:
    """A JSONL task whose answer nests lists ``depth`` deep."""
    deep = "[" * depth + "1" + "]" * depth
    path.write_text(f'{{"id": "a", "question": "q?", "answer": {deep}}}\n')


def readers_deep_csv_choices(path: Path, depth: int = 100_000) -> None:
    """A CSV task whose choices cell is a JSON list nested ``depth`` deep."""
    path.write_text(f'id,question,answer,choices\na,q?,A,"{"[" * depth}"\n')


def readers_deep_yaml(path: Path, depth: int = 100_000) -> None:
    """A YAML list of one promptfoo test whose variable nests flow lists ``depth`` deep."""
    path.write_text(f"- vars: {{question: {'[' * depth}q{']' * depth}}}\n  assert: []\n")


def readers_billion_laughs(path: Path, levels: int = 9, width: int = 10) -> None:
    """YAML whose aliases stand for ``width ** levels`` values: each anchor a list of
    ``width`` aliases of the one before."""
    lines = ["- &a0 [" + ", ".join(["lol"] * width) + "]"]
    for level in range(1, levels + 1):
        lines.append(f"- &a{level} [" + ", ".join([f"*a{level - 1}"] * width) + "]")
    lines.append(f"- vars: {{question: *a{levels}}}\n  assert: []")
    path.write_text("\n".join(lines) + "\n")


def readers_big_file(path: Path, mib: int = 300) -> None:
    """A file over the 256 MiB input cap, made sparse (no disk written): zeros."""
    with path.open("wb") as out:
        out.truncate(mib * 2**20)


def readers_long_line(path: Path, mib: int = 40) -> None:
    """A JSONL file of one line of ``mib`` MiB (a question that long)."""
    with path.open("w", encoding="utf-8") as out:
        out.write('{"id": "a", "answer": "1", "question": "')
        chunk = "x" * 2**20
        for _ in range(mib):
            out.write(chunk)
        out.write('"}\n')


def readers_fifo(path: Path) -> None:
    """A FIFO (named pipe) where a task file should be: opening it would wait forever."""
    import os

    os.mkfifo(path)


def readers_promptfoo_yaml(path: Path, mib: int = 8) -> None:
    """promptfoo tests in YAML filling ``mib`` MiB: past the YAML file cap."""
    with path.open("w", encoding="utf-8") as out:
        written, i = 0, 0
        while written < mib * 2**20:
            written += out.write(f"- vars: {{question: 'What is {i} + 1?'}}\n")
            written += out.write(f"  assert: [{{type: equals, value: '{i + 1}'}}]\n")
            i += 1


def readers_json_list(path: Path, mib: int = 40) -> None:
    """A JSON list of small tasks filling ``mib`` MiB: past the JSON file cap."""
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        written, i = 0, 0
        while written < mib * 2**20:
            written += out.write(f'{{"id": "t{i}", "question": "q{i}?", "answer": "{i}"}}, ')
            i += 1
        out.write('{"id": "last", "question": "q?", "answer": "1"}]')
