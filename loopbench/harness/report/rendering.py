"""The per-arm summary as a table (md, csv, json, LaTeX, HTML) with its footnotes: what
each column means and what a reader should know of these runs (estimated or unknown
usage, replayed calls, retried runs, repeats that add no information).
"""

from __future__ import annotations

import math
from html import escape

import pandas as pd

from loopbench.harness.errors import BadInput
from loopbench.harness.report.judge_accuracy import CORRECTED
from loopbench.harness.report.judge_cost import judge_cost_note, not_graded_note
from loopbench.harness.report.lost_runs import OTHER_ARMS
from loopbench.harness.report.model_axis import model_and_arm
from loopbench.harness.report.pass_k import PassK
from loopbench.harness.report.published import NOTE as PUBLISHED_NOTE
from loopbench.harness.report.published import described
from loopbench.harness.report.table import GROUPINGS
from loopbench.harness.results.statuses import STATUSES
from loopbench.harness.spreadsheet import csv_frame
from loopbench.harness.terminal import one_line, printable

INTERVAL_NOTES = {
    "tasks": "a 95% interval about tasks like these (Wilson's on the effective number of "
    "runs: repeats of a task are correlated samples of it, clustered by task; --interval "
    "runs for the interval on these tasks only)",
    "runs": "a 95% Wilson interval on the runs made, as if independent: about these tasks "
    "only, not tasks like these (--interval tasks)",
}
NOTE = (
    "Accuracy: correct / runs graded or out of budget (api_error, pattern_error and tool_error "
    "runs left out), with {interval}. Cost per correct: total cost of all runs / correct. "
    "Turns: model calls per run. Arms name the options set; the rest are defaults."
)
VS_NOTE = (
    " vs: the paired difference on runs matched by (task, repeat), failed runs left out on "
    "either side, its 95% interval clustered by task, and p of the paired test (sign flips "
    "of per-task differences, two-sided, mid-p), as compare's."
)
PASS_NOTE = (
    " pass@k: the chance that at least one of k tries at a task is right, pass^k that all "
    "k are (unbiased estimators from each task's repeats, averaged over tasks with at "
    "least k runs), with a 95% interval about tasks like these."
)
CHANGES_NOTE = (
    " w→r / r→w: runs whose first answer (a draft, attempt or candidate) was wrong and the "
    "final one right, or the reverse."
)
CHECK_NOTE = (
    " For arms with a check (best_of_n's verifier, reflexion's check): coverage = runs with "
    "an accepted answer; precision = correct among them; check r and f = the check's "
    "acceptance rate of right and of wrong answers, as measured; the predicted precision is "
    "seed 003's formula from p (right among judged answers), r and f."
)
CODE_NOTE = (
    " Coding runs: every verdict is the held-out suite's, never shown to the model. first pass: "
    "the first attempt passed held-out; w→r are fixes, r→w breakages; edits: answers on the way "
    "whose code changed from the one before; no effect: edits that left the held-out verdict "
    "as it was; false acc / false rej: answers the check (feedback suite or the model's own "
    "tests) passed that failed held-out, and the reverse."
)

WHY_NOTE = (
    " why wrong: runs graded wrong because the reading could not tell which answer the "
    "reply gave: hedged (two answers committed to, an amount left open, another offered), "
    "retracted (a correction with no answer after it), no answer."
)


FORMATS = ("md", "csv", "json", "latex", "html")


