from harness.report.plots import plot_outcomes
from harness.report.table import records_frame, summarize

from .test_table import record


def test_outcome_plot_is_a_png(tmp_path):
    runs = [record(), record(task="t2", status="step_budget"), record(arm="b", correct=False)]
    path = tmp_path / "outcomes.png"
    plot_outcomes(summarize(records_frame(runs)), path, "title")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 5_000
