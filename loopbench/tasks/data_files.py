"""A task set's tasks from one data file: a CSV (the csv module) or a JSONL file, read row
by row; a JSON or YAML list, read whole; or a Parquet file (read by DuckDB).

Rows are read by their columns (``loopbench.tasks.rows``), unless their fields say they are Inspect
samples (``input``) or promptfoo tests (``vars``, ``assert``), read as those tools write
them (``loopbench.tasks.sample_formats``). A row's place is said as a line number (CSV, JSONL), an
item (JSON, YAML) or a row index from 0 (Parquet).

Every format is read within bounds: the file within ``MAX_INPUT_BYTES`` (a JSON or YAML
file, read whole, within less), at most ``MAX_ROWS`` rows, nesting and YAML aliases as
``loopbench.harness.structured`` bounds them. Given a ``limit`` (``run --limit N``), only the first
N rows are read: a JSONL or CSV file stops there, a Parquet file is asked for no more.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, closing
from dataclasses import replace
from itertools import chain, count, islice, zip_longest
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

from loopbench.graders.choice_or import plain_grader
from loopbench.graders.registry import GRADERS
from loopbench.graders.task_models import TaskBase, TaskSetError
from loopbench.harness.files import MAX_INPUT_BYTES, input_errors, open_bounded, read_text
from loopbench.harness.structured import StructureError, load_json, load_yaml
from loopbench.tasks.presets import (
    PRESETS,
    headerless_mmlu,
    preset_named,
    preset_rows,
    recognised,
    squad_document_rows,
)
from loopbench.tasks.promptfoo_config import config_rows
from loopbench.tasks.rows import Columns, Row, tasks_from_rows
from loopbench.tasks.sample_formats import (
    MIXED_GRADER,
    inspect_rows,
    is_inspect,
    is_promptfoo,
    promptfoo_rows,
)

#: The grader of a data file's plain rows unless another is named: SQuAD's exact match of
#: the final answer, which reads a text answer as a reader would (a number too); rows with
#: a ``choices`` column are graded by ``choice``.
DEFAULT_GRADER = "em"
SUFFIXES = (".csv", ".jsonl", ".json", ".parquet", ".yaml", ".yml")
EXAMPLE = "a header row naming question, answer and id (or columns mapped to them)"
#: The most rows read from a data file: a larger one is run in parts (``--limit``), so that
#: every command ends in seconds and within memory.
MAX_ROWS = 50_000
#: The most cells a line of a CSV file may hold.
MAX_CELLS = 10_000
#: The largest JSON or YAML file of tasks: read whole (not row by row), as a document.
MAX_DOCUMENT_BYTES = {".json": 8 * 2**20, ".yaml": 2**20, ".yml": 2**20}
#: The longest line of a JSONL file.
MAX_LINE_BYTES = 32 * 2**20


class DataTasks(NamedTuple):
    tasks: list[TaskBase]
    grader: str
    """The grader reading them: the one named, else the format's."""
    more: bool
    """Read with a limit, and the file holds rows past it (neither read nor checked)."""
    mapping: str = "columns"
    """What the rows were read as: a preset's name (``gsm8k``), ``inspect``, ``promptfoo``,
    or ``columns`` (the columns named, else ``question``, ``answer`` and ``id``)."""
    plain: str | None = None
    """Graded by ``choice_or``: the grader of the rows without choices, its option ``plain``."""


def is_data_file(path: Path) -> bool:
    return path.suffix.lower() in SUFFIXES and not path.is_dir()