def render(
    summary: pd.DataFrame, fmt: str, title: str = "", columns: list[str] | None = None
) -> str:
    """The summary as a table in ``fmt``; ``columns`` keeps those columns only (a pass@k
    column brings its interval along)."""
    whole = summary
    if columns:
        unknown = [c for c in columns if c not in summary.columns]
        if unknown:
            raise BadInput(  # the list last: a long one is cut at the error line's end
                f"unknown column {unknown[0]!r} (pass@k and pass^k, e.g. pass@1 or pass^3, "
                "are computed when asked for; --format csv has every column); columns: "
                f"{', '.join(summary.columns)}"
            )
        summary = summary[columns if fmt not in ("json", "csv") else _with_bounds(columns)]
    if fmt == "json":  # DEL escaped as json.dumps does: pandas leaves it, a terminal sees it
        text = str(summary.map(_exact_zero).to_json(orient="records", indent=2))
        # guard: terminal-table-json-escapes-del
        return text.replace("\x7f", "\\u007f")
    if fmt == "csv":  # text cells a spreadsheet would run as formulas, as text
        # guard: csv-table-writes-formula-cells
        return str(csv_frame(summary).to_csv(index=False))
    if fmt not in FORMATS:
        raise BadInput(f"unknown format {fmt!r}; choose {', '.join(FORMATS)}")
    # Names from data (arms, models, tasks) one line each, their control characters shown,
    # not acted on: a table is printed to a terminal, and LaTeX and HTML then escape them.
    # guard: terminal-table-cells-one-line
    shown = _one_line(_chosen(whole, columns) if columns else _shown(summary))
    title = one_line(title)
    plain_title = title.replace("**", "")
    if fmt == "latex":
        latex = shown.map(lambda cell: latex_text(str(cell)))
        latex.columns = [latex_text(str(c)) for c in shown.columns]
        caption = latex_text(plain_title) if plain_title else None
        return str(latex.to_latex(index=False, caption=caption, escape=False))
    if fmt == "html":
        html = str(shown.to_html(index=False, border=0))
        caption = f"<caption>{escape(plain_title)}</caption>" if plain_title else ""
        return html.replace(">\n", f">\n{caption}\n", 1) if caption else html
    table = shown.to_markdown(index=False, disable_numparse=True)
    head = f"{title}\n\n" if title else ""
    return f"{head}{table}\n\n{printable(footnotes(whole))}"


def _one_line(shown: pd.DataFrame) -> pd.DataFrame:
    """``shown``'s text cells and column names as one line each (``loopbench.harness.terminal``)."""
    cells = shown.map(lambda cell: one_line(cell) if isinstance(cell, str) else cell)
    cells.columns = [one_line(str(c)) for c in shown.columns]
    return cells


def footnotes(summary: pd.DataFrame) -> str:
    """What the table's columns mean, and what the reader should know of these runs."""
    interval = summary["interval"].iloc[0] if "interval" in summary and len(summary) else "tasks"
    note = NOTE.format(interval=INTERVAL_NOTES[interval])
    note += PUBLISHED_NOTE if "published_accuracy" in summary else ""
    note += VS_NOTE if "vs_difference" in summary else ""
    note += PASS_NOTE if any(PassK.parse(str(c)) for c in summary.columns) else ""
    note += CHANGES_NOTE if _shows(summary, "wrong_to_right") else ""
    note += CHECK_NOTE if _shows(summary, "coverage") else ""
    note += CODE_NOTE if _shows(summary, "first_pass") else ""
    note += WHY_NOTE if any(_shows_count(summary, column) for column in WHY_WRONG) else ""
    notes = repeats_note(summary) + usage_warning(summary) + cache_note(summary)
    note += judge_cost_note(summary)
    notes += not_graded_note(summary)
    return note + notes + retried_note(summary) + lost_note(summary)


def lost_note(summary: pd.DataFrame) -> str:
    """How many tasks lost runs to failures, per arm, and a warning for each arm whose
    failures fell on harder (or easier) tasks than the rest: its accuracy is then biased."""
    if "tasks_lost" not in summary or not summary["tasks_lost"].sum():
        return ""
    hit = summary[summary["tasks_lost"] > 0]
    counts = "; ".join(
        f"{label} {int(row['runs_lost'])} run(s) on {int(row['tasks_lost'])} of "
        f"{int(row['tasks'])} tasks"
        for label, (_, row) in zip(_row_labels(hit), hit.iterrows(), strict=True)
    )
    lost = "api_error, pattern_error, tool_error: left out of accuracy"
    note = f"\n\nRuns lost to failures ({lost}): {counts}."
    for label, (_, row) in zip(_row_labels(hit), hit.iterrows(), strict=True):
        if row["failures_uneven"] == 1:
            note += "\n\n" + _uneven_warning(label, row)
    return note


