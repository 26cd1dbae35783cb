"""The batch price: a table-wide ``batch`` share, a model's own, and records written before
batches priced as they were."""

import json

import pytest

from loopbench.harness.results.columns import read_frame
from loopbench.harness.results.frames import Pricing
from loopbench.harness.results.prices import PriceError, load_prices
from loopbench.harness.results.reading import read_records

TABLE = """as_of = "2026-01-01"
batch = 0.5
[models.a]
input = 1.0
output = 2.0
[models.b]
input = 1.0
output = 2.0
batch = 0.25
as_of = "2026-02-01"
"""


def test_a_models_own_batch_share_beats_the_tables(tmp_path):
    (tmp_path / "prices.toml").write_text(TABLE)
    table = load_prices(tmp_path / "prices.toml")
    assert table.batch_share(table.require("a")) == 0.5
    assert table.batch_share(table.require("b")) == 0.25
    assert load_prices().batch == 0.5  # the shipped table's


@pytest.mark.parametrize("share", ["0", "1.5", "-0.5", '"0.5"'])
def test_a_batch_share_outside_0_to_1_is_refused_naming_the_field(tmp_path, share):
    (tmp_path / "prices.toml").write_text(TABLE.replace("batch = 0.5", f"batch = {share}"))
    with pytest.raises(PriceError, match="batch"):
        load_prices(tmp_path / "prices.toml")


def test_records_written_before_batches_read_as_unbatched(tmp_path):
    folder = tmp_path / "old"
    folder.mkdir()
    (folder / "experiment.json").write_text(json.dumps({"experiment_id": "x", "task_set": "t"}))
    record = {"run_id": "r1", "arm": "direct", "pattern": "direct", "task_set": "t",
              "task_id": "q1", "repeat": 0, "model": "gpt-4o-mini", "status": "answered",
              "turns": 2, "tokens_in": 1000, "tokens_out": 100, "cost_usd": 1.0}  # fmt: skip
    (folder / "runs.jsonl").write_text(json.dumps(record) + "\n")
    (read,) = read_records(folder)
    assert read.batched_calls is None
    frame = read_frame(folder, Pricing(load_prices()))
    full = load_prices().require("gpt-4o-mini").cost(1000, 100)
    assert frame["cost_usd"].iloc[0] == pytest.approx(full)
