"""``loopbench reference`` copies the reference results the package carries to where the
README's commands read them, and leaves a folder already there as it is."""

from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.cli.reference import SHIPPED


def test_the_reference_results_are_copied_here_once_and_read_by_table(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    copied = CliRunner().invoke(main, ["reference"])
    assert copied.exit_code == 0, copied.output
    target = tmp_path / "results" / "reference" / "local-smollm2"
    shipped = SHIPPED / "local-smollm2"
    assert (target / "runs.jsonl").read_bytes() == (shipped / "runs.jsonl").read_bytes()
    table = CliRunner().invoke(main, ["table", "results/reference/local-smollm2"])
    assert table.exit_code == 0 and "| react_text " in table.output, table.output
    (target / "table.md").write_text("kept")
    again = CliRunner().invoke(main, ["reference"])
    assert again.exit_code == 0 and "already here, left as it is" in again.output
    assert (target / "table.md").read_text() == "kept"


def test_a_place_it_cannot_write_is_one_line_and_exit_2(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results").write_text("a file where the folder would go")
    refused = CliRunner().invoke(main, ["reference"])
    assert refused.exit_code == 2, refused.output
    (line,) = refused.output.strip().splitlines()
    assert line.startswith("Error: results") and "Traceback" not in refused.output
    assert (tmp_path / "results").read_text() == "a file where the folder would go"
