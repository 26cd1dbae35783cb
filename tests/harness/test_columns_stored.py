"""The sidecar's file read as data: a sidecar whose key agrees with runs.jsonl but whose
columns are not as its manifest says (a member compressed or too large, a code beyond its
values, a text cut beyond itself, a pickled array, a column of another length) is never
taken: the columns come from runs.jsonl and the sidecar is written again."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pandas.testing import assert_frame_equal

from loopbench.harness.results import columns_sidecar
from loopbench.harness.results.columns import read_frames
from loopbench.harness.results.columns_sidecar import SIDECAR, fresh_sidecar
from loopbench.harness.results.columns_stored import Damaged, Stored
from loopbench.harness.results.frames import records_frame
from loopbench.harness.results.reading import read_records

from .test_columns import PRICINGS, folder
from .test_columns_sidecar import LAZY, assert_same_as_records, json_query_refused, lines

Array = np.ndarray[Any, Any]
Members = dict[str, tuple[Array, int]]
"""Each member's array and how it is stored (``zipfile.ZIP_STORED`` or another)."""


@pytest.fixture(autouse=True)
def every_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(columns_sidecar, "SIDECAR_FROM", 0)


def members_of(sidecar: Path) -> tuple[dict[str, Any], Members]:
    """The manifest and every member of ``sidecar`` as written."""
    found: Members = {}
    with zipfile.ZipFile(sidecar) as archive:
        for info in archive.infolist():
            with archive.open(info) as handle:
                array = np.lib.format.read_array(handle, allow_pickle=True)
            found[info.filename] = (array, info.compress_type)
    manifest = json.loads(found["manifest.npy"][0].tobytes())
    return manifest, found


def rewritten(sidecar: Path, members: Members, raw: dict[str, bytes] | None = None) -> None:
    """``sidecar`` written again with ``members`` (and the bytes of those in ``raw``)."""
    sidecar.unlink()
    with zipfile.ZipFile(sidecar, "w") as archive:
        for name, (array, stored) in members.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = stored
            archive.writestr(info, (raw or {}).get(name) or _npy(array))


def _npy(array: Array) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, allow_pickle=True)
    return buffer.getvalue()


def assert_same_without(path: Path, drop: list[str]) -> None:
    runs = records_frame(read_records(path), PRICINGS[0]).drop(columns=drop)
    assert_frame_equal(read_frames(path, PRICINGS[0], drop=drop)[0], runs)


def member(manifest: dict[str, Any], column: str, part: str) -> str:
    return f"{manifest['columns'][column]['at']}.{part}.npy"


def compressed_other_costs(manifest: dict[str, Any], members: Members) -> None:
    """Other costs, stored compressed: a reader taking them would show them."""
    name = member(manifest, "cost_usd", "data")
    members[name] = (members[name][0] + 1.0, zipfile.ZIP_DEFLATED)


def another_model_past_the_limit(manifest: dict[str, Any], members: Members) -> None:
    """Every run's model made one value longer than the limit (twice runs.jsonl, and a MiB)."""
    members[member(manifest, "model", "codes")] = (
        np.zeros(len(members[member(manifest, "model", "codes")][0]), dtype=np.uint8),
        zipfile.ZIP_STORED,
    )
    long = "m" * (3 << 20)
    text = np.frombuffer((long + "\x00").encode(), dtype=np.uint8)
    members[member(manifest, "model", "text")] = (text, zipfile.ZIP_STORED)
    members[member(manifest, "model", "ends")] = (np.array([len(long)]), zipfile.ZIP_STORED)
    manifest["columns"]["model"]["values"] = 1


def a_code_beyond_the_values(manifest: dict[str, Any], members: Members) -> None:
    name = member(manifest, "arm", "codes")
    codes = members[name][0].astype(np.int32)
    codes[3] = -1  # the last value, were it taken
    members[name] = (codes, zipfile.ZIP_STORED)


