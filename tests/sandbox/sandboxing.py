"""What the sandbox tests share: short limits, a one-call run, and a record of the processes
and cgroups the runs of one test started, so that a test looks only at what it started
(other work on this machine grades code too)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from loopbench.sandbox import run as sandbox_run
from loopbench.sandbox.box import Box
from loopbench.sandbox.limits import Limits
from loopbench.sandbox.processes import Claim
from loopbench.sandbox.run import Sandbox, Suite
from loopbench.sandbox.suite_result import SuiteResult

FAST = Limits(timeout_s=2.0, memory_mb=256)
#: How much later than its wall clock a run may return on a loaded machine (the status says
#: what ended it; this only catches a run that is not ended at all).
SLACK_S = 10.0
ONE_TEST = "def test_it(candidate):\n    assert candidate() == 'ok'\n"


def run(sandbox: Sandbox, code: str, suite: str = ONE_TEST, **kw: str) -> SuiteResult:
    name = kw.pop("name", "heldout")
    return sandbox.run_sync(code, Suite(name, suite, kw.pop("entry", "f"), **kw))


def live_processes_of(uid: int) -> list[int]:
    """The live processes of a uid. Called only while a run holds that uid, when no process
    of it can be another's."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        uid_field, state = fields.get("Uid", "").split(), fields.get("State", "").strip()
        if uid_field and int(uid_field[0]) == uid and not state.startswith(("Z", "X")):
            found.append(int(entry.name))
    return found


class Started:
    """What the sandbox runs of one test started: each process (and whether it was reaped),
    each box (and whether its cgroups were removed, which needs them empty) and, as root, any
    process of a run's own uid still alive as the run ended, looked for while the run still
    held that uid."""

    def __init__(self, monkeypatch: Any) -> None:
        self.processes: list[Any] = []
        self.boxes: list[Box] = []
        self.left: list[int] = []
        start, make, claim = Sandbox._start, Box.make.__func__, sandbox_run.own_uid  # type: ignore[attr-defined]

        def recording_start(sandbox: Sandbox, *args: Any, **kwargs: Any) -> Any:
            started = start(sandbox, *args, **kwargs)
            self.processes.append(started.proc)
            return started

        def recording_make(cls: type[Box], *args: Any) -> Box | None:
            box = make(cls, *args)
            if box is not None:
                self.boxes.append(box)
            return box

        @contextlib.contextmanager
        def watched_uid() -> Iterator[Claim]:
            with claim() as held:
                try:
                    yield held
                finally:  # however the run ended: cancelled too
                    if held.uid is not None:
                        self.left += live_processes_of(held.uid)

        monkeypatch.setattr(Sandbox, "_start", recording_start)
        monkeypatch.setattr(Box, "make", classmethod(recording_make))
        monkeypatch.setattr(sandbox_run, "own_uid", watched_uid)

    def assert_all_ended(self) -> None:
        """Every process the runs started was reaped; no process of their uids outlived them;
        every box they made is gone (a cgroup is removed only once empty)."""
        assert self.processes, "no run started a process"
        assert [p.pid for p in self.processes if p.returncode is None] == []
        assert self.left == []
        assert [b.dirs for b in self.boxes if any(d.exists() for d in b.dirs)] == []


def as_root() -> bool:
    return os.geteuid() == 0
