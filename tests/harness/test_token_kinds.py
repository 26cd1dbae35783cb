"""Every kind of token an endpoint reports, recorded and priced: reasoning tokens (a share of
the output) and cache writes (a share of the input) beside the cache reads, from a loopback
endpoint that reports them over a grid of patterns, down to the table, the export, the
OTLP spans and the plot; older folders read with the new fields null, as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import loopbench.harness.fakes.fake_server as fake_server
from loopbench.harness.cli.main import main
from loopbench.harness.fakes.fake_server import FakeServer, Reply
from loopbench.harness.models.cache import _response_from
from loopbench.harness.models.types import Usage
from loopbench.harness.models.wire import parse_usage
from loopbench.harness.report.plots import plot_tokens
from loopbench.harness.report.table import summarize
from loopbench.harness.results.frames import Pricing, records_frame
from loopbench.harness.results.prices import PriceError, load_prices
from loopbench.harness.results.reading import read_records
from loopbench.harness.results.records import RunRecord

SECRET = "sk-token-kinds-secret-never-written-01"
ARMS = ["direct", "cot", "react", "react_text"]
OLD = Path(__file__).parents[1] / "fixtures" / "results-0.1.0"
#: USD per million tokens; every rate different, so a token priced at the wrong one shows.
PRICES = """as_of = "2026-12-06"
[models.fake]
input = 2.0
cached_input = 0.2
cache_write = 2.5
output = 8.0
"""
RATES = {"input": 2.0, "cached": 0.2, "cache_write": 2.5, "output": 8.0}


def shares(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """The fake's usage with every share reported, each in a place some server puts it:
    reasoning in ``completion_tokens_details``, cache writes in ``prompt_tokens_details`` on
    one call and at the top level (LiteLLM's ``cache_creation_input_tokens``) on the next."""
    usage = PLAIN(body, reply)
    usage["completion_tokens"] += 7  # the reasoning is part of the output
    usage["completion_tokens_details"] = {"reasoning_tokens": 7}
    written = (usage["prompt_tokens"] - usage["prompt_tokens_details"]["cached_tokens"]) // 2
    if len(body["messages"]) % 2:
        usage["prompt_tokens_details"]["cache_write_tokens"] = written
    else:
        usage["cache_creation_input_tokens"] = written
    SERVED["reasoning"] += 7
    SERVED["cache_write"] += written
    SERVED["output"] += usage["completion_tokens"]
    return usage


PLAIN = fake_server.usage_for
SERVED = {"reasoning": 0, "cache_write": 0, "output": 0}


def invoke(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), env={"LOOPBENCH_API_KEY": SECRET})


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """A grid of four patterns on three tasks against an endpoint reporting every share."""
    folder = tmp_path_factory.mktemp("kinds")
    prices = folder / "prices.toml"
    prices.write_text(PRICES, encoding="utf-8")
    out = folder / "results"
    SERVED.update(reasoning=0, cache_write=0, output=0)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fake_server, "usage_for", shares)
        with FakeServer() as server:
            arms = [a for arm in ARMS for a in ("--arm", arm)]
            ran = invoke(
                "run", "--base-url", server.base_url, "--model", "fake", "--out", str(out),
                "--prices", str(prices), "--limit", "3", "--quiet", *arms,
            )  # fmt: skip
            assert ran.exit_code == 0, ran.output
            served = server.served
    return out, served


def traced_usage(folder: Path) -> dict[str, dict[str, int]]:
    """Each run's usage as its trace holds it, summed over its calls."""
    sums: dict[str, dict[str, int]] = {}
    for line in (folder / "traces.jsonl").read_text(encoding="utf-8").splitlines():
        trace = json.loads(line)
        total = sums.setdefault(trace["run_id"], {})
        for event in trace["events"]:
            if event["kind"] == "response":
                for kind, count in event["response"]["usage"].items():
                    total[kind] = total.get(kind, 0) + count
    return sums


def test_every_record_holds_the_tokens_of_each_kind_the_endpoint_reported(results):
    out, served = results
    records = read_records(out)
    assert {r.pattern for r in records} == set(ARMS) and len(records) == 12
    assert sum(r.tokens_in for r in records) == served.prompt_tokens
    assert sum(r.tokens_out for r in records) == SERVED["output"]
    assert sum(r.tokens_cached for r in records) == served.cached_tokens > 0
    assert sum(r.tokens_reasoning or 0 for r in records) == SERVED["reasoning"] > 0
    assert sum(r.tokens_cache_write or 0 for r in records) == SERVED["cache_write"] > 0
    traced = traced_usage(out)
    for record in records:
        usage = traced[record.run_id]
        assert record.tokens_reasoning == usage["reasoning"] == 7 * record.turns
        assert record.tokens_cache_write == usage["cache_write"] > 0
        assert (record.tokens_in, record.tokens_out) == (usage["input"], usage["output"])
        assert record.tokens_cached == usage["cached"]


