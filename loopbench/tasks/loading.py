"""Task sets by name, folder or data file: the folders beside this package, HumanEval (read
from its package), Game of 24 (solved when asked for), those plugins register
(``loopbench.tasks.taskset_registry``), and a CSV, JSONL, Parquet, Inspect or promptfoo file
(``loopbench.tasks.data_files``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from loopbench.graders.registry import GRADERS, parse_grader_spec
from loopbench.tasks.data_files import is_data_file
from loopbench.tasks.game24 import game24_taskset
from loopbench.tasks.humaneval import humaneval_taskset
from loopbench.tasks.presets import preset_named
from loopbench.tasks.taskset import (
    BUILTIN_DIR,
    TaskSet,
    TaskSetError,
    checked_options,
    data_taskset,
    read_taskset,
)
from loopbench.tasks.taskset_registry import TASKSETS, UnknownTaskSet, register_taskset

register_taskset("humaneval", humaneval_taskset)
register_taskset("game24", game24_taskset)


def builtin_names() -> list[str]:
    """The sets ``--tasks`` takes by name: folders beside this file, HumanEval, plugins'."""
    folders = (p.parent.name for p in BUILTIN_DIR.glob("*/taskset.toml"))
    return sorted({*folders, *TASKSETS.registered()})


def load_taskset(
    spec: str | Path,
    grader: str | None = None,
    columns: Mapping[str, str] | None = None,
    limit: int | None = None,
    preset: str | None = None,
) -> TaskSet:
    """The task set ``spec`` names: a built-in or plugin's name, a folder, or a data file
    (``data.csv``, ``data.jsonl``, ``data.parquet``, an Inspect or promptfoo file).
    ``grader`` (``NAME`` or ``NAME:K=V,...``) grades it instead of its own grader; a data
    file's ``columns`` say which column holds the question, answer, id and choices,
    ``preset`` which dataset it is (``gsm8k``, ``mmlu``, ...: ``loopbench.tasks.presets``), and
    ``limit`` how many of its rows to read (the first N: ``run --limit N``); a set of
    another kind is read whole."""
    if preset is not None:
        # guard: unknown-preset-refused-before-folder
        preset_named(preset)  # an unknown name refused before anything is read
    folder = Path(spec)
    if is_data_file(folder):
        return data_taskset(folder, grader, columns, limit, preset)
    if folder.name == "taskset.toml" and folder.is_file():
        folder = folder.parent
    if not folder.is_dir():
        source = TASKSETS.registered().get(str(spec)) if isinstance(spec, str) else None
        if callable(source):
            return _regraded(source(), grader, {**(columns or {}), **_preset(preset)})
        if source is not None:
            folder = Path(source)
        elif isinstance(spec, str) and (BUILTIN_DIR / spec / "taskset.toml").is_file():
            folder = BUILTIN_DIR / spec
        else:
            raise UnknownTaskSet(
                f"no task set {str(spec)!r}: give a built-in name ({', '.join(builtin_names())}), "
                "a folder holding tasks.jsonl and taskset.toml, or a data file ("
                "CSV, JSONL, Parquet, Inspect or promptfoo; docs/tasksets.md)"
            )
    return read_taskset(folder, grader, columns, limit, preset)


def _preset(preset: str | None) -> dict[str, str]:
    """A preset named for a set a function made: refused as a column mapping is."""
    return {} if preset is None else {"preset": preset}


def _regraded(taskset: TaskSet, grader: str | None, columns: Mapping[str, str] | None) -> TaskSet:
    """A set a function made, graded by ``grader``: one reading the same tasks."""
    if columns:
        raise TaskSetError(
            f"task set {taskset.name!r} is not a data file: it has no columns to map "
            "(--question, --answer, --id, --choices, --preset)"
        )
    if grader is None:
        return taskset
    name, options = parse_grader_spec(grader)
    if GRADERS.lookup(name).task_model is not GRADERS.lookup(taskset.grader).task_model:
        raise TaskSetError(
            f"--grader {grader!r}: task set {taskset.name!r} is made with {taskset.grader}'s "
            f"tasks, which {name} does not read; give a grader reading them"
        )
    return checked_options(replace(taskset, grader=name, grader_options=options))