def data_tasks(
    path: Path,
    columns: Columns,
    grader: str | None,
    limit: int | None = None,
    preset: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> DataTasks:
    """The file's tasks (its first ``limit``, when given), and the grader reading them:
    ``grader``, else its format's. ``preset`` names the dataset the file is (``gsm8k``);
    else a file none of whose columns is mapped is read as the dataset its columns say,
    if any (``loopbench.tasks.presets``). Inspect samples mixing choices and none are graded by
    ``choice_or``, the grader named (else ``em``) grading those without choices; the
    grader's ``options`` name that grader when it is ``choice_or`` itself."""
    named = preset_named(preset) if preset is not None else None
    # guard: preset-with-mapped-columns-refused
    if named is not None and columns.maps_any:
        raise TaskSetError(
            f"--preset {named.name}: reads the file's own columns ({named.shape}); drop "
            "--question/--answer/--choices (or taskset.toml's [columns]), or the preset"
        )
    headerless = named is PRESETS["mmlu"] or (named is None and not columns.maps_any)
    rows, more = _read_rows(path, limit, headerless)
    if not rows:
        raise TaskSetError(f"{path}: holds no rows; expected {EXAMPLE}")
    if named is None and not columns.maps_any and not _other_tool(rows[0], columns):
        named = recognised(rows[0])
    mapping = "columns"
    if named is not None:
        rows, columns = preset_rows(named, rows, columns)
        default, mapping = named.grader, named.name
    elif is_promptfoo(rows[0]):
        rows, columns, default = promptfoo_rows(rows, columns)
        mapping = "promptfoo"
    elif is_inspect(rows[0], columns):
        rows, columns, default = inspect_rows(rows)
        mapping = "inspect"
    elif "choices" in columns.extras or "choices" in rows[0].values:
        # Options in a row make it a multiple-choice question, as Inspect reads its samples.
        columns = replace(columns, extras={"choices": "choices", **columns.extras})
        default = "choice"
    else:
        default = DEFAULT_GRADER
    if mapping == "columns" and not columns.maps_any:
        known = ", ".join(PRESETS)
        columns = replace(columns, also=f", or name the dataset with --preset NAME ({known})")
    name = grader or default
    plain = None
    if default == MIXED_GRADER and name == "choice":  # a sample without choices refused
        columns = replace(columns, extras={"choices": "choices", **columns.extras})
    elif default == MIXED_GRADER and name != MIXED_GRADER:
        # Samples with choices stay choice questions; the grader named grades the others.
        name, plain = MIXED_GRADER, name
    if name == MIXED_GRADER:
        plain = plain or plain_grader(options or {})[0].name
        choice = GRADERS.lookup("choice")
        tasks = tasks_from_rows(rows, columns, GRADERS.lookup(plain), choice)
        return DataTasks(tasks, name, more, mapping, plain)
    tasks = tasks_from_rows(rows, columns, GRADERS.lookup(name))
    return DataTasks(tasks, name, more, mapping)


def _other_tool(row: Row, columns: Columns) -> bool:
    """Whether ``row`` is another tool's sample (promptfoo's, Inspect's), read as such."""
    return is_promptfoo(row) or is_inspect(row, columns)


def _read_rows(path: Path, limit: int | None, headerless: bool) -> tuple[list[Row], bool]:
    """The first ``limit`` rows (else all, up to ``MAX_ROWS``), and whether more follow; a
    CSV whose first row is MMLU's data read without a header when ``headerless``."""
    # guard: limit-stops-csv-or-jsonl
    wanted = min(limit or MAX_ROWS, MAX_ROWS)
    suffix = path.suffix.lower()
    expected = f"a {suffix[1:].upper()} file of tasks"
    if suffix == ".parquet":
        rows = _parquet_rows(path, wanted + 1)
    elif suffix in (".csv", ".jsonl"):
        with ExitStack() as stack:
            with input_errors(path, TaskSetError, expected):
                handle = stack.enter_context(open_bounded(path))
            read = (
                _csv_rows(path, handle, headerless)
                if suffix == ".csv"
                else _jsonl_rows(path, handle)
            )
            rows = list(islice(stack.enter_context(closing(read)), wanted + 1))
    else:
        rows = list(islice(_list_rows(path, expected), wanted + 1))
    if len(rows) <= wanted:
        return rows, False
    # guard: data-file-more-rows-than
    if limit is None or limit > MAX_ROWS:
        raise _too_many(path)
    return rows[:wanted], True


def _too_many(path: Path) -> TaskSetError:
    return TaskSetError(
        f"{path}: holds more than {MAX_ROWS:,} rows, more than are read at once; run "
        f"the first N (up to {MAX_ROWS:,}) with --limit N, or split the file"
    )


def _csv_rows(path: Path, handle: BinaryIO, headerless: bool) -> Generator[Row, None, None]:
    """The rows, by the header's names; MMLU's files, which have none, by MMLU's columns
    (``question``, ``A``... ``answer``) when ``headerless`` and the first row is its data."""
    text = io.TextIOWrapper(handle, encoding="utf-8-sig", newline="")
    reader = csv.reader(_lines_of_few_cells(path, text))
    number = 0
    try:
        with text:
            first = next(reader, [])
            names = (headerless_mmlu(first) if headerless else None) or first
            _check_header(path, names)
            for cells in chain([first] if names is not first else [], reader):
                if not cells:
                    continue  # a blank line, as csv.DictReader skips it
                extra = cells[len(names) :]
                # guard: readers-csv-row-cells-past
                if any(cell.strip() for cell in extra):
                    raise TaskSetError(
                        f"{path}:{reader.line_num}: holds {len(cells)} cells, but "
                        f"the header names {len(names)} columns; quote a cell that holds a "
                        'comma ("What is 1,000 + 1?")'
                    )
                number += 1
                record = dict(zip_longest(names, cells[: len(names)]))
                yield Row(f"{path}:{reader.line_num}", number, record)
    except csv.Error as exc:
        raise TaskSetError(f"{path}:{reader.line_num}: not CSV ({exc})") from None
    except UnicodeDecodeError:
        raise TaskSetError(f"{_not_utf8(path)}; save the file as UTF-8") from None


def _lines_of_few_cells(path: Path, text: Iterable[str]) -> Iterator[str]:
    """``text``'s lines, a line with more than ``MAX_CELLS`` commas refused before the csv
    module makes a list of its cells (a 100 MB line of commas took 1.5 GB)."""
    for number, line in enumerate(text, start=1):
        # guard: readers-csv-line-too-many
        if line.count(",") >= MAX_CELLS:
            raise TaskSetError(
                f"{path}:{number}: holds more than {MAX_CELLS:,} cells; expected a row of the "
                "header's columns"
            )
        yield line


def _not_utf8(path: Path) -> str:
    """Where the first byte that is not UTF-8 is, read again line by line to say it."""
    with open_bounded(path) as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                return f"{path}:{number}: byte {raw[exc.start]:#04x} is not UTF-8"
    return f"{path}: not UTF-8 text"


def _check_header(path: Path, names: Sequence[str]) -> None:
    """A header naming a column twice, or holding a byte order mark (a file saved with
    two), is refused: either would hide a column."""
    seen: dict[str, int] = {}
    for number, name in enumerate(names, start=1):
        # guard: byte-order-mark-csv-header
        if "\ufeff" in name:
            raise TaskSetError(
                f"{path}:1: column {name!r} holds a byte order mark (U+FEFF; the file starts "
                "with two?); save the file as UTF-8 with at most one"
            )
        # guard: csv-header-naming-column-twice
        if name in seen:
            raise TaskSetError(
                f"{path}:1: column {name!r} is named twice in the header (columns "
                f"{seen[name]} and {number}); give each column its own name"
            )
        seen[name] = number


def _jsonl_rows(path: Path, handle: BinaryIO) -> Generator[Row, None, None]:
    number = 0
    for line_number in count(1):
        raw: bytes = handle.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        where = f"{path}:{line_number}"
        # guard: jsonl-line-over-cap-refused
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            raise TaskSetError(
                f"{where}: a line over {MAX_LINE_BYTES // 2**20} MiB; expected one task a line"
            )
        try:
            line = raw.decode("utf-8-sig" if line_number == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            raise TaskSetError(
                f"{where}: byte {raw[exc.start]:#04x} is not UTF-8; save the file as UTF-8"
            ) from None
        if line.strip():
            number += 1
            yield Row(where, number, _object(where, _json(where, line)))


def _list_rows(path: Path, expected: str) -> Iterator[Row]:
    """A JSON or YAML file: a list of objects, or SQuAD v1.1's document."""
    suffix = path.suffix.lower()
    cap = MAX_DOCUMENT_BYTES[suffix]
    large = path.is_file() and path.stat().st_size > cap  # refused before it is read
    # guard: json-file-tasks-over-cap
    if large or len(text := read_text(path, TaskSetError, expected)) > cap:
        raise TaskSetError(
            f"{path}: is larger than {cap // 2**20} MiB, more than a {suffix[1:].upper()} file "
            "of tasks is read whole; write it as JSONL (one task a line)"
        )
    if suffix == ".json":
        try:
            data = load_json(text)
        except StructureError as exc:
            raise TaskSetError(f"{path}{f':{exc.line}' if exc.line else ''}: {exc.why}") from None
    else:  # promptfoo's YAML test files
        try:
            data = load_yaml(text)
        except StructureError as exc:
            where = f"{path}:{exc.line}" if exc.line else str(path)
            raise TaskSetError(f"{where}: {exc.why}") from None
    if (squad := squad_document_rows(str(path), data)) is not None:
        return squad
    if isinstance(data, dict) and (suffix != ".json" or "tests" in data):
        return iter(config_rows(path, data, _tests_file_rows))
    if not isinstance(data, list):
        raise TaskSetError(
            f"{path}: holds a {type(data).__name__}; expected a list of objects (or SQuAD's "
            '{"data": [{"paragraphs": [...]}]})'
        )
    return (
        Row(f"{path}: item {n}", n, _object(f"{path}: item {n}", item))
        for n, item in enumerate(data, start=1)
    )


#: Rows fetched from DuckDB at a time, their text counted as it comes.
_BATCH = 1000


def _tests_file_rows(path: Path) -> list[Row]:
    """The tests of a file a promptfoo config names (``loopbench.tasks.promptfoo_config``)."""
    return _read_rows(path, None, False)[0]


def _parquet_rows(path: Path, most: int) -> list[Row]:
    """The first ``most`` rows, asked for in the query; the file within ``MAX_INPUT_BYTES``
    and the text of its cells too (a column stored once and repeated may unpack to more)."""
    import duckdb  # a dependency already, slow to import

    expected = "a Parquet file of tasks"
    # guard: parquet-file-over-input-cap
    with input_errors(path, TaskSetError, expected), open_bounded(path):
        pass  # refused as every reader refuses: a folder, a FIFO, a file too large
    rows: list[Row] = []
    text = 0
    try:
        with duckdb.connect() as db:
            db.execute(
                "SET memory_limit = '512MB'; SET threads = 1; SET enable_progress_bar = false"
            )
            if most > MAX_ROWS:  # counted from the file's metadata: refused unfetched
                counted = db.execute("SELECT count(*) FROM read_parquet(?)", [str(path)])
                # guard: parquet-file-too-many-rows
                if (found := counted.fetchone()) and found[0] > MAX_ROWS:
                    raise _too_many(path)
            # guard: limit-asked-duckdb
            query = f"SELECT * FROM read_parquet(?) LIMIT {int(most)}"
            result = db.execute(query, [str(path)])
            names = [column[0] for column in result.description or []]
            while batch := result.fetchmany(_BATCH):
                for record in batch:
                    text += sum(len(v) for v in record if isinstance(v, str | bytes))
                    i = len(rows)
                    rows.append(
                        Row(f"{path}: row index {i}", i + 1, dict(zip(names, record, strict=True)))
                    )
                # guard: parquet-cells-unpacking-past-cap
                if text > MAX_INPUT_BYTES:
                    raise TaskSetError(
                        f"{path}: its cells hold more than {MAX_INPUT_BYTES // 2**20} MiB of "
                        "text, more than a file of tasks is read for; split the file"
                    )
    except duckdb.Error as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise TaskSetError(f"{path}: not a Parquet file DuckDB reads ({first})") from None
    return rows


def _json(where: str, text: str) -> Any:
    try:
        return load_json(text)
    except StructureError as exc:
        raise TaskSetError(f"{where}: {exc.why}") from None


def _object(where: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TaskSetError(f"{where}: holds a {type(value).__name__}; expected an object")
    return value
