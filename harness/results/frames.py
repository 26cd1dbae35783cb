"""Records as the DataFrame every table, comparison and plot reads, priced.

``records_frame`` builds it from ``RunRecord``s (the records a run just made, or a few
read one by one); ``harness.results.columns`` reads a folder's runs.jsonl straight into the same
frame, fast. ``Pricing`` says which price table, and which model's prices, cost them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from harness.results.columns_sql import ANSWER_KEY, answer_key
from harness.results.prices import PriceTable
from harness.results.records import RunRecord


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
