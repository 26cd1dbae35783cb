"""GitHub Actions' job summary: markdown appended to the file ``GITHUB_STEP_SUMMARY`` names.

Other steps write to the same file, so it is appended to, never replaced. A file that
cannot be written costs the summary only: one warning line, and the command's own
output and exit code are what they would have been.
"""

from __future__ import annotations

import os

import click

from loopbench.harness.redaction import redact

VARIABLE = "GITHUB_STEP_SUMMARY"


def append_step_summary(markdown: str, heading: str = "loopbench compare") -> None:
    """Append ``markdown`` under ``heading`` when the variable is set; else do nothing."""
    path = os.environ.get(VARIABLE)
    if not path:
        return
    try:
        # guard: ci-job-summary-appended-not
        with open(path, "a", encoding="utf-8", errors="backslashreplace") as summary:
            # guard: secrets-ci-job-summary-redacted
            summary.write(redact(f"### {heading}\n\n{markdown}\n\n"))
    # guard: ci-unwritable-job-summary-warning
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        click.echo(f"warning: job summary not written to {path} ({VARIABLE}): {reason}", err=True)