def _uneven_warning(label: str, row: pd.Series) -> str:
    lost, kept = row["lost_tasks_reference_accuracy"], row["other_tasks_reference_accuracy"]
    harder = lost < kept
    judged = (
        "the other arms were right"
        if row["lost_compared_with"] == OTHER_ARMS
        else f"{label}'s own runs that did not fail were right"
    )
    return (
        f"Failures not spread evenly: the {int(row['tasks_lost'])} tasks where {label} lost "
        f"runs are {'harder' if harder else 'easier'} than the rest ({judged} {lost:.0%} of "
        f"the time on them, {kept:.0%} on the others; permutation test over tasks, p = "
        f"{row['lost_tasks_p']:.2g}). Accuracy leaves those runs out, so {label}'s is likely "
        f"too {'high' if harder else 'low'} and its interval misses more often than it says; "
        "run them again (--retry-errors) before relying on it."
    )


def _row_labels(summary: pd.DataFrame) -> list[str]:
    """Each row's name in a footnote: the arm, after its model on several models, with the
    slice or task it is broken down by."""
    labels = []
    for _, row in summary.iterrows():
        label = model_and_arm(row["model"], row["arm"]) if "model" in summary else str(row["arm"])
        parts = [f"{by} {row[by]}" for by in GROUPINGS if by != "model" and by in summary]
        labels.append(f"{label} ({', '.join(parts)})" if parts else label)
    return labels


def repeats_note(summary: pd.DataFrame) -> str:
    """A footnote when repeats gave the same answers on every task: they add no information."""
    if "repeats_agree" not in summary:
        return ""
    agree = summary["repeats_agree"]
    alike = summary.loc[agree == 1, "arm"].astype(str).tolist()
    if not alike:
        return ""
    if len(alike) == int(agree.notna().sum()):
        return (
            "\n\nRepeats add no information: every task's repeats gave the same answer, in "
            "every arm, so each task is one sample counted several times (an endpoint that "
            "does not sample: greedy decoding, temperature 0, or one seed). The intervals "
            "count tasks, not runs; give --temperature to sample."
        )
    return (
        f"\n\nRepeats of {', '.join(alike)} gave the same answer on every task: for "
        "them repeats add no information."
    )


def _with_bounds(columns: list[str]) -> list[str]:
    """The columns, each pass@k followed by its interval and the tasks it averages."""
    return [
        name
        for column in columns
        for name in (
            [column, f"{column}_low", f"{column}_high", f"{column}_tasks"]
            if PassK.parse(column)
            else [column]
        )
    ]


def _chosen(summary: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """The columns asked for, as text; a pass@k with its interval."""
    shown = pd.DataFrame(index=summary.index)
    for column in columns:
        if PassK.parse(column):
            shown[f"{column} [95% CI]"] = _with_interval(summary, column)
        else:
            shown[column] = summary[column].astype(str)
    return shown


def _with_interval(summary: pd.DataFrame, column: str) -> list[str]:
    """``value [low, high]`` as percentages, or a dash where there is no value."""
    values = zip(summary[column], summary[f"{column}_low"], summary[f"{column}_high"], strict=True)
    return [f"{v:.0%} [{lo:.0%}, {hi:.0%}]" if not math.isnan(v) else "—" for v, lo, hi in values]


def retried_note(summary: pd.DataFrame) -> str:
    """A footnote when cost includes runs superseded by --retry-errors."""
    retried = int(summary["retried_runs"].sum()) if "retried_runs" in summary else 0
    if not retried:
        return ""
    return (
        f"\n\nCost includes {retried} runs that ended in api_error or tool_error and were "
        "run again (--retry-errors): they are not counted as runs, but their tokens were spent."
    )


def cache_note(summary: pd.DataFrame) -> str:
    """A footnote when calls were replayed (the response cache, or a call shared by paired
    arms): their cost apart, when it was priced at run time."""
    hits = int(summary["cache_hits"].sum()) if "cache_hits" in summary else 0
    if not hits:
        return ""
    saved = float(summary["cost_from_cache_usd"].sum(min_count=1))
    head = (
        f"\n\nResponse cache: {hits} model calls were replayed, not sent (from --cache, or "
        "shared by another arm with --paired); "
    )
    if math.isnan(saved):
        return head + (
            "the cost column counts them at what they cost when first served, which was not "
            "priced at run time, so the part they stand for is not known."
        )
    return head + (
        f"${saved:.4f} of the cost column is what they cost when first served, not spent "
        "again on this run."
    )


def _exact_zero(value: object) -> object:
    """A float within rounding of zero as 0: an interval bound of 1.4e-17 is 0."""
    return 0.0 if isinstance(value, float) and abs(value) < 1e-12 else value


#: LaTeX's special characters, and the few non-ASCII ones tables use, as LaTeX writes them.
_LATEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "→": r"$\rightarrow$",
    "—": "---",
    "·": r"$\cdot$",
    "\u2212": "-",  # a minus sign
}


