"""A large folder's figures drawn by a child forked before the runs are read
(``loopbench.harness.report.html._plotting``): the same figures as drawn here."""

from __future__ import annotations

import base64
import multiprocessing
import re
import threading
from pathlib import Path

import pytest

from loopbench.harness.errors import BadInput
from loopbench.harness.report.html import _page as page_module
from loopbench.harness.report.html._plotting import Drawing, Plot
from loopbench.harness.results.frames import Pricing
from loopbench.harness.results.prices import load_prices

FOLDER = Path("tests/fixtures/results-0.1.0")
PRICING = Pricing(load_prices(None), "gpt-5-mini")


def _masked(plot: Plot) -> tuple[str, str, str, tuple[tuple[str, str, str, str], ...]]:
    """A figure less what changes at every drawing: its date and the ids SVG names by."""
    svg = base64.b64decode((plot.image or "").split(",", 1)[-1]).decode() if plot.image else ""
    svg = re.sub(r"<dc:date>[^<]*</dc:date>", "", svg)
    svg = re.sub(r'(id|href)="#?[^"]*"|#[A-Za-z0-9_]+\)', "", svg)
    return plot.title, svg, plot.missing, plot.key


def test_the_figures_drawn_by_a_child_are_those_drawn_here(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    here = page_module.build_page(FOLDER, PRICING)
    forks = []
    monkeypatch.setattr(page_module, "DRAW_ASIDE_FROM", 0)
    made = page_module.Drawing

    def counted() -> Drawing:
        drawing = made()
        forks.append(drawing.aside.forked)
        return drawing

    monkeypatch.setattr(page_module, "Drawing", counted)
    aside = page_module.build_page(FOLDER, PRICING)
    assert forks == [True]
    assert [_masked(p) for p in aside.plots] == [_masked(p) for p in here.plots]
    assert all(p.image for p in here.plots)


def test_a_child_waiting_to_draw_is_stopped_when_the_page_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "runs.jsonl").write_text("")
    monkeypatch.setattr(page_module, "DRAW_ASIDE_FROM", 0)
    with pytest.raises(BadInput, match="no finished runs yet"):
        page_module.build_page(tmp_path, PRICING)
    assert multiprocessing.active_children() == []


def test_with_another_thread_running_the_figures_are_drawn_here() -> None:
    frame, retried, _ = page_module._read(FOLDER, PRICING)
    summary = page_module.summarize(frame, retried=retried)
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        drawing = Drawing()
        assert not drawing.aside.forked
        drawing.give(summary, "a title")
        drawn = drawing.result()
    finally:
        release.set()
        other.join()
    assert [_masked(p) for p in drawn] == [
        _masked(p) for p in page_module.plots(summary, "a title")
    ]
    assert all(p.image for p in drawn)
