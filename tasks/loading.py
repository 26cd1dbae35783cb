"""Task sets by name or folder: the folders beside this package, HumanEval (read from its
package), Game of 24 (solved when asked for), and those plugins register
(``tasks.taskset_registry``)."""

from __future__ import annotations

from pathlib import Path

from tasks.game24 import game24_taskset
from tasks.humaneval import humaneval_taskset
from tasks.taskset import BUILTIN_DIR, TaskSet, read_taskset
from tasks.taskset_registry import TASKSETS, UnknownTaskSet, register_taskset

register_taskset("humaneval", humaneval_taskset)
register_taskset("game24", game24_taskset)


def builtin_names() -> list[str]:
    """The sets ``--tasks`` takes by name: folders beside this file, HumanEval, plugins'."""
    folders = (p.parent.name for p in BUILTIN_DIR.glob("*/taskset.toml"))
    return sorted({*folders, *TASKSETS.registered()})


def load_taskset(spec: str | Path) -> TaskSet:
    folder = Path(spec)
    if not folder.is_dir():
        source = TASKSETS.registered().get(str(spec)) if isinstance(spec, str) else None
        if callable(source):
            return source()
        if source is not None:
            folder = Path(source)
        elif isinstance(spec, str) and (BUILTIN_DIR / spec / "taskset.toml").is_file():
            folder = BUILTIN_DIR / spec
        else:
            raise UnknownTaskSet(
                f"no task set {str(spec)!r}: give a built-in name ({', '.join(builtin_names())}) "
                "or a folder holding tasks.jsonl and taskset.toml"
            )
    return read_taskset(folder)
