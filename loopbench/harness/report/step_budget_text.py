"""The step budget as a small table of its own, under the per-arm table
(``loopbench table --step-budget``, the report's step budget section)."""

from __future__ import annotations

import math
from html import escape

import pandas as pd

from loopbench.harness.report.model_axis import config_labels
from loopbench.harness.report.rendering import latex_text
from loopbench.harness.report.table import GROUPINGS
from loopbench.harness.terminal import one_line

#: Said in a budget's cell when the arm has no correct run to set it from.
NO_BUDGET = "none: no correct run"


def has_step_budget(summary: pd.DataFrame) -> bool:
    """Whether ``summary`` carries step budget columns (``with_step_budget``)."""
    return "step_budget" in summary


def shown_budgets(summary: pd.DataFrame) -> pd.DataFrame:
    """The step budget columns of ``summary`` as read: one row per arm (and ``by`` value)."""
    share = float(summary["step_budget_share"].iloc[0])
    shown = pd.DataFrame({"arm": config_labels(summary)}, index=summary.index)
    for column in GROUPINGS:
        if column in summary and column != "model":
            shown[column] = summary[column]
    shown["correct"] = summary["step_budget_correct_runs"].map(_count)
    shown["turns p50 / p90"] = _pair(summary, "correct")
    shown["failed"] = summary["step_budget_failed_runs"].map(_count)
    shown["failed turns p50 / p90"] = _pair(summary, "failed")
    shown[f"budget ({share:.0%} kept)"] = summary["step_budget"].map(
        lambda b: NO_BUDGET if math.isnan(b) else f"{b:.0f}"
    )
    shown["correct cut"] = summary["step_budget_correct_cut"].map(_count)
    shown["failed over"] = summary["step_budget_failed_over"].map(_count)
    # No budget, no saving to speak of: a dash, as the budget's cell says why.
    budgeted = summary["step_budget"].notna()
    shown["turns saved"] = (
        summary["step_budget_turns_saved"].map("{:.0f}".format).where(budgeted, "—")
    )
    shown["≈ $ saved"] = summary["step_budget_cost_saved_usd"].map(_money).where(budgeted, "—")
    return shown


def step_budget_note(share: float) -> str:
    """What the budget table's columns mean."""
    return (
        f"Step budget: the smallest max_steps at or under which {share:.0%} of an arm's "
        "correct runs finished (turns are model calls), and what it would have saved on this "
        "folder's failed runs (wrong, unanswered, or cut by a limit, step_budget included): "
        "the turns they spent beyond it, and about what those turns cost, each run's cost "
        "spread evenly over its turns (an estimate; later turns usually cost more). correct "
        "cut: correct runs above the budget. Runs not graded (api_error, pattern_error, "
        "tool_error, a failed judge) are left out."
    )


def render_budgets(summary: pd.DataFrame, fmt: str) -> str:
    """The step budget table in ``fmt`` (md, html or latex), with its note in md."""
    shown = shown_budgets(summary)
    shown = shown.map(lambda cell: one_line(cell) if isinstance(cell, str) else cell)
    share = float(summary["step_budget_share"].iloc[0])
    if fmt == "latex":
        latex = shown.map(lambda cell: latex_text(str(cell)))
        latex.columns = [latex_text(str(c)) for c in shown.columns]
        return str(latex.to_latex(index=False, caption="Step budget", escape=False))
    if fmt == "html":
        html = str(shown.to_html(index=False, border=0))
        caption = f"<caption>{escape(f'Step budget ({share:.0%} of correct runs kept)')}</caption>"
        return html.replace(">\n", f">\n{caption}\n", 1)
    table = shown.to_markdown(index=False, disable_numparse=True)
    title = f"**Step budget** ({share:.0%} of correct runs kept)"
    return f"{title}\n\n{table}\n\n{step_budget_note(share)}"


def _pair(summary: pd.DataFrame, kind: str) -> list[str]:
    return [
        "—" if math.isnan(p50) else f"{p50:g} / {p90:g}"
        for p50, p90 in zip(
            summary[f"step_budget_{kind}_turns_p50"],
            summary[f"step_budget_{kind}_turns_p90"],
            strict=True,
        )
    ]


def _count(value: float) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.0f}"


def _money(value: float) -> str:
    if value is None or math.isnan(value):
        return "—"
    return f"{value:.4f}" if value < 1 else f"{value:,.2f}"
