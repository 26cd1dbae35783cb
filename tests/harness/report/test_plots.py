import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.report.plots import (
    _drawn,
    _pareto,
    plot_frontier,
    plot_outcomes,
    plot_tokens,
    plot_turns,
)
from loopbench.harness.report.table import summarize
from loopbench.harness.results.frames import records_frame

from .test_compare import write
from .test_table import record


def test_outcome_plot_is_a_png(tmp_path):
    runs = [record(), record(task="t2", status="step_budget"), record(arm="b", correct=False)]
    path = tmp_path / "outcomes.png"
    plot_outcomes(summarize(records_frame(runs)), path, "title")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 5_000


@pytest.mark.parametrize("kind", ["frontier", "status", "tokens", "turns"])
def test_every_plot_kind_writes_a_png(tmp_path, kind):
    results = write(tmp_path / "r", {"react": 0.8, "cot": 0.4, "direct": 0.1}, seed=2)
    out = tmp_path / f"{kind}.png"
    result = CliRunner().invoke(main, ["plot", results, "--kind", kind, "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("kind", ["outcomes", "tokens", "turns"])
def test_control_characters_in_names_are_drawn_as_their_escapes(tmp_path, kind):
    # A glyph a font lacks is a warning, an error under the suite's filterwarnings.
    arms = ["direct\x1b[2J", "cot\x07"]
    runs = [record(arm=arm, task=f"t{i}", model="m\x1b]0;T\x07") for arm in arms for i in (1, 2)]
    frame = records_frame(runs)
    title = "runs of m\x1b]0;T\x07"
    path = tmp_path / f"{kind}.png"
    if kind == "turns":
        plot_turns(frame, path, title)
    else:
        (plot_outcomes if kind == "outcomes" else plot_tokens)(summarize(frame), path, title)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_character_the_font_lacks_is_drawn_as_its_escape_and_a_dollar_as_itself(tmp_path):
    # matplotlib would draw a box and warn (an error under the suite's filterwarnings).
    assert _drawn("模型 on é · → $1 $2\x07") == "\\u6a21\\u578b on é · → \\$1 \\$2\\x07"
    runs = [record(arm=arm, task="t1", model="模型") for arm in ("cot", "直接")]
    for draw in (plot_outcomes, plot_tokens):
        draw(summarize(records_frame(runs)), tmp_path / "p.png", "runs of 模型 at $0.01 and $2")
    plot_turns(records_frame(runs), tmp_path / "t.png", "模型")


def test_frontier_without_any_cost_says_how_to_price(tmp_path):
    runs = [record(model="unpriced-model")]
    with pytest.raises(ValueError, match="--price-as"):
        plot_frontier(summarize(records_frame(runs)), tmp_path / "f.png", "t")


def test_pareto_keeps_only_undominated_arms():
    points = [(1.0, 0.2), (2.0, 0.9), (3.0, 0.5), (0.5, 0.1)]
    assert _pareto(points) == [3, 0, 1]
