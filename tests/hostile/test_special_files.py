"""A FIFO, a link to a FIFO, to /dev/zero or to /dev/null, or a socket, given where an input
file should be (every place of ``tests/hostile/special_inputs.py``): refused in one line,
``Error: FILE: is a FIFO (named pipe), not a regular file; ...``, with exit code 2, before
anything is read from it. Nothing hangs and nothing reads without end.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from loopbench.harness.files import (
    MAX_INPUT_BYTES,
    NotAnInputFile,
    read_bounded,
    read_text,
    special_file_problem,
)
from tests.hostile.special_inputs import (
    CASES,
    KINDS,
    Case,
    Refusal,
    fixtures,
    make_special,
    prepare,
    refuse,
)


@pytest.fixture(scope="module")
def refusals() -> Iterator[dict[str, Refusal]]:
    """Every case's command and what it did, two at a time (each starts Python)."""
    with fixtures() as root:
        folders = {case.id: prepare(root, case) for case in CASES}
        with ThreadPoolExecutor(max_workers=2) as pool:
            done = pool.map(lambda case: refuse(folders[case.id], case), CASES)
            yield dict(zip([case.id for case in CASES], done, strict=True))


def _shown(refusal: Refusal) -> str:
    return f"exit {refusal.returncode} after {refusal.seconds:.1f} s\nstderr: {refusal.stderr}"


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_a_special_file_where_an_input_should_be_is_refused_with_exit_2_naming_it(
    refusals: dict[str, Refusal], case: Case
) -> None:
    refusal = refusals[case.id]
    assert not refusal.hung, f"hung reading it\n{_shown(refusal)}"
    assert refusal.returncode == 2, _shown(refusal)
    assert "Traceback" not in refusal.stderr, _shown(refusal)
    said = refusal.stderr.strip().splitlines()[-1]
    assert said.startswith("Error: "), _shown(refusal)
    assert (case.position.named or Path(case.position.target).name) in said, _shown(refusal)
    if case.position.says_kind:
        assert KINDS[case.kind] in said, _shown(refusal)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_the_refusal_of_a_special_file_is_the_only_line_on_stderr(
    refusals: dict[str, Refusal], case: Case
) -> None:
    refusal = refusals[case.id]
    assert len(refusal.stderr.splitlines()) == 1, _shown(refusal)


@pytest.mark.parametrize("kind", KINDS)
def test_a_special_file_is_named_for_what_it_is_without_being_opened(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "input"
    make_special(path, kind, tmp_path / "linked.fifo")
    assert special_file_problem(path) == f"is {_article(KINDS[kind])}, not a regular file"
    with pytest.raises(NotAnInputFile):
        read_bounded(path)


def _article(word: str) -> str:
    return {"FIFO": "a FIFO (named pipe)", "device": "a device", "socket": "a socket"}[word]


def test_a_regular_file_a_folder_and_a_missing_file_are_left_to_the_reader(
    tmp_path: Path,
) -> None:
    (tmp_path / "file").write_text("x")
    for path in (tmp_path / "file", tmp_path, tmp_path / "missing"):
        assert special_file_problem(path) is None
    assert read_bounded(tmp_path / "file") == b"x"
    with pytest.raises(IsADirectoryError):
        read_bounded(tmp_path)
    with pytest.raises(FileNotFoundError):
        read_bounded(tmp_path / "missing")


def test_a_file_over_the_bound_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    with path.open("wb") as handle:
        handle.truncate(MAX_INPUT_BYTES + 1)  # sparse: no disk, and never read
    with pytest.raises(NotAnInputFile, match=r"larger than 256 MiB"):
        read_bounded(path)
    with pytest.raises(ValueError, match=r"big.jsonl: is larger than 256 MiB.*; expected x"):
        read_text(path, ValueError, "x")


def test_a_file_at_the_bound_is_read_and_one_byte_more_refused(tmp_path: Path) -> None:
    path = tmp_path / "small"
    path.write_bytes(b"12345")
    assert read_bounded(path, limit=5) == b"12345"
    path.write_bytes(b"123456")
    with pytest.raises(NotAnInputFile, match=r"larger than 5 bytes"):
        read_bounded(path, limit=5)