def latex_text(text: str) -> str:
    """``text`` as LaTeX typesets it: no character starts a comment, maths or a command."""
    return "".join(_LATEX.get(char, char) for char in text)


def _shows(summary: pd.DataFrame, column: str) -> bool:
    """Whether any arm has a value in ``column`` (absent from a --columns selection)."""
    return column in summary and not summary[column].isna().all()


def _shows_count(summary: pd.DataFrame, column: str) -> bool:
    """Whether any arm counts something in ``column``."""
    return column in summary and bool(summary[column].fillna(0).any())


def usage_warning(summary: pd.DataFrame) -> str:
    """A footnote when some responses reported no usage: totals then undercount, or hold
    estimates (--count-tokens)."""
    if "usage_missing" not in summary:
        return ""
    estimated = summary["usage_estimated"] if "usage_estimated" in summary else 0 * summary["n"]
    unknown = summary["usage_missing"] - estimated
    notes = []
    if int(unknown.sum()):
        arms = ", ".join(summary.loc[unknown > 0, "arm"].astype(str))
        notes.append(
            f"Usage unknown: {int(unknown.sum())} model calls ({arms}) reported no token usage. "
            "Their tokens are not zero but unknown, and are left out of the token and cost "
            "columns, which therefore undercount (--count-tokens estimates them)."
        )
    if int(estimated.sum()):
        arms = ", ".join(summary.loc[estimated > 0, "arm"].astype(str))
        notes.append(
            f"Usage estimated: {int(estimated.sum())} model calls ({arms}) reported no token "
            "usage; their tokens were counted with the embedded model's tokenizer, an estimate."
        )
    return "".join(f"\n\n{note}" for note in notes)


