"""``loopbench export`` inside a Jupyter kernel, where DuckDB refuses to change its
progress bar setting (it has no ipywidgets to draw one with): the file is written."""

from pathlib import Path

import duckdb
import nbformat
import pandas as pd
from nbclient import NotebookClient

ROOT = Path(__file__).parents[3]
FOLDER = ROOT / "results" / "reference" / "local-smollm2"

CELL = """
from click.testing import CliRunner
from loopbench.harness.cli.main import main

for fmt in ("parquet", "csv"):
    done = CliRunner().invoke(main, ["export", FOLDER, "--format", fmt, "-o", f"{OUT}/runs.{fmt}"])
    print(done.exit_code, done.output)
"""


def test_export_writes_its_file_from_a_jupyter_kernel(tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")
    code = f"FOLDER, OUT = {str(FOLDER)!r}, {str(tmp_path)!r}\n{CELL}"
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    NotebookClient(notebook, timeout=120, kernel_name="python3").execute()
    printed = "".join(o.get("text", "") for o in notebook.cells[0].outputs)
    assert printed.count("0 wrote ") == 2, printed
    [(rows,)] = duckdb.sql(f"SELECT count(*) FROM '{tmp_path / 'runs.parquet'}'").fetchall()
    assert rows == len(pd.read_csv(tmp_path / "runs.csv")) == 48
