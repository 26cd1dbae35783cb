"""Per-arm tables from run records: accuracy with an interval, turns, tokens, cost, latency.

Accuracy is correct answers over runs that reached the model's reasoning: runs
that ended in ``api_error`` or ``pattern_error`` say nothing about the pattern, so
they are left out of accuracy, but their tokens stay in cost. Cost per correct
answer is the total cost of all runs, failures included, divided by the number
correct.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

import numpy as np
import pandas as pd

from harness.columns_sql import ANSWER_KEY, answer_key
from harness.experiment import arm_identity
from harness.patterns.base import INFRASTRUCTURE_STATUSES, STATUSES
from harness.records import RunRecord
from harness.report.axis import model_keys
from harness.report.checks import answer_changes, check_measures, code_measures
from harness.report.pass_k import PassK
from harness.report.prices import PriceTable
from harness.report.stats import PairedTasks, accuracy_interval, wilson_interval

GROUPINGS = ("slice", "task", "model")
#: What an accuracy interval is about: tasks like these (the default), or the runs made.
INTERVALS = ("tasks", "runs")
INTERVAL_NOTES = {
    "tasks": "a 95% interval about tasks like these (Wilson's on the effective number of "
    "runs: repeats of a task are correlated samples of it, clustered by task; --interval "
    "runs for the interval on these tasks only)",
    "runs": "a 95% Wilson interval on the runs made, as if independent: about these tasks "
    "only, not tasks like these (--interval tasks)",
}
NOTE = (
    "Accuracy: correct / runs graded or out of budget (api_error and pattern_error runs left "
    "out), with {interval}. Cost per correct: total cost of all runs / correct. "
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


@dataclass(frozen=True)
class Pricing:
    table: PriceTable
    price_as: str | None = None

    @property
    def label(self) -> str:
        if self.price_as:
            return f"cost priced as {self.price_as} (prices as of {self.table.as_of})"
        return f"prices as of {self.table.as_of}"


def records_frame(records: Sequence[RunRecord], pricing: Pricing | None = None) -> pd.DataFrame:
    frame = pd.DataFrame([r.model_dump() for r in records])
    if frame.empty:
        return frame
    keys = [answer_key(r.answer, r.status) for r in records]
    frame[ANSWER_KEY] = np.array(keys, dtype=np.uint64)
    frame["task"] = frame["task_id"]
    if pricing is not None:
        frame["cost_usd"] = [_cost(r, pricing) for r in records]
    return frame


def _cost(record: RunRecord, pricing: Pricing) -> float:
    model = pricing.price_as or record.model
    price = pricing.table.require(model) if pricing.price_as else pricing.table.find(model)
    if price is None:
        return math.nan if record.cost_usd is None else record.cost_usd
    return price.cost(record.tokens_in, record.tokens_out, record.tokens_cached)


@dataclass(frozen=True)
class Measures:
    """What a summary computes beyond its fixed columns."""

    interval: str = "tasks"
    """The accuracy interval: about tasks like these ("tasks") or the runs made ("runs")."""
    pass_k: tuple[PassK, ...] = ()
    """pass@k and pass^k columns to add (coding runs always get pass@1)."""


def repeat_measures(frame: pd.DataFrame) -> tuple[PassK, ...]:
    """What repeats say about k tries, at k = the most repeats of a task: pass@1, pass@k and
    pass^k; none with one run a task."""
    most = int(frame.groupby(["arm", "task_id"]).size().max()) if len(frame) else 0
    return (PassK("@", 1), PassK("@", most), PassK("^", most)) if most > 1 else ()


def summarize(
    frame: pd.DataFrame,
    by: str | None = None,
    retried: pd.DataFrame | None = None,
    measures: Measures = Measures(),
) -> pd.DataFrame:
    """One row per arm (and ``by`` value). ``retried`` holds the records that later runs
    superseded (``--retry-errors``): not runs of their own, but their cost was spent."""
    if measures.interval not in INTERVALS:
        raise ValueError(f"unknown interval {measures.interval!r}; choose tasks or runs")
    keys = list(dict.fromkeys([*model_keys(frame), "arm", *([_column(by)] if by else [])]))
    spent = retried if retried is not None and not retried.empty else None
    rows = []
    for group, runs in frame.groupby(keys, sort=True, dropna=False):
        group = group if isinstance(group, tuple) else (group,)
        earlier = None
        if spent is not None:
            same = pd.Series(True, index=spent.index)
            for key, value in zip(keys, group, strict=True):
                same &= spent[key] == value
            earlier = spent[same]
        rows.append(dict(zip(keys, group, strict=True)) | _summary(runs, earlier, measures))
    return pd.DataFrame(rows)


def _column(by: str) -> str:
    if by not in GROUPINGS:
        raise ValueError(f"cannot group by {by!r}; choose one of {', '.join(GROUPINGS)}")
    return by


def _summary(
    runs: pd.DataFrame, retried: pd.DataFrame | None, measures: Measures
) -> dict[str, object]:
    graded = runs[~runs["status"].isin(INFRASTRUCTURE_STATUSES)]
    right = graded["correct"].eq(True)  # None (not graded) is not correct
    correct = int(right.sum())
    if measures.interval == "runs":
        low, high = wilson_interval(correct, len(graded))
    else:
        low, high = accuracy_interval(graded["task_id"].to_numpy(), right.to_numpy())
    total_cost = float(runs["cost_usd"].sum(min_count=len(runs))) if len(runs) else math.nan
    if retried is not None and len(retried):
        total_cost += float(retried["cost_usd"].sum(min_count=len(retried)))
    statuses = runs["status"].value_counts()
    code = code_measures(graded)
    return {
        "n": len(runs),
        "correct": correct,
        "accuracy": correct / len(graded) if len(graded) else math.nan,
        "accuracy_low": low,
        "accuracy_high": high,
        "turns": runs["turns"].mean(),
        "tool_calls": runs["tool_calls"].mean(),
        "tokens_in": runs["tokens_in"].mean(),
        "tokens_out": runs["tokens_out"].mean(),
        "tokens_cached": runs["tokens_cached"].mean(),
        "cost_usd": total_cost,
        "cost_per_correct": total_cost / correct if correct else math.nan,
        "latency_p50": runs["latency_s"].quantile(0.5),
        "latency_p95": runs["latency_s"].quantile(0.95),
        "parse_failures": int(runs["parse_failures"].sum()),
        "retried_runs": 0 if retried is None else len(retried),
        "usage_missing": int(runs["usage_missing"].sum()),
        "usage_estimated": int(runs["usage_estimated"].sum()),
        "cache_hits": int(runs["cache_hits"].sum()),
        # NaN when replayed calls were not priced at run time (the model had no price then).
        "cost_from_cache_usd": float(runs["cost_from_cache_usd"].sum(min_count=1)),
        **{f"status_{s}": int(statuses.get(s, 0)) for s in STATUSES},
        **answer_changes(graded),
        **check_measures(graded),
        **code,
        **_pass_measures(graded, measures.pass_k, coding=not math.isnan(code["first_pass"])),
        "interval": measures.interval,
        "repeats_agree": _repeats_agree(graded),
    }


def _repeats_agree(graded: pd.DataFrame) -> float:
    """1 when every task run more than once gave the same answer every time (its repeats
    are one sample, counted several times), 0 when some did not, NaN when none ran twice."""
    if ANSWER_KEY not in graded:
        return math.nan
    by_task = graded.groupby("task_id", sort=False)[ANSWER_KEY]
    repeated = by_task.size() > 1
    if not repeated.any():
        return math.nan
    return float((by_task.nunique()[repeated] == 1).all())


def _pass_measures(
    graded: pd.DataFrame, wanted: tuple[PassK, ...], coding: bool
) -> dict[str, float]:
    """The pass@k / pass^k asked for; coding runs report pass@1 over their samples."""
    chosen = list(dict.fromkeys([*([PassK("@", 1)] if coding else []), *wanted]))
    values: dict[str, float] = {}
    for measure in chosen:
        values |= measure.summary(graded["task_id"], graded["correct"])
    return values


FORMATS = ("md", "csv", "json", "latex", "html")


def with_reference(frame: pd.DataFrame, summary: pd.DataFrame, reference: str) -> pd.DataFrame:
    """Add, per arm, the paired difference in accuracy against ``reference`` on the same
    (task, repeat) runs, those that failed on infrastructure on either side left out: its
    95% interval and the p of the paired test, both clustered by task (as ``compare``'s)."""
    arms = set(frame["arm"])
    reference = reference if reference in arms else arm_identity(reference)
    if reference not in arms:
        raise ValueError(f"no arm {reference!r} in these results; arms: {', '.join(sorted(arms))}")
    usable = frame[~frame["status"].isin(INFRASTRUCTURE_STATUSES)]
    base = usable[usable["arm"] == reference]
    columns: dict[str, list[float]] = {
        "vs_difference": [],
        "vs_ci_low": [],
        "vs_ci_high": [],
        "vs_p_value": [],
    }
    # With several models, each arm is paired with the reference on its own model.
    on = ["task_id", "repeat", *model_keys(frame)]
    for _, row in summary.iterrows():
        arm = row["arm"]
        runs = usable[usable["arm"] == arm]
        if "model" in on:
            runs = runs[runs["model"] == row["model"]]
        pairs = runs.merge(base, on=on, suffixes=("", "_r"))
        if arm == reference or pairs.empty:
            for values in columns.values():
                values.append(math.nan)
            continue
        paired = PairedTasks.of(
            pairs["task_id"].to_numpy(),
            pairs["correct"].eq(True).to_numpy(),
            pairs["correct_r"].eq(True).to_numpy(),
        )
        low, high = paired.interval()
        columns["vs_difference"].append(paired.difference)
        columns["vs_ci_low"].append(low)
        columns["vs_ci_high"].append(high)
        columns["vs_p_value"].append(paired.p_value())
    return summary.assign(**columns, vs_reference=reference)


def render(
    summary: pd.DataFrame, fmt: str, title: str = "", columns: list[str] | None = None
) -> str:
    """The summary as a table in ``fmt``; ``columns`` keeps those columns only (a pass@k
    column brings its interval along)."""
    whole = summary
    if columns:
        unknown = [c for c in columns if c not in summary.columns]
        if unknown:
            raise ValueError(
                f"unknown column {unknown[0]!r}; columns: {', '.join(summary.columns)} "
                "(pass@k and pass^k, e.g. pass@1 or pass^3, are computed when asked for)"
            )
        summary = summary[columns if fmt not in ("json", "csv") else _with_bounds(columns)]
    if fmt == "json":
        return str(summary.map(_exact_zero).to_json(orient="records", indent=2))
    if fmt == "csv":
        return str(summary.to_csv(index=False))
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose {', '.join(FORMATS)}")
    shown = _chosen(whole, columns) if columns else _shown(summary)
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
    return f"{head}{table}\n\n{footnotes(whole)}"


def footnotes(summary: pd.DataFrame) -> str:
    """What the table's columns mean, and what the reader should know of these runs."""
    interval = summary["interval"].iloc[0] if "interval" in summary and len(summary) else "tasks"
    note = NOTE.format(interval=INTERVAL_NOTES[interval])
    note += VS_NOTE if "vs_difference" in summary else ""
    note += PASS_NOTE if any(PassK.parse(str(c)) for c in summary.columns) else ""
    note += CHANGES_NOTE if _shows(summary, "wrong_to_right") else ""
    note += CHECK_NOTE if _shows(summary, "coverage") else ""
    note += CODE_NOTE if _shows(summary, "first_pass") else ""
    notes = repeats_note(summary) + usage_warning(summary) + cache_note(summary)
    return note + notes + retried_note(summary)


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
        f"\n\nCost includes {retried} runs that ended in api_error and were run again "
        "(--retry-errors): they are not counted as runs, but their tokens were spent."
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
    shown["turns"] = summary["turns"].map("{:.1f}".format)
    shown["tools"] = summary["tool_calls"].map("{:.1f}".format)
    shown["tok in"] = summary["tokens_in"].map("{:,.0f}".format)
    shown["tok out"] = summary["tokens_out"].map("{:,.0f}".format)
    shown["cost $"] = summary["cost_usd"].map(_money)
    shown["$/correct"] = summary["cost_per_correct"].map(_money)
    shown["p50 s"] = summary["latency_p50"].map("{:.2f}".format)
    shown["p95 s"] = summary["latency_p95"].map("{:.2f}".format)
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
    shown["ended"] = [
        ", ".join(f"{s} {int(row[f'status_{s}'])}" for s in STATUSES if row[f"status_{s}"])
        for _, row in summary.iterrows()
    ]
    return shown


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
