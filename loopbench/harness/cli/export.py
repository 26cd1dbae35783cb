"""``loopbench export``: a results folder's runs as one Parquet or CSV file, for other tools,
or as OpenTelemetry traces (``--format otlp``, ``loopbench.harness.cli.export_otlp``).

One row per run, as ``table`` counts them (records superseded by ``--retry-errors`` left
out, older records upgraded), every record field a column in the record's order. The two
dict fields, ``options`` and ``metrics``, are JSON text: one string column each, which
every Parquet and CSV reader takes, whatever keys each arm's options hold. In CSV, a text
cell a spreadsheet would read as a formula starts with ``'`` (``loopbench.harness.spreadsheet``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import duckdb
import pandas as pd

from loopbench.harness.cli.errors import Command
from loopbench.harness.errors import BadInput
from loopbench.harness.files import output_errors
from loopbench.harness.redaction import holds_secrets, redact
from loopbench.harness.results.columns import FIELDS, read_frame
from loopbench.harness.results.columns_sql import sql_literal
from loopbench.harness.results.duckdb_progress import no_progress_bar
from loopbench.harness.spreadsheet import csv_frame

FORMATS = ("parquet", "csv", "otlp")


@click.command("export", cls=Command)
@click.argument("results", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default=None,
    help="parquet (the default) keeps each column's type; csv opens anywhere; otlp writes "
    "each run as an OpenTelemetry trace in OTLP JSON (needs loopbench[otlp]).",
)
@click.option("-o", "--output", type=click.Path(path_type=Path), help="The file to write.")
@click.option(
    "--otlp-endpoint",
    metavar="URL",
    help="Send the runs as traces to this OTLP/HTTP receiver (Jaeger, Phoenix, Langfuse, a "
    "collector), e.g. http://localhost:4318; implies --format otlp.",
)
def export_command(
    results: Path, fmt: str | None, output: Path | None, otlp_endpoint: str | None
) -> None:
    """Write RESULTS' runs to one file: a row per run, a column per record field (options
    and metrics as JSON text); or each run as an OpenTelemetry trace (--format otlp,
    --otlp-endpoint)."""
    # guard: otlp-otlp-endpoint-with-another
    if otlp_endpoint is not None and fmt not in (None, "otlp"):
        raise BadInput(f"--otlp-endpoint sends traces; it cannot go with --format {fmt}")
    fmt = fmt or ("otlp" if otlp_endpoint is not None else "parquet")
    # guard: otlp-export-without-o-or
    if output is None and otlp_endpoint is None:
        raise BadInput(f"give -o FILE to write (e.g. -o runs.{'json' if fmt == 'otlp' else fmt})")
    if output is not None and output.is_dir():
        raise BadInput(f"{output}: is a folder; give -o a file name, e.g. {output / f'runs.{fmt}'}")
    if fmt == "otlp":
        from loopbench.harness.cli.export_otlp import export_otlp

        return export_otlp(results, output, otlp_endpoint)
    assert output is not None  # refused above without -o or --otlp-endpoint
    frame = read_frame(results)
    if frame.empty:
        raise BadInput(f"{results}: no finished runs yet")
    table = pd.DataFrame({name: _column(frame[name], name) for name in FIELDS}, copy=False)
    if fmt == "csv":  # a spreadsheet opens it: text cells that would be formulas, as text
        # guard: csv-export-writes-formula-cells
        table = csv_frame(table)
    options = "FORMAT parquet" if fmt == "parquet" else "FORMAT csv, HEADER true"
    target = sql_literal(str(output))
    with output_errors(output, also=(duckdb.Error,)), duckdb.connect(":memory:") as con:
        no_progress_bar(con)  # which a Jupyter kernel refuses to set
        con.register("runs", table)
        con.execute(f"COPY runs TO {target} ({options})")
    click.echo(f"wrote {output} ({len(table):,} runs, {len(table.columns)} columns)")


def _column(values: pd.Series[Any], name: str) -> Any:
    """A column with a type DuckDB writes as it is: strings, nullable booleans, JSON text."""
    kind = FIELDS[name].kind
    if kind == "dict":
        texts: dict[int, str] = {}  # equal dicts are often one object: dump each once

        def text(value: Any) -> str:
            found = texts.get(id(value))
            if found is None:
                # guard: secrets-exports-json-columns
                found = texts[id(value)] = redact(json.dumps(value, ensure_ascii=False))
            return found

        return pd.array([text(v) for v in values], dtype=pd.StringDtype())
    if kind == "str":
        strings: Any = values.to_numpy(dtype=object)
        if holds_secrets():
            # guard: secrets-exports-text-columns
            strings = [v if v is None or v is pd.NA else redact(str(v)) for v in strings]
        return pd.array(strings, dtype=pd.StringDtype())
    if kind == "bool":
        return pd.array(values.to_numpy(dtype=object), dtype="boolean")
    if kind == "float":
        return pd.to_numeric(values, errors="raise").astype("float64")
    return values
