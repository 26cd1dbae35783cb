"""``loopbench export --format otlp``: a results folder's runs as OpenTelemetry traces,
written as OTLP JSON (``-o``) and/or sent to an OTLP/HTTP receiver (``--otlp-endpoint``).
The spans are ``loopbench.harness.results.otlp``'s; this is what the command says and refuses."""

from __future__ import annotations

from pathlib import Path

import click

from loopbench.harness.errors import BadInput
from loopbench.harness.files import output_errors
from loopbench.harness.results.otlp import (
    TRACES,
    folder_spans,
    require_otlp,
    send,
    traces_url,
    write_json,
)


def export_otlp(results: Path, output: Path | None, endpoint: str | None) -> None:
    """Write and/or send RESULTS' runs as traces; ``BadInput`` in one line otherwise (an
    ``OtlpError``: not a URL, the extra not installed, the spans not accepted)."""
    url = None if endpoint is None else traces_url(endpoint)
    require_otlp()
    found = folder_spans(results)
    if not found.runs:
        raise BadInput(f"{results}: no finished runs yet")
    spans = found.spans
    # guard: otlp-folder-without-traces-says
    if not found.traced:
        click.echo(
            f"note: {results} has no {TRACES}: each run is a root span alone, without its "
            "model and tool calls",
            err=True,
        )
    # guard: otlp-runs-without-trace-line
    elif found.untraced:
        click.echo(
            f"note: {found.untraced} of {found.runs} runs have no line in {results / TRACES}: "
            "each of those is a root span alone",
            err=True,
        )
    counted = f"{found.runs:,} traces, {len(spans):,} spans"
    if output is not None:
        with output_errors(output), output.open("w", encoding="utf-8") as handle:
            write_json(spans, handle)
        click.echo(f"wrote {output} ({counted}, OTLP JSON)")
    if url is not None:
        requests = send(spans, url)
        click.echo(f"sent {counted} to {url} ({requests} request{'s' * (requests != 1)})")