def run_ids_cut_beyond_their_text(manifest: dict[str, Any], members: Members) -> None:
    """The run ids' ends shifted: each cut would take the next one's first character."""
    name = member(manifest, "run_id", "ends")
    members[name] = (members[name][0] + 1, zipfile.ZIP_STORED)


def a_pickled_column(manifest: dict[str, Any], members: Members) -> None:
    name = member(manifest, "turns", "data")
    members[name] = (members[name][0].astype(object), zipfile.ZIP_STORED)


def a_short_column(manifest: dict[str, Any], members: Members) -> None:
    name = member(manifest, "tokens_in", "data")
    members[name] = (members[name][0][:-1], zipfile.ZIP_STORED)


def a_dtype_not_a_number(manifest: dict[str, Any], members: Members) -> None:
    manifest["columns"]["turns"]["dtype"] = "datetime64[ns]"


@pytest.mark.parametrize(
    "tamper",
    [
        compressed_other_costs,
        another_model_past_the_limit,
        a_code_beyond_the_values,
        run_ids_cut_beyond_their_text,
        a_pickled_column,
        a_short_column,
        a_dtype_not_a_number,
    ],
)
def test_a_sidecar_not_as_its_manifest_says_is_not_taken_and_is_written_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tamper: Callable[..., None]
) -> None:
    path = folder(tmp_path, lines(40))
    read_frames(path)
    sidecar = path / SIDECAR
    manifest, members = members_of(sidecar)
    tamper(manifest, members)
    text = np.frombuffer(json.dumps(manifest).encode(), dtype=np.uint8)
    members["manifest.npy"] = (text, zipfile.ZIP_STORED)
    rewritten(sidecar, members)
    assert fresh_sidecar(path / "runs.jsonl") == sidecar  # its key still agrees
    assert_same_without(path, LAZY)  # run ids fetched for the rows superseding compares
    rewritten(sidecar, members)
    assert_same_as_records(path)
    json_query_refused(monkeypatch)  # written again: read from it alone
    assert_same_as_records(path)


def test_a_member_past_the_limit_is_refused_unread(tmp_path: Path) -> None:
    path = folder(tmp_path, lines(40))
    read_frames(path)
    with Stored(path / SIDECAR, limit=1 << 30) as stored:
        assert len(stored.number("turns")) == stored.rows
    with Stored(path / SIDECAR, limit=1 << 30) as stored:
        stored.limit = 8
        with pytest.raises(Damaged, match="over 8 bytes"):
            stored.number("turns")


def test_values_holding_a_nul_are_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A value's text ends at a NUL in the sidecar; a value holding one is cut at its end
    instead, shared or not."""
    made = lines(36)
    for number, line in enumerate(made[:12]):
        if isinstance(line, dict):
            line["grade_reason"] = f"a\x00b {number}"
            line["started_at"] = f"2026-12-07T00:00:{number:02d}\x00+00:00"
    path = folder(tmp_path, made)
    read_frames(path)
    assert fresh_sidecar(path / "runs.jsonl") is not None
    json_query_refused(monkeypatch)
    assert_same_as_records(path)
    assert_same_without(path, LAZY)


def test_an_array_declared_larger_than_its_member_is_refused_before_it_is_made(
    tmp_path: Path,
) -> None:
    """An .npy header saying a trillion values, over a few bytes: refused from the header,
    nothing of that size asked of the memory."""
    path = folder(tmp_path, lines(40))
    read_frames(path)
    sidecar = path / SIDECAR
    manifest, members = members_of(sidecar)
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<i8", "fortran_order": False, "shape": (10**12,)}
    )
    rewritten(sidecar, members, {member(manifest, "turns", "data"): header.getvalue() + bytes(64)})
    with Stored(sidecar, limit=1 << 30) as stored, pytest.raises(Damaged, match="in 1"):
        stored.number("turns")