def expected_cost(record: RunRecord) -> float:
    written = record.tokens_cache_write or 0
    fresh = record.tokens_in - record.tokens_cached - written
    return (
        fresh * RATES["input"]
        + record.tokens_cached * RATES["cached"]
        + written * RATES["cache_write"]
        + record.tokens_out * RATES["output"]
    ) / 1e6


def test_the_cost_prices_each_kind_of_token_at_its_own_rate(results, tmp_path):
    out, _ = results
    records = read_records(out)
    for record in records:
        assert record.cost_usd == pytest.approx(expected_cost(record), rel=1e-12)
    table = load_prices(out.parent / "prices.toml")
    frame = records_frame(records, Pricing(table))
    assert list(frame["cost_usd"]) == pytest.approx([expected_cost(r) for r in records])
    # Without a cache-write rate a cache write costs the input rate.
    plain = tmp_path / "plain.toml"
    plain.write_text(PRICES.replace("cache_write = 2.5\n", ""), encoding="utf-8")
    price = load_prices(plain).require("fake")
    record = records[0]
    fresh = record.tokens_in - record.tokens_cached
    assert price.cost(
        record.tokens_in, record.tokens_out, record.tokens_cached, record.tokens_cache_write or 0
    ) == pytest.approx((fresh * 2.0 + record.tokens_cached * 0.2 + record.tokens_out * 8.0) / 1e6)


def test_the_table_shows_reasoning_and_cache_writes_only_when_some_run_has_them(results):
    out, _ = results
    shown = invoke("table", str(out))
    assert shown.exit_code == 0, shown.output
    assert "tok reasoning" in shown.output and "tok cache write" in shown.output
    as_json = json.loads(invoke("table", str(out), "--format", "json").output)
    assert all(row["tokens_reasoning"] == 7 * row["turns"] for row in as_json)
    old = invoke("table", str(OLD))
    assert old.exit_code == 0, old.output
    assert "tok reasoning" not in old.output and "cache write" not in old.output
    old_json = json.loads(invoke("table", str(OLD), "--format", "json").output)
    assert not {"tokens_reasoning", "tokens_cache_write"} & set(old_json[0])


def test_runs_that_report_no_shares_add_no_columns(results):
    out, _ = results
    records = [
        r.model_copy(update={"tokens_reasoning": 0, "tokens_cache_write": 0})
        for r in read_records(out)
    ]
    summary = summarize(records_frame(records))
    assert not {"tokens_reasoning", "tokens_cache_write"} & set(summary.columns)
    assert {"tokens_reasoning", "tokens_cache_write"} <= set(
        summarize(records_frame(read_records(out))).columns
    )


def test_an_older_folder_reads_the_new_fields_as_null_and_prices_as_before():
    records = read_records(OLD)
    assert records and all(r.tokens_reasoning is None for r in records)
    assert all(r.tokens_cache_write is None for r in records)
    table = load_prices()
    price = table.require("gpt-4o-mini")
    frame = records_frame(records, Pricing(table, "gpt-4o-mini"))
    before = [
        (
            max(0, r.tokens_in - r.tokens_cached) * price.input
            + r.tokens_cached * (price.cached_input or price.input)
            + r.tokens_out * price.output
        )
        / 1e6
        for r in records
    ]
    assert list(frame["cost_usd"]) == before  # the same arithmetic, to the last bit
    compared = invoke("compare", str(OLD), str(OLD))
    assert compared.exit_code == 0, compared.output