def _shown(summary: pd.DataFrame) -> pd.DataFrame:
    """The curated, human-readable view of a summary."""
    shown = pd.DataFrame(
        {k: summary[k] for k in summary.columns if k in ("model", "arm", *GROUPINGS)}
    )
    shown["arm"] = summary["arm"]
    shown["n"] = summary["n"]
    shown["accuracy [95% CI]"] = _with_interval(summary, "accuracy")
    if CORRECTED in summary:
        shown["corrected [95% CI]"] = _with_interval(summary, CORRECTED)
    if "published_accuracy" in summary:
        shown["published"] = [described(row) for _, row in summary.iterrows()]
    for column in summary.columns:
        if PassK.parse(str(column)):
            shown[f"{column} [95% CI]"] = _with_interval(summary, str(column))
    if "vs_difference" in summary:
        label = f"vs {summary['vs_reference'].iloc[0]} [95% CI], p"
        shown[label] = [
            "—" if math.isnan(d) else f"{d:+.0%} [{lo:+.0%}, {hi:+.0%}], p={p:.2g}"
            for d, lo, hi, p in zip(
                summary["vs_difference"],
                summary["vs_ci_low"],
                summary["vs_ci_high"],
                summary["vs_p_value"],
                strict=True,
            )
        ]
    if "vs_corrected" in summary:
        label = f"vs {summary['vs_reference'].iloc[0]} corrected [95% CI]"
        shown[label] = [
            "—" if math.isnan(d) else f"{d:+.0%} [{lo:+.0%}, {hi:+.0%}]"
            for d, lo, hi in zip(
                summary["vs_corrected"],
                summary["vs_corrected_low"],
                summary["vs_corrected_high"],
                strict=True,
            )
        ]
    shown["turns"] = summary["turns"].map("{:.1f}".format)
    shown["tools"] = summary["tool_calls"].map("{:.1f}".format)
    shown["tok in"] = summary["tokens_in"].map("{:,.0f}".format)
    shown["tok out"] = summary["tokens_out"].map("{:,.0f}".format)
    # Only when some run has them (``table.unreported``): reasoning is part of tok out, cache
    # writes part of tok in.
    for column, label in TOKEN_LABELS.items():
        if column in summary:
            shown[label] = summary[column].map(_tokens)
    shown["cost $"] = summary["cost_usd"].map(_money)
    if "judge_cost_usd" in summary:
        shown["judge $"] = summary["judge_cost_usd"].map(_money)
    with_judge = "judge_in_cost" in summary and bool(summary["judge_in_cost"].any())
    shown["$/correct (with judge $)" if with_judge else "$/correct"] = summary[
        "cost_per_correct"
    ].map(_money)
    shown["p50 s"] = summary["latency_p50"].map("{:.2f}".format)
    shown["p95 s"] = summary["latency_p95"].map("{:.2f}".format)
    if "ttft_p50" in summary and summary["ttft_p50"].notna().any():
        shown["p50 ttft"] = summary["ttft_p50"].map(lambda s: "—" if math.isnan(s) else f"{s:.2f}")
    if _shows(summary, "first_pass"):
        shown["first pass"] = summary["first_pass"].map(_share)
    if _shows(summary, "wrong_to_right"):
        shown["w→r"] = summary["wrong_to_right"].map(_count)
        shown["r→w"] = summary["right_to_wrong"].map(_count)
    if _shows(summary, "first_pass"):
        for column, label in CODE_LABELS.items():
            shown[label] = summary[column].map(_count)
    if _shows(summary, "coverage"):
        for column, label in CHECK_LABELS.items():
            shown[label] = summary[column].map(_share)
    if any(_shows_count(summary, column) for column in WHY_WRONG):
        shown["why wrong"] = [
            ", ".join(f"{label} {int(row[c])}" for c, label in WHY_WRONG.items() if row[c])
            for _, row in summary.iterrows()
        ]
    shown["ended"] = [
        ", ".join(f"{s} {int(row[f'status_{s}'])}" for s in STATUSES if row[f"status_{s}"])
        for _, row in summary.iterrows()
    ]
    return shown


#: The token kinds a table shows when some run has them, as shown.
TOKEN_LABELS = {"tokens_reasoning": "tok reasoning", "tokens_cache_write": "tok cache write"}


def _tokens(mean: float) -> str:
    """A mean token count; a dash where no run of the row recorded the kind."""
    return "—" if math.isnan(mean) else f"{mean:,.0f}"


#: The wrong grades the reading could not tell, counted (``table.why_wrong``), as shown.
WHY_WRONG = {
    "wrong_hedged": "hedged",
    "wrong_retracted": "retracted",
    "wrong_no_answer": "no answer",
}


CHECK_LABELS = {
    "coverage": "coverage",
    "precision": "precision",
    "check_r": "check r",
    "check_f": "check f",
    "predicted_precision": "predicted p·r/(p·r+(1-p)·f)",
}


CODE_LABELS = {
    "code_edits": "edits",
    "edits_same_result": "no effect",
    "false_accepts": "false acc",
    "false_rejects": "false rej",
}


def _count(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:.0f}"


def _share(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:.0%}"


def _money(value: float) -> str:
    if value is None or math.isnan(value):
        return "—"
    return f"{value:.4f}" if value < 1 else f"{value:,.2f}"
