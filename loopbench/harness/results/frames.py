"""Records as the DataFrame every table, comparison and plot reads, priced.

Two readers build this frame, and both are needed. ``loopbench.harness.results.columns`` reads a
folder's runs.jsonl straight into it, fast: every command reads folders that way.
``records_frame`` builds it from ``RunRecord``s, one at a time through the record model:
records no file holds yet (those a run just made, the ones tests and benchmarks make),
the runs the report lists (read whole anyway, for their traces), a file DuckDB cannot
read as ``read_records`` does (the columns fall back on it), and the reference the columns
are tested against (tests/harness/test_columns*.py), right by construction but a minute
and gigabytes at a million runs. Both price with ``priced``; ``Pricing`` says which
price table, and which model's prices, cost them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from loopbench.harness.results.columns_sql import ANSWER_KEY, answer_key
from loopbench.harness.results.grade_kinds import GRADE_KIND, kind_code, kinds_column
from loopbench.harness.results.prices import Price, PriceTable
from loopbench.harness.results.records import RunRecord

#: What a run's cost is priced from: its model, its tokens, and the cost it recorded.
PRICED = (
    "model",
    "tokens_in",
    "tokens_out",
    "tokens_cached",
    "tokens_cache_write",
    "cost_usd",
    "turns",
    "batched_calls",
)


@dataclass(frozen=True)
class Pricing:
    table: PriceTable
    price_as: str | None = None

    @property
    def label(self) -> str:
        return self.label_for(())

    def label_for(self, models: Iterable[str]) -> str:
        """What the costs of runs of ``models`` are priced at, with the prices' dates."""
        if self.price_as:
            return (
                f"cost priced as {self.price_as} (prices as of {self.table.dated([self.price_as])})"
            )
        return f"prices as of {self.table.dated(models)}"


def records_frame(records: Sequence[RunRecord], pricing: Pricing | None = None) -> pd.DataFrame:
    frame = pd.DataFrame([r.model_dump() for r in records])
    if frame.empty:
        return frame
    keys = [answer_key(r.answer, r.status, r.canonical) for r in records]
    frame[ANSWER_KEY] = np.array(keys, dtype=np.uint64)
    kinds = [kind_code(r.correct, r.grade_reason) for r in records]
    frame[GRADE_KIND] = kinds_column(np.array(kinds, dtype=np.int8))
    frame["task"] = frame["task_id"]
    if pricing is not None:
        frame["cost_usd"] = priced({name: frame[name].to_numpy() for name in PRICED}, pricing)
    return frame


def priced(columns: dict[str, np.ndarray[Any, Any]], pricing: Pricing) -> np.ndarray[Any, Any]:
    """Each run's cost: the recorded tokens at the table's price of the run's model (or of
    ``price_as``), else the cost recorded, else NaN; ``columns`` holds ``PRICED``."""
    cost = np.array(columns["cost_usd"], dtype=np.float64)
    models = columns["model"]
    found = pd.unique(models)
    prices: dict[str, Price | None]
    if pricing.price_as:
        prices = {model: pricing.table.require(pricing.price_as) for model in found}
    else:
        prices = {model: pricing.table.find(model) for model in found}
    tokens_in, tokens_out = columns["tokens_in"], columns["tokens_out"]
    cached = columns["tokens_cached"]
    # Null in records written before cache writes were recorded: none were priced then.
    written = np.nan_to_num(np.asarray(columns["tokens_cache_write"], dtype=np.float64))
    batched = _batched_share(columns)
    for model, price in prices.items():
        if price is None:
            continue
        # Every row, without a copy of each column, when the runs are of one model.
        rows = slice(None) if len(prices) == 1 else models == model
        cost[rows] = price.costs(tokens_in[rows], tokens_out[rows], cached[rows], written[rows])
        share = pricing.table.batch_share(price)
        if share < 1:  # the batched calls at the batch price (docs/batch.md)
            cost[rows] *= 1 - (1 - share) * batched[rows]
    return cost


def _batched_share(columns: dict[str, np.ndarray[Any, Any]]) -> np.ndarray[Any, Any]:
    """Each run's share of its calls answered within a batch: 0 where none was (null in
    records written before batches); a run's tokens are priced at the batch share in
    this proportion (exact when all of its calls, or none, were batched)."""
    # guard: table-prices-batched-calls
    batched = np.nan_to_num(np.asarray(columns["batched_calls"], dtype=np.float64))
    turns = np.asarray(columns["turns"], dtype=np.float64)
    return np.divide(batched, turns, out=np.zeros_like(batched), where=turns > 0)
