"""The batches a results folder's runs sent (``batches.jsonl``), written before each is made,
so a run killed while its batch is pending resumes by polling that batch instead of paying
for its requests again.

One JSON object a line, appended as a batch goes::

    {"state": "submitting", "input_file_id": ..., "requests": {custom_id: [run, digest]},
     "submitted_at": ...}                     the file uploaded; the batch not yet made
    {"state": "created", "input_file_id": ..., "batch_id": ...}
    {"state": "completed" | "expired" | "failed" | "cancelled", "batch_id": ..., ...}

A request's ``digest`` names it within its run (the run's key, the request's body and how
many identical requests the run sent before it), so the same request of the same run made
again after a resume finds the batch that holds it. A line cut short by a kill is skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

JOURNAL = "batches.jsonl"


@dataclass(frozen=True)
class Journaled:
    """Where a request was sent: its batch (None while only its file is known) and line."""

    input_file_id: str
    batch_id: str | None
    custom_id: str


class BatchJournal:
    """A folder's ``batches.jsonl``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def submitting(self, input_file_id: str, requests: dict[str, tuple[str, str]]) -> None:
        """Before the batch is made: its file, and each line's run and digest."""
        held = {custom_id: list(pair) for custom_id, pair in requests.items()}
        self._append({"state": "submitting", "input_file_id": input_file_id,
                      "requests": held, "submitted_at": _now()})  # fmt: skip

    def created(self, input_file_id: str, batch_id: str) -> None:
        self._append({"state": "created", "input_file_id": input_file_id,
                      "batch_id": batch_id, "at": _now()})  # fmt: skip

    def finished(self, batch_id: str, state: str) -> None:
        self._append({"state": state, "batch_id": batch_id, "at": _now()})

    def sent(self) -> dict[str, Journaled]:
        """Every request journaled, by digest: the latest batch holding each."""
        files: dict[str, str | None] = {}
        lines: list[tuple[str, dict[str, Any]]] = []
        for entry in self._entries():
            file_id = entry.get("input_file_id")
            if not isinstance(file_id, str):
                continue
            if entry.get("state") == "submitting" and isinstance(entry.get("requests"), dict):
                files.setdefault(file_id, None)
                lines.append((file_id, entry["requests"]))
            elif entry.get("state") == "created" and isinstance(entry.get("batch_id"), str):
                files[file_id] = entry["batch_id"]
        found: dict[str, Journaled] = {}
        for file_id, requests in lines:
            for custom_id, pair in requests.items():
                if isinstance(pair, list) and len(pair) == 2 and isinstance(pair[1], str):
                    found[pair[1]] = Journaled(file_id, files[file_id], custom_id)
        return found

    def _entries(self) -> list[dict[str, Any]]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        entries = []
        for line in text.splitlines():
            try:
                entry = json.loads(line)
            except ValueError:  # cut short by a kill
                continue
            if isinstance(entry, dict):
                entries.append(entry)
        return entries

    def _append(self, entry: dict[str, Any]) -> None:
        with self.path.open("a", encoding="utf-8") as journal:
            journal.write(json.dumps(entry) + "\n")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
