"""The prompt texts an arm overrode, stored once per results folder.

An arm's ``prompts`` (text by slot; a pipeline stage's too) can be a 1 MiB prompt file:
copied into every record, it would make runs.jsonl thousands of times that. The writer
stores each distinct prompts dict once, as ``prompts/<sha256>.json`` beside runs.jsonl
(the SHA-256 of the file's bytes names it), and the record holds a reference in its place:
``options.prompts = {"$ref": "prompts/<sha256>.json"}``. No slot is named ``$ref``, so a
reference is never a prompts dict. Every reader puts the texts back (``restored``), so a
record reads as it did when the texts were inline, as they still are in older folders.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections import OrderedDict
from pathlib import Path
from typing import Any

from loopbench.harness.files import read_bounded, special_file_problem
from loopbench.harness.redaction import redact
from loopbench.harness.results.errors import ResultsError
from loopbench.harness.valid_text import valid_value

FOLDER = "prompts"
REF = "$ref"
PROMPTS = "prompts"
#: What a reference names: a file in the folder's prompts/, by its SHA-256; nothing else.
# guard: prompts-reference-names-file-prompts
_NAME = re.compile(r"prompts/([0-9a-f]{64})\.json")
#: Prompts files kept read, by path: a folder's few distinct prompts, read once a process.
_READ: OrderedDict[str, dict[str, str]] = OrderedDict()
_KEPT = 32


def is_ref(value: Any) -> bool:
    """Whether an options ``prompts`` value is a reference, not the texts."""
    return isinstance(value, dict) and REF in value


def referenced(options: dict[str, Any], folder: Path, written: set[str]) -> dict[str, Any]:
    """``options`` with its prompts (and each stage's) stored in ``folder``/prompts/ and
    referenced; ``written`` holds the names this writer has stored, so each is written once.
    The same dict when it holds no prompts."""
    stages = options.get("stages")
    has_stage_prompts = isinstance(stages, list) and any(
        isinstance(s, dict) and isinstance(s.get(PROMPTS), dict) for s in stages
    )
    if not isinstance(options.get(PROMPTS), dict) and not has_stage_prompts:
        return options
    out = dict(options)
    if isinstance(options.get(PROMPTS), dict) and not is_ref(options[PROMPTS]):
        out[PROMPTS] = {REF: _stored(options[PROMPTS], folder, written)}
    if has_stage_prompts:
        assert isinstance(stages, list)
        out["stages"] = [
            referenced(s, folder, written) if isinstance(s, dict) else s for s in stages
        ]
    return out


def _stored(prompts: dict[str, Any], folder: Path, written: set[str]) -> str:
    """The reference to ``prompts`` stored in ``folder``: written once, atomically (a temp
    file renamed), so a reader never sees half of it."""
    data = redact(json.dumps(valid_value(prompts)[0], ensure_ascii=False, sort_keys=True))
    body = (data + "\n").encode("utf-8")
    name = f"{FOLDER}/{hashlib.sha256(body).hexdigest()}.json"
    if name in written:
        return name
    target = folder / name
    if not target.is_file():
        target.parent.mkdir(exist_ok=True)
        handle, temp = tempfile.mkstemp(dir=target.parent, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(body)
            os.replace(temp, target)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
    written.add(name)
    return name


def restored(options: dict[str, Any], folder: Path) -> dict[str, Any]:
    """``options`` with every prompts reference (its own, its stages') replaced by the texts
    its file in ``folder`` holds; the same dict when it holds none. ``ResultsError``, one
    line naming the file, when a reference or its file cannot be read."""
    stages = options.get("stages")
    staged = isinstance(stages, list) and any(
        isinstance(s, dict) and is_ref(s.get(PROMPTS)) for s in stages
    )
    if not is_ref(options.get(PROMPTS)) and not staged:
        return options
    out = dict(options)
    if is_ref(options.get(PROMPTS)):
        out[PROMPTS] = _texts(options[PROMPTS], folder)
    if staged:
        assert isinstance(stages, list)
        out["stages"] = [restored(s, folder) if isinstance(s, dict) else s for s in stages]
    return out


def _texts(ref: dict[str, Any], folder: Path) -> dict[str, str]:
    name = ref.get(REF)
    match = _NAME.fullmatch(name) if isinstance(name, str) and len(ref) == 1 else None
    if match is None:
        shown = json.dumps(ref, ensure_ascii=True)[:200]
        raise ResultsError(
            f"{folder / 'runs.jsonl'}: a record's prompts reference {shown} is not "
            '{"$ref": "prompts/<sha256>.json"}; the folder is damaged'
        )
    path = folder / match.group(0)
    key = str(path.absolute())
    if key in _READ:
        _READ.move_to_end(key)
        return dict(_READ[key])  # each reader its own dict, the texts shared
    texts = _read(path, match.group(1))
    _READ[key] = texts
    if len(_READ) > _KEPT:
        _READ.popitem(last=False)
    return dict(texts)


def _read(path: Path, digest: str) -> dict[str, str]:
    """The prompts a folder's prompts file holds, checked against the hash naming it."""
    # guard: prompts-file-fifo-refused-before
    if problem := special_file_problem(path):
        raise ResultsError(f"{path}: {problem}; expected the prompt texts its runs reference")
    # guard: missing-prompts-file-says-copy
    if not path.is_file():
        raise ResultsError(
            f"{path}: no such file; the runs of this folder reference their prompt texts "
            "there (copy the folder's prompts/ with its runs.jsonl)"
        )
    try:
        body = read_bounded(path)
    except OSError as exc:
        raise ResultsError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    # guard: prompts-file-checked-against-hash
    if hashlib.sha256(body).hexdigest() != digest:
        raise ResultsError(f"{path}: its content does not match the hash naming it; it is damaged")
    try:
        data = json.loads(body.decode("utf-8"))
    # guard: prompts-file-not-json-named
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        raise ResultsError(f"{path}: not a JSON object of prompt texts by slot; it is damaged")
    return data
