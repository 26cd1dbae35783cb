"""The batches a results folder's runs sent (``batches.jsonl``), written before each is made,
so a run killed while its batch is pending resumes by polling that batch instead of paying
for its requests again.

One JSON object a line, appended as a batch goes::

    {"state": "submitting", KEY: ..., "requests": {custom_id: [run, digest]},
     "submitted_at": ...}                     the batch not yet made
    {"state": "created", KEY: ..., "batch_id": ...}
    {"state": "completed" | "expired" | "failed" | "cancelled" | "ended", "batch_id": ...}

KEY names what the batch is made of: ``input_file_id`` for OpenAI's Batch API (the file
uploaded), ``submission`` for Anthropic's Message Batches (an id made before the batch
is, which the API never sees). A request's ``digest`` names it within its run (the run's
key, the request's body and how many identical requests the run sent before it), so the
same request of the same run made again after a resume finds the batch that holds it. A
line cut short by a kill is skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

JOURNAL = "batches.jsonl"
#: The names a submission's key is journaled under, one a batch API.
KEYS = ("input_file_id", "submission")


@dataclass(frozen=True)
class Journaled:
    """Where a request was sent: its batch (None while only its submission is known) and
    line, with when its submission was journaled and how many lines it held."""

    submission: str
    batch_id: str | None
    custom_id: str
    submitted_at: str = ""
    lines: int = 0


class BatchJournal:
    """A folder's ``batches.jsonl``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def submitting(
        self, key: str, requests: dict[str, tuple[str, str]], named: str = KEYS[0]
    ) -> None:
        """Before the batch is made: its submission's key, and each line's run and digest."""
        held = {custom_id: list(pair) for custom_id, pair in requests.items()}
        self._append({"state": "submitting", named: key,
                      "requests": held, "submitted_at": _now()})  # fmt: skip

    def created(self, key: str, batch_id: str, named: str = KEYS[0]) -> None:
        self._append({"state": "created", named: key, "batch_id": batch_id, "at": _now()})

    def finished(self, batch_id: str, state: str) -> None:
        self._append({"state": state, "batch_id": batch_id, "at": _now()})

    def sent(self) -> dict[str, Journaled]:
        """Every request journaled, by digest: the latest batch holding each."""
        batches: dict[str, str | None] = {}
        submissions: list[tuple[str, dict[str, Any], str]] = []
        for entry in self._entries():
            key = next((k for name in KEYS if isinstance(k := entry.get(name), str)), None)
            if key is None:
                continue
            if entry.get("state") == "submitting" and isinstance(entry.get("requests"), dict):
                batches.setdefault(key, None)
                submissions.append((key, entry["requests"], str(entry.get("submitted_at", ""))))
            elif entry.get("state") == "created" and isinstance(entry.get("batch_id"), str):
                batches[key] = entry["batch_id"]
        found: dict[str, Journaled] = {}
        for key, requests, at in submissions:
            for custom_id, pair in requests.items():
                if isinstance(pair, list) and len(pair) == 2 and isinstance(pair[1], str):
                    found[pair[1]] = Journaled(key, batches[key], custom_id, at, len(requests))
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