def test_export_and_the_otlp_spans_carry_each_kind(results, tmp_path):
    out, _ = results
    csv = tmp_path / "runs.csv"
    assert invoke("export", str(out), "--format", "csv", "-o", str(csv)).exit_code == 0
    header = csv.read_text(encoding="utf-8").splitlines()[0].split(",")
    assert {"tokens_reasoning", "tokens_cache_write"} <= set(header)
    spans = tmp_path / "spans.json"
    done = invoke("export", str(out), "--format", "otlp", "-o", str(spans))
    assert done.exit_code == 0, done.output
    written = json.loads(spans.read_text(encoding="utf-8"))
    calls: list[dict[str, str]] = []
    for resource in written["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                values = {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}
                if values.get("gen_ai.operation.name") == "chat":
                    calls.append(values)
    records = read_records(out)
    assert len(calls) == sum(r.turns for r in records)

    def total(name: str) -> int:
        return sum(int(c.get(name, 0)) for c in calls)

    assert total("gen_ai.usage.reasoning.output_tokens") == sum(
        r.tokens_reasoning or 0 for r in records
    )
    assert total("gen_ai.usage.cache_creation.input_tokens") == sum(
        r.tokens_cache_write or 0 for r in records
    )
    assert total("gen_ai.usage.cache_read.input_tokens") == sum(r.tokens_cached for r in records)


def test_the_token_plot_draws_every_kind(results, tmp_path):
    out, _ = results
    summary = summarize(records_frame(read_records(out)))
    plot_tokens(summary, tmp_path / "tokens.png", "tokens")
    assert (tmp_path / "tokens.png").stat().st_size > 0


@pytest.mark.parametrize(
    ("usage", "names"),
    [
        ({"completion_tokens_details": {"reasoning_tokens": -1}}, "reasoning_tokens"),
        ({"completion_tokens_details": {"reasoning_tokens": 1.5}}, "reasoning_tokens"),
        ({"completion_tokens_details": {"reasoning_tokens": 4}}, "4 reasoning of 3 output"),
        ({"completion_tokens_details": "many"}, "usage.completion_tokens_details"),
        ({"prompt_tokens_details": {"cache_write_tokens": -2}}, "cache_write_tokens"),
        ({"prompt_tokens_details": {"cache_creation_tokens": "2"}}, "cache_creation_tokens"),
        ({"cache_creation_input_tokens": 0.5}, "cache_creation_input_tokens"),
        ({"cache_creation_input_tokens": 11}, "11 cache_write and 0 cached of 10 input"),
        (
            {"prompt_tokens_details": {"cached_tokens": 6, "cache_write_tokens": 5}},
            "5 cache_write and 6 cached of 10 input",
        ),
    ],
)
def test_a_share_that_cannot_be_true_makes_the_reply_unusable(usage, names):
    with pytest.raises(ValueError, match=names):
        parse_usage({"prompt_tokens": 10, "completion_tokens": 3, **usage})


def test_shares_are_read_where_each_server_reports_them():
    base = {"prompt_tokens": 10, "completion_tokens": 3}
    both = {
        **base,
        "prompt_tokens_details": {"cached_tokens": 4, "cache_creation_tokens": 6},
        "completion_tokens_details": {"reasoning_tokens": 3},
    }
    assert parse_usage(both) == Usage(10, 3, 4, reasoning_tokens=3, cache_write_tokens=6)
    litellm = {**base, "cache_creation_input_tokens": 10.0}
    assert parse_usage(litellm) == Usage(10, 3, 0, cache_write_tokens=10)
    unsaid = {**base, "completion_tokens_details": None, "prompt_tokens_details": {}}
    assert parse_usage(unsaid) == Usage(10, 3, 0)


def test_a_response_cached_before_the_shares_were_kept_still_loads():
    stored = {
        "message": {"role": "assistant", "content": "4", "tool_calls": [], "tool_call_id": None},
        "finish_reason": "stop",
        "usage": {"input_tokens": 5, "output_tokens": 1, "cached_tokens": 0, "missing": 0,
                  "estimated": 0},
    }  # fmt: skip
    response = _response_from(json.dumps(stored).encode())
    assert response.usage == Usage(5, 1) and response.from_cache


def test_the_report_shows_each_kind_in_its_table_and_on_each_run(results, tmp_path):
    out, _ = results
    page = tmp_path / "report.html"
    made = invoke("report", str(out), "-o", str(page))
    assert made.exit_code == 0, made.output
    html = page.read_text(encoding="utf-8")
    assert "tok reasoning" in html and "tok cache write" in html
    assert html.count('"tokens_reasoning"') == len(read_records(out))
    old = tmp_path / "old.html"
    assert invoke("report", str(OLD), "-o", str(old)).exit_code == 0
    assert '"tokens_reasoning"' not in old.read_text(encoding="utf-8")


def test_the_shipped_anthropic_prices_follow_the_cache_multipliers():
    table = load_prices()
    for model in ("claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5"):
        price = table.require(f"{model}-20250929")
        assert price.cache_write == pytest.approx(1.25 * price.input)
        assert price.cached_input == pytest.approx(0.1 * price.input)


@pytest.mark.parametrize("rate", ["-1.0", '"3.75"', "nan"])
def test_a_cache_write_rate_that_is_not_a_price_is_refused_naming_it(tmp_path, rate):
    prices = tmp_path / "prices.toml"
    prices.write_text(PRICES.replace("cache_write = 2.5", f"cache_write = {rate}"), "utf-8")
    with pytest.raises(PriceError, match="cache_write"):
        load_prices(prices)


def test_a_table_title_gives_each_models_price_date_where_they_differ(tmp_path):
    prices = tmp_path / "prices.toml"
    prices.write_text(
        'as_of = "2025-08-07"\n[models.old]\ninput = 1.0\noutput = 2.0\n'
        '[models.new]\nas_of = "2025-11-15"\ninput = 1.0\noutput = 2.0\n',
        "utf-8",
    )
    pricing = Pricing(load_prices(prices))
    assert pricing.label_for(["old"]) == "prices as of 2025-08-07"
    assert pricing.label_for(["new"]) == "prices as of 2025-11-15"
    assert pricing.label_for(["old", "new", "unpriced"]) == (
        "prices as of 2025-11-15 (new), 2025-08-07 (old)"
    )
    assert Pricing(load_prices(prices), "new").label_for(["old"]) == (
        "cost priced as new (prices as of 2025-11-15)"
    )
